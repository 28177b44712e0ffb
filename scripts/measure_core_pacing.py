#!/usr/bin/env python3
"""How much longer a step takes when its ranks run on separate cores of this host and meet: the machine file's
"core_pacing" (docs/scaling.md, "Ranks on separate cores: the pacing term").

    scripts/measure_core_pacing.py [--build DIR] [--data DIR] [--pairs K] [--steps S] [--write MACHINE_FILE]

The calibration times every layer on one rank while the other cores sleep, and that prices a one-rank step well.
Two ranks, one per core, each doing the same work, take longer: each core runs at its own speed, which moves from run
to run, and every time the ranks meet (a BatchNorm allreduce, a halo exchange, the gradient buckets) the earlier one
waits for the later. This script measures that against the same work on one rank with the other cores idle (the
calibration's condition), on the U-Net 64^3 (base 8, depth 3), one sample per rank, K times over (default 6), alternating:

  a. one one-rank run, alone: batch 1, grid 1x1x1x1;
  b. two independent one-rank runs at once, pinned to cores 0 and 1 (taskset): the same work with both cores busy
     but no meetings, to tell the busy neighbour core apart from the meetings;
  c. one two-rank run: batch 2, grid 2x1x1x1 (one sample per rank, BatchNorm statistics summed over both).

A run's step time is the median of its steps after the first. The pacing is the mean of the c runs over the mean of
the a runs, less 1 (the model's priced communication in c, the gradient allreduce, is about 0.2% of the step and is
not subtracted). Where it is negative (noise) it is recorded as 0. With --write, the figure and its source go into
the machine file's "core_pacing" key, every other key kept.
"""
import argparse
import datetime
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile


def step_time(metrics):
    rows = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    steps = [r["step_seconds"] for r in rows if r.get("phase") == "train"][1:]
    if len(steps) < 3:
        sys.exit(f"measure_core_pacing: {metrics} holds {len(steps)} steps after the first; need 3 or more")
    return statistics.median(steps)


def main():
    repo = pathlib.Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=pathlib.Path, default=repo / "build")
    parser.add_argument("--data", type=pathlib.Path, help="segmentation data, 64^3 (default: generated)")
    parser.add_argument("--pairs", type=int, default=6, help="alternations of a, b and c (default 6)")
    parser.add_argument("--steps", type=int, default=14, help="steps per run (default 14)")
    parser.add_argument("--write", type=pathlib.Path, help="machine file to record core_pacing in")
    args = parser.parse_args()
    if args.pairs < 1 or args.steps < 4:
        sys.exit("measure_core_pacing: --pairs must be at least 1 and --steps at least 4")
    if (os.cpu_count() or 1) < 2:
        sys.exit("measure_core_pacing: this host has one core; there is no pacing between cores to measure")
    if not shutil.which("taskset"):
        sys.exit("measure_core_pacing: needs taskset (util-linux) to pin the one-rank runs to cores 0 and 1")
    unet = args.build / "apps/unet3d/unet3d"
    if not unet.exists():
        sys.exit(f"measure_core_pacing: {unet} is missing: build first (cmake --build {args.build})")
    work = pathlib.Path(tempfile.mkdtemp(prefix="core_pacing."))
    data = args.data
    if data is None:
        data = work / "u64"
        subprocess.run([str(args.build / "apps/datagen/halo3d-datagen"), "segmentation", "--size", "64", "--count",
                        "4", "--out", str(data)], check=True, stdout=subprocess.DEVNULL)
    mpirun = ["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    model = [str(unet), "train", "--data", str(data), "--base", "8", "--depth", "3", "--steps", str(args.steps)]

    def run_at_once(*jobs):
        """Starts every (command, metrics file name) of `jobs` at once; when all have ended, each one's step time."""
        procs = [subprocess.Popen(cmd + ["--metrics", str(work / name)], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.STDOUT) for cmd, name in jobs]
        if any(p.wait() != 0 for p in procs):
            sys.exit(f"measure_core_pacing: a run failed (metrics in {work})")
        return [step_time(work / name) for _, name in jobs]

    one_rank = mpirun + ["--bind-to", "none", "-np", "1"] + model + ["--batch", "1", "--grid", "1x1x1x1"]
    two_ranks = mpirun + ["--bind-to", "core", "-np", "2"] + model + ["--batch", "2", "--grid", "2x1x1x1"]
    alone, pairs, doubles = [], [], []
    for k in range(args.pairs):
        [a] = run_at_once((one_rank, f"a{k}.jsonl"))
        pair = run_at_once(*((["taskset", "-c", str(c)] + one_rank, f"b{k}_{c}.jsonl") for c in (0, 1)))
        [c] = run_at_once((two_ranks, f"c{k}.jsonl"))
        alone.append(a)
        pairs += pair
        doubles.append(c)
        print(f"  {k + 1}/{args.pairs}: alone {a:.3f} s; pinned pair {pair[0]:.3f} / {pair[1]:.3f} s; "
              f"two ranks {c:.3f} s ({c / a - 1:+.1%} over alone)", flush=True)
    a, b, c = (statistics.mean(x) for x in (alone, pairs, doubles))
    measured = c / a - 1
    pacing = max(0.0, measured)
    print(f"core pacing: {measured:+.2%} (two ranks {c:.3f} s against {a:.3f} s alone; the pinned pairs "
          f"{b:.3f} s: {b / a - 1:+.1%} from the busy neighbour core, {c / b - 1:+.1%} from the meetings; "
          f"{args.pairs} alternations)")
    if args.write:
        machine = json.loads(args.write.read_text())
        stamp = datetime.date.today().isoformat()
        source = (f"measured {stamp} by scripts/measure_core_pacing.py --pairs {args.pairs} --steps {args.steps}: "
                  f"U-Net 64^3 (base 8, depth 3), one sample per rank; {args.pairs} two-rank runs (2x1x1x1, "
                  f"--bind-to core) took {c:.3f} s a step against {a:.3f} s for one-rank runs alone, alternated "
                  f"with them ({measured:+.2%}{', recorded as 0' if measured < 0 else ''}); one-rank runs pinned "
                  f"two at a time to cores 0 and 1 took {b:.3f} s")
        machine["core_pacing"] = {"fraction": round(pacing, 4), "source": source}
        tmp = args.write.with_suffix(args.write.suffix + ".tmp")
        tmp.write_text(json.dumps(machine, indent=1) + "\n")
        tmp.replace(args.write)
        print(f"recorded in {args.write}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
