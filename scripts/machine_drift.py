#!/usr/bin/env python3
"""How fast this machine runs now, against the calibration a machine file holds (scripts/validate_model.sh runs it
before and after each sweep).

    scripts/machine_drift.py MACHINE OUT [--plan build/apps/plan/halo3d-plan] [--repetitions 5]

It times the layers of one probe model (CosmoFlow 64^3, width 0.25, batch 2, one rank, one thread: about 0.2 s of
work) with halo3d-plan --calibrate, starting from MACHINE without its layer timings, so that only the probe's
layers are timed, and compares the sum of their times with the sum of MACHINE's timings of the same keys. It does
so on each core in turn (the process pinned to it): on a virtual machine one core can slow down while the other
keeps its speed. It writes OUT (JSON: when, per_core: [{core, probe_s, ratio}], calibrated_s, ratio = the slowest
core's, keys) and prints the ratios, slowest first: 1.00 is the machine as calibrated; 1.25 means the same kernels
now take 25% longer on that core, which predictions made with MACHINE miss by as much where ranks run there. The model predicts for the machine as calibrated; this tells a model error from a machine that changed
speed under the measurement (a shared or throttled virtual machine).
"""
import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile

PROBE = ["--model", "cosmoflow", "--input-size", "64", "--width", "0.25", "--batch", "2", "--ranks", "1",
         "--grid", "1x1x1x1", "--threads", "1"]


def key(t):
    return json.dumps({k: v for k, v in t.items() if k not in ("forward_s", "backward_s")}, sort_keys=True)


def probe(args, empty, core):
    """The probe's layer timings, timed by a process pinned to `core`."""
    with tempfile.TemporaryDirectory() as tmp:
        start = pathlib.Path(tmp) / "empty.json"
        out = pathlib.Path(tmp) / "probe.json"
        start.write_text(json.dumps(empty))
        env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
        subprocess.run([args.plan, *PROBE, "--machine", str(start), "--calibrate", str(out),
                        "--repetitions", str(args.repetitions)], check=True, stdout=subprocess.DEVNULL, env=env,
                       preexec_fn=lambda: os.sched_setaffinity(0, {core}))
        return json.loads(out.read_text())["layers"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("machine", type=pathlib.Path)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--plan", default=str(pathlib.Path(__file__).resolve().parent.parent /
                                              "build/apps/plan/halo3d-plan"))
    parser.add_argument("--repetitions", type=int, default=9)
    args = parser.parse_args()
    machine = json.loads(args.machine.read_text())
    calibrated = {key(t): t for t in machine.get("layers", [])}
    empty = dict(machine, layers=[])
    per_core = []
    for core in sorted(os.sched_getaffinity(0)):
        pairs = [(t, calibrated[key(t)]) for t in probe(args, empty, core) if key(t) in calibrated]
        probe_s = sum(t["forward_s"] + t["backward_s"] for t, _ in pairs)
        calibrated_s = sum(c["forward_s"] + c["backward_s"] for _, c in pairs)
        if calibrated_s <= 0:
            print(f"machine_drift: {args.machine} has none of the probe's timings", file=sys.stderr)
            return 1
        per_core.append({"core": core, "probe_s": probe_s, "ratio": probe_s / calibrated_s})
    slowest = max(per_core, key=lambda c: c["ratio"])
    result = {"when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "per_core": per_core, "calibrated_s": calibrated_s, "ratio": slowest["ratio"], "keys": len(pairs)}
    args.out.write_text(json.dumps(result) + "\n")
    print(" ".join(f"{c['ratio']:.2f}" for c in sorted(per_core, key=lambda c: -c["ratio"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
