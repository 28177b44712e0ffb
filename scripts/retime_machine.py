#!/usr/bin/env python3
"""Re-time a machine file's layer timings for the models of scripts/validate_model.sh, in several passes spread
over time, keeping per timing the median of the passes.

    scripts/retime_machine.py MACHINE [--passes 3] [--ranks 1,2,4,8] [--plan build/apps/plan/halo3d-plan]
                              [--layers PREFIX...] [--keep-passes DIR] [--from-passes FILE...] [--note TEXT]

Each pass runs `halo3d-plan --calibrate FILE --missing` for each model, one after the other, starting from a copy of
MACHINE that holds only its batch-read timings (halo3d-sweep times those on the validation data), so that the pass
times every layer those models run at --ranks. A timing of MACHINE whose key (layer, shapes, neighbours, threads)
some pass timed is replaced by the median of the passes' timings of that key, forward and backward separately; the
others are kept. MACHINE is rewritten in place, with --note (or a default sentence) added to its compute.source.

Why passes: on a shared virtual machine one core can run 20-30% slower than the other for minutes at a time
(docs/scaling.md). One pass times every layer once, back to back, so a stretch of slowness falls on whichever
layers it happened to time: in one pass, the U-Net's 2x2x1x1 layers summed to 900 ms where a pass a few minutes
later summed them to 823 ms. The median of passes a few minutes apart keeps each timing at the machine's usual
speed. --from-passes merges pass files written earlier (by --keep-passes) instead of timing.

--layers re-times only the timings whose layer name starts with one of the prefixes (after a kernel change,
e.g. --layers "Conv3d(4->"): each pass starts from MACHINE without those, so the layers around them keep their
timings and the step-order calibration runs with them in place.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

MODELS = [
    ["--model", "cosmoflow", "--input-size", "64", "--width", "0.25", "--batch", "2"],
    ["--model", "cosmoflow", "--input-size", "64", "--width", "0.25", "--batch", "4"],
    ["--model", "cosmoflow", "--input-size", "128", "--width", "0.25", "--batch", "2"],
    ["--model", "cosmoflow", "--input-size", "128", "--width", "0.25", "--batch", "4"],
    ["--model", "unet3d", "--input-size", "64", "--base", "8", "--depth", "3", "--batch", "2"],
]


def key(t):
    return json.dumps({k: v for k, v in t.items() if k not in ("forward_s", "backward_s")}, sort_keys=True)


def selected(args, t):
    """Whether timing t is one this run re-times."""
    if t["layer"].startswith("batch read"):
        return False
    return not args.layers or any(t["layer"].startswith(p) for p in args.layers)


def timed_pass(args, start, workdir, index):
    """One pass over MODELS; returns the path of its last file (which holds every timing of the pass)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    current = start
    for m, flags in enumerate(MODELS):
        out = workdir / f"pass{index}_{m + 1}.json"
        with open(workdir / f"pass{index}_{m + 1}.log", "w") as log:
            subprocess.run([args.plan, *flags, "--ranks", args.ranks, "--machine", str(current), "--calibrate",
                            str(out), "--missing"], check=True, stdout=log, stderr=subprocess.STDOUT, env=env)
        current = out
    return current


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("machine", type=pathlib.Path)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--ranks", default="1,2,4,8")
    parser.add_argument("--plan", default=str(pathlib.Path(__file__).resolve().parent.parent /
                                              "build/apps/plan/halo3d-plan"))
    parser.add_argument("--layers", nargs="+", help="re-time only the layers whose name starts with one of these")
    parser.add_argument("--keep-passes", type=pathlib.Path, help="write the passes' files here")
    parser.add_argument("--from-passes", type=pathlib.Path, nargs="+", help="merge these pass files; time nothing")
    parser.add_argument("--note", help="the sentence added to compute.source")
    args = parser.parse_args()
    if args.passes < 1:
        print("retime_machine: --passes must be at least 1", file=sys.stderr)
        return 2
    machine = json.loads(args.machine.read_text())
    if args.from_passes:
        pass_files = args.from_passes
    else:
        workdir = args.keep_passes or pathlib.Path(tempfile.mkdtemp(prefix="retime_machine."))
        workdir.mkdir(parents=True, exist_ok=True)
        start = workdir / "start.json"
        start.write_text(json.dumps(dict(machine, layers=[t for t in machine["layers"] if not selected(args, t)])))
        pass_files = []
        for p in range(args.passes):
            pass_files.append(timed_pass(args, start, workdir, p + 1))
            print(f"retime_machine: pass {p + 1} of {args.passes} done", flush=True)
    timings = {}
    for f in pass_files:
        for t in json.loads(pathlib.Path(f).read_text())["layers"]:
            if selected(args, t):
                timings.setdefault(key(t), []).append(t)
    replaced = 0
    layers = []
    for t in machine["layers"]:
        runs = timings.pop(key(t), None)
        if runs:
            t = dict(t, forward_s=statistics.median(r["forward_s"] for r in runs),
                     backward_s=statistics.median(r["backward_s"] for r in runs))
            replaced += 1
        layers.append(t)
    for runs in timings.values():
        layers.append(dict(runs[0], forward_s=statistics.median(r["forward_s"] for r in runs),
                           backward_s=statistics.median(r["backward_s"] for r in runs)))
    added = len(layers) - len(machine["layers"])
    machine["layers"] = layers
    which = f"the {', '.join(repr(p) for p in args.layers)} timings" if args.layers else "the timings"
    note = args.note or (f"{which} of the models of scripts/validate_model.sh at --ranks {args.ranks} re-timed "
                         f"as the median of {len(pass_files)} passes (scripts/retime_machine.py)")
    compute = machine.setdefault("compute", {})
    compute["source"] = (compute["source"] + "; " + note) if compute.get("source") else note
    args.machine.write_text(json.dumps(machine, indent=1) + "\n")
    print(f"retime_machine: {replaced} timings replaced, {added} added, "
          f"{len(layers) - replaced - added} kept, from {len(pass_files)} passes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
