#!/usr/bin/env python3
"""The performance model's accuracy from halo3d-sweep results (scripts/validate_model.sh).

    scripts/model_accuracy.py DIR [--json FILE]

DIR holds <config>/P<ranks>/sweep.jsonl. For each (config, P) it prints: the number of measured grids, the median
and worst |predicted - measured| / measured step time, the grid the model picks (the lowest predicted step time
among the measured grids: --grid auto's choice), the measured best, how much slower the pick measured than the
best, the worst |predicted - measured| / measured peak memory per rank, and how fast the machine ran against its
calibration just before and just after the sweep (scripts/machine_drift.py: 1.00 as calibrated, 1.25 the same
kernels 25% slower; "—" where not measured), and beside it the median error again with every prediction scaled
by the mean of those two readings: a diagnostic of how much of the error the machine's speed explains (the probe
reads the slowest core; a one-rank sweep may have run on the other). Exit status 0 whatever the figures.
"""
import argparse
import json
import pathlib
import statistics
import sys


def load(path):
    rows = []
    for line in path.read_text().splitlines():
        if line.strip():
            rows.append(json.loads(line))
    return rows


def summarise(rows, speed=None):
    measured = [r for r in rows if r.get("status") == "measured" and r.get("measured_step_s")]
    if not measured:
        return None
    priced = [r for r in measured if r.get("predicted_step_s")]
    errors = [abs(r["predicted_step_s"] - r["measured_step_s"]) / r["measured_step_s"] for r in priced]
    mem = [abs(r["predicted_peak_bytes"] - r["peak_bytes"]) / r["peak_bytes"] for r in measured
           if r.get("peak_bytes") and r.get("predicted_peak_bytes")]
    scaled = [abs(r["predicted_step_s"] * speed - r["measured_step_s"]) / r["measured_step_s"] for r in priced] \
        if speed else []
    best = min(measured, key=lambda r: r["measured_step_s"])
    pick = min(priced, key=lambda r: r["predicted_step_s"]) if priced else None
    worst = max(priced, key=lambda r: abs(r["predicted_step_s"] - r["measured_step_s"]) / r["measured_step_s"],
                default=None)
    return {
        "grids": len(measured),
        "priced": len(priced),
        "median_error": statistics.median(errors) if errors else None,
        "worst_error": max(errors) if errors else None,
        "median_error_speed_scaled": statistics.median(scaled) if scaled else None,
        "worst_grid": worst["grid"] if worst else None,
        "best_grid": best["grid"],
        "best_s": best["measured_step_s"],
        "pick_grid": pick["grid"] if pick else None,
        "pick_s": pick["measured_step_s"] if pick else None,
        "pick_slowdown": pick["measured_step_s"] / best["measured_step_s"] - 1 if pick else None,
        "worst_memory_error": max(mem) if mem else None,
    }


def drift(sweep_dir, when):
    path = sweep_dir.parent / f"{sweep_dir.name}.drift-{when}.json"
    try:
        return json.loads(path.read_text())["ratio"]
    except (OSError, ValueError, KeyError):
        return None


def ratio(x):
    return "—" if x is None else f"{x:.2f}"


def pct(x):
    return "—" if x is None else f"{100 * x:.1f}%"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--json", type=pathlib.Path, help="also write the figures as JSON")
    args = parser.parse_args()
    results = {}
    for path in sorted(args.dir.glob("*/P*/sweep.jsonl")):
        config, ranks = path.parent.parent.name, int(path.parent.name[1:])
        before, after = drift(path.parent, "before"), drift(path.parent, "after")
        readings = [x for x in (before, after) if x is not None]
        summary = summarise(load(path), statistics.mean(readings) if readings else None)
        if summary:
            summary["drift_before"] = before
            summary["drift_after"] = after
            results.setdefault(config, {})[ranks] = summary
    if not results:
        print(f"model_accuracy: no measured sweep under {args.dir}", file=sys.stderr)
        return 1
    print("| model | P | grids | median step error | worst (grid) | pick | measured best | pick vs best "
          "| worst memory error | machine vs calibration (before / after) | median error, speed-scaled |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for config, by_ranks in results.items():
        for ranks in sorted(by_ranks):
            s = by_ranks[ranks]
            pick = "—" if s["pick_grid"] is None else f"{s['pick_grid']} ({s['pick_s']:.3f} s)"
            print(f"| {config} | {ranks} | {s['grids']} | {pct(s['median_error'])} | {pct(s['worst_error'])} "
                  f"({s['worst_grid']}) | {pick} | {s['best_grid']} ({s['best_s']:.3f} s) "
                  f"| +{pct(s['pick_slowdown'])} | {pct(s['worst_memory_error'])} "
                  f"| {ratio(s['drift_before'])} / {ratio(s['drift_after'])} "
                  f"| {pct(s['median_error_speed_scaled'])} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
