#!/usr/bin/env bash
# sweep_smoke.sh SWEEP DATA WORK PLOT LAUNCHER...: the CI smoke test of halo3d-sweep. Two ranks sweep CosmoFlow on
# 32^3 data (width 0.125, batch 2) with one measured step and no warm-up; every grid of 2 ranks must appear in
# sweep.jsonl, measured, with positive times and memory, and in sweep.csv and sweep.md; scripts/plot_sweep.py
# (PLOT) must draw the PNG, or say clearly that matplotlib is not installed.
set -eu
sweep="$1"; data="$2"; work="$3"; plot="$4"; shift 4
rm -rf "$work"
mkdir -p "$work"
"$@" 2 "$sweep" --model cosmoflow --data "$data" --width 0.125 --batch 2 --steps 1 --warmup 0 --out "$work/out"
python3 - "$work/out" 2 <<'PY'
import csv, json, sys
out, ranks = sys.argv[1], int(sys.argv[2])
grids = [f"{n}x{d}x{h}x{ranks // (n * d * h)}" for n in range(1, ranks + 1) for d in range(1, ranks + 1)
         for h in range(1, ranks + 1) if ranks % (n * d * h) == 0]
records = {}
with open(f"{out}/sweep.jsonl") as f:
    for line in f:
        r = json.loads(line)
        records[r["grid"]] = r
problems = []
for g in grids:
    r = records.get(g)
    if r is None:
        problems.append(f"{g}: missing from sweep.jsonl")
        continue
    if r["status"] != "measured":
        problems.append(f"{g}: status {r['status']}: {r.get('note')}")
        continue
    for key in ("measured_step_s", "peak_bytes", "predicted_peak_bytes"):
        if not (isinstance(r.get(key), (int, float)) and r[key] > 0):
            problems.append(f"{g}: {key} = {r.get(key)!r}, expected a positive number")
    if not (r["step_s"]["min"] > 0 and r["step_s"]["max"] >= r["step_s"]["min"]):
        problems.append(f"{g}: step_s = {r['step_s']}")
    if not r["times"]["compute"] > 0:
        problems.append(f"{g}: times.compute = {r['times']['compute']}")
    if "predicted_step_s" not in r:
        problems.append(f"{g}: no predicted_step_s key")
    if not any(l["name"] == "features.0" and l["compute_s"] > 0 for l in r["layers"]):
        problems.append(f"{g}: no compute time for layer features.0")
with open(f"{out}/sweep.csv") as f:
    rows = {row["grid"]: row for row in csv.DictReader(f)}
with open(f"{out}/sweep.md") as f:
    md = f.read()
for g in grids:
    if g not in rows:
        problems.append(f"{g}: missing from sweep.csv")
    if f"| {g} |" not in md:
        problems.append(f"{g}: missing from sweep.md")
if problems:
    sys.exit("sweep smoke test:\n  " + "\n  ".join(problems))
print(f"sweep smoke test: {len(grids)} grids of {ranks} ranks measured: " +
      ", ".join(f"{g} {records[g]['measured_step_s']:.4g} s" for g in grids))
PY
# The plot: a PNG, or (without matplotlib) the script's clear refusal.
if plot_output="$(python3 "$plot" "$work/out/sweep.jsonl" --out "$work/out/sweep.png" 2>&1)"; then
  echo "$plot_output"
  test -s "$work/out/sweep.png"
else
  echo "$plot_output"
  grep -q "matplotlib is not installed" <<<"$plot_output"
  echo "sweep smoke test: matplotlib is not installed: no plot"
fi
