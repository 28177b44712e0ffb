#!/usr/bin/env bash
# sweep_calibrate.sh SWEEP DATA WORK TEMPLATE LAUNCHER...: `halo3d-sweep --calibrate` on 2 ranks times the layers on
# the blocks of each grid (rank 0; the other rank waits), writes them into a copy of the calibrated-kind machine file
# TEMPLATE (which has no timings) with the scheduler's slice it measures and each grid's batch read (all ranks), and
# then predicts every grid's step time from them; then a bf16 run, whose batch read gets a timing of its own.
set -eu
sweep="$1"; data="$2"; work="$3"; template="$4"; shift 4
rm -rf "$work"
mkdir -p "$work"
cp "$template" "$work/machine.json"
"$@" 2 "$sweep" --model cosmoflow --data "$data" --width 0.125 --batch 2 --steps 1 --warmup 0 \
  --grids 1x2x1x1,2x1x1x1 --machine "$work/machine.json" --calibrate --out "$work/out"
python3 - "$work/machine.json" "$work/out/sweep.jsonl" <<'PY'
import json, sys
machine = json.load(open(sys.argv[1]))
layers = machine.get("layers", [])
assert any(l["layer"].startswith("Conv3d(4->2") for l in layers), f"no timing of the first convolution in {layers}"
# The batch read of each grid, timed by all ranks on the data, on the largest rank's block of one sample, and the
# step model prices the read with it rather than the template's read rate.
reads = sorted((l["input"], l["output"]) for l in layers if l["layer"].startswith("batch read cosmoflow "))
channels = reads[0][1][1] if reads else 0
assert reads == [([1, channels, 32, 32, 32], [1, channels, 32, 32, 32]),
                 ([2, channels, 16, 32, 32], [1, channels, 32, 32, 32])], reads
assert all(l["forward_s"] > 0 for l in layers if l["layer"].startswith("batch read")), layers
# The scheduler's slice (the time-sharing term of the step model), measured since the template has none.
assert 0 < machine["scheduler"]["slice_s"] < 1, machine.get("scheduler")
records = [json.loads(line) for line in open(sys.argv[2])]
assert [r["grid"] for r in records] == ["1x2x1x1", "2x1x1x1"], records
for r in records:
    assert r["status"] == "measured", r
    assert isinstance(r["predicted_step_s"], float) and r["predicted_step_s"] > 0, r["predicted_step_s"]
    assert not any("io.read_bytes_per_s" in n for n in r["notes"]), r["notes"]
print(f"sweep --calibrate: {len(layers)} timings; predicted " +
      ", ".join(f"{r['grid']} {r['predicted_step_s']:.4g} s" for r in records))
PY
# bf16 batches: the loader converts into bf16, so their batch read is timed and priced under a name of its own.
"$@" 2 "$sweep" --model cosmoflow --data "$data" --width 0.125 --batch 2 --steps 1 --warmup 0 --precision bf16 \
  --grids 2x1x1x1 --machine "$work/machine.json" --calibrate --out "$work/out_bf16"
python3 - "$work/machine.json" "$work/out_bf16/sweep.jsonl" <<'PY'
import json, sys
layers = json.load(open(sys.argv[1]))["layers"]
reads = [l["layer"] for l in layers if l["layer"].startswith("batch read")]
assert sum(r.endswith(" into bf16") for r in reads) == 1 and len(reads) == 3, reads
record = json.loads(open(sys.argv[2]).readline())
assert not any("io.read_bytes_per_s" in n for n in record["notes"]), record["notes"]
print(f"sweep --calibrate --precision bf16: {reads}")
PY
# --calibrate-each-round: the layers timed again before rounds 2 and 3, the grids priced with each layer's mean over
# the rounds (three, so that a median would differ); the records carry those prices, the same as a sweep without
# --calibrate reading the pooled file gives.
cp "$template" "$work/each.json"
"$@" 2 "$sweep" --model cosmoflow --data "$data" --width 0.125 --batch 2 --steps 1 --warmup 0 --rounds 3 \
  --grids 1x2x1x1,2x1x1x1 --machine "$work/each.json" --calibrate --calibrate-each-round --out "$work/each" \
  > "$work/each.log"
grep -q "round 3 of 3: timing the layers again on rank 0" "$work/each.log"
grep -Eq "calibration: [1-9][0-9]* timings pooled over 3 rounds" "$work/each.log"
python3 - "$work/each.json" "$work/each.log" <<'PY'
import json, re, statistics, sys
# Every layer's pooled timing is the mean of the three passes the log printed (6 significant digits each).
layers = json.load(open(sys.argv[1]))["layers"]
passes, seen = [], {}
for line in open(sys.argv[2]):
    if line.startswith("calibrating on rank 0") or "timing the layers again" in line:
        passes.append({})
        continue
    m = re.match(r"  timed \S+ (.+?) on \(([\d, ]+)\)(?: \(neighbours (\d)(\d)(\d)\))?: "
                 r"forward (\S+) ms, backward (\S+) ms$", line)
    if m and passes:
        key = (m[1], tuple(int(x) for x in m[2].split(",")), tuple(int(x or 0) for x in m.group(3, 4, 5)))
        seen[key] = seen.get(key, 0) + 1
        passes[-1][key] = (float(m[6]) * 1e-3, float(m[7]) * 1e-3)
assert len(passes) == 3, f"{len(passes)} calibration passes in the log"
checked = 0
for key in passes[0]:
    if seen[key] != 3:  # printed twice in a pass: not one key
        continue
    entry = [l for l in layers if (l["layer"], tuple(l["input"]), tuple(l.get("neighbours", (0, 0, 0)))) == key]
    assert len(entry) == 1, (key, entry)
    for i, name in enumerate(("forward_s", "backward_s")):
        mean = statistics.mean(p[key][i] for p in passes)
        assert abs(entry[0][name] - mean) <= 2e-5 * mean, (key, name, entry[0][name], [p[key][i] for p in passes])
    checked += 1
assert checked >= 5, f"only {checked} layers checked"
print(f"sweep --calibrate-each-round: {checked} layers pooled as the mean of their 3 passes")
PY
"$@" 2 "$sweep" --model cosmoflow --data "$data" --width 0.125 --batch 2 --steps 1 --warmup 0 \
  --grids 1x2x1x1,2x1x1x1 --machine "$work/each.json" --out "$work/each_priced" > /dev/null
python3 - "$work/each/sweep.jsonl" "$work/each_priced/sweep.jsonl" <<'PY'
import json, sys
each, priced = ([json.loads(line) for line in open(path)] for path in sys.argv[1:3])
assert [r["grid"] for r in each] == [r["grid"] for r in priced] == ["1x2x1x1", "2x1x1x1"], (each, priced)
for a, b in zip(each, priced):
    assert a["status"] == "measured" and a["rounds"] == 3, a
    assert abs(a["predicted_step_s"] - b["predicted_step_s"]) <= 1e-9 * b["predicted_step_s"], \
        (a["grid"], a["predicted_step_s"], b["predicted_step_s"])
    layers = [l for l in a["layers"] if "predicted" in l]
    assert layers and any(l["predicted"]["forward_s"] > 0 for l in layers), a["layers"]
print("sweep --calibrate-each-round: predicted " + ", ".join(f"{r['grid']} {r['predicted_step_s']:.4g} s" for r in each))
PY
