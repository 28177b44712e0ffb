#!/usr/bin/env bash
# precision.sh COSMOFLOW DATA WORK MPIEXEC...: --precision bf16 trains on a spatial split (finite losses, the
# metrics say "precision": "bf16"), its checkpoint resumes an fp32 run with a notice (parameters and optimizer
# state are fp32 in both precisions), and the fp32 run's checkpoint resumes a bf16 run the same way. Then
# --allreduce-precision bf16 on a data-parallel grid: the same first loss as the fp32 wire (it comes before any
# update), later losses close to it but not all equal (the summed gradients were rounded), and the metrics say so.
set -u
cosmoflow="$1"; data="$2"; work="$3"; shift 3
rm -rf "$work" && mkdir -p "$work"
common=(--grid 1x2x1x1 --data "$data" --width 0.125 --batch 2 --checkpoint-dir "$work/ck")
"$@" 2 "$cosmoflow" train "${common[@]}" --precision bf16 --steps 3 --metrics "$work/bf16.jsonl" \
  > "$work/bf16.log" 2>&1 || { cat "$work/bf16.log"; echo "FAIL: bf16 training exited non-zero"; exit 1; }
python3 - "$work/bf16.jsonl" <<'PY' || exit 1
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"train"' in l]
assert len(rows) == 3, f"FAIL: {len(rows)} training records, expected 3"
assert all(r["precision"] == "bf16" for r in rows), "FAIL: a record does not say precision bf16"
assert all(math.isfinite(r["loss"]) and r["peak_bytes"] > 0 for r in rows), "FAIL: loss or peak_bytes"
print("bf16 losses", [round(r["loss"], 4) for r in rows])
PY
out="$("$@" 2 "$cosmoflow" train "${common[@]}" --precision fp32 --steps 5 --resume 2>&1)" ||
  { printf '%s\n' "$out"; echo "FAIL: the fp32 resume exited non-zero"; exit 1; }
grep -q "was written by a run with bf16 activations; this run stores them in fp32" <<<"$out" ||
  { printf '%s\n' "$out"; echo "FAIL: no notice of the precision change"; exit 1; }
grep -q "resuming from .*checkpoint-000000000003.h5 at step 3" <<<"$out" ||
  { printf '%s\n' "$out"; echo "FAIL: did not resume at step 3"; exit 1; }
out="$("$@" 2 "$cosmoflow" train "${common[@]}" --precision bf16 --steps 6 --resume 2>&1)" ||
  { printf '%s\n' "$out"; echo "FAIL: the bf16 resume exited non-zero"; exit 1; }
grep -q "was written by a run with fp32 activations; this run stores them in bf16" <<<"$out" ||
  { printf '%s\n' "$out"; echo "FAIL: no notice of the change back"; exit 1; }
# eval honours --precision: a bf16 evaluation of the last checkpoint says so in its metrics and differs from the
# fp32 one only by bf16 rounding.
for p in fp32 bf16; do
  "$@" 2 "$cosmoflow" eval --grid 1x2x1x1 --data "$data" --width 0.125 --batch 2 --checkpoint-dir "$work/ck" \
    --precision $p --metrics "$work/eval_$p.jsonl" > "$work/eval_$p.log" 2>&1 ||
    { cat "$work/eval_$p.log"; echo "FAIL: eval --precision $p exited non-zero"; exit 1; }
done
python3 - "$work/eval_fp32.jsonl" "$work/eval_bf16.jsonl" <<'PY' || exit 1
import json, sys
a, b = (json.loads(open(f).read().splitlines()[-1]) for f in sys.argv[1:3])
assert a["precision"] == "fp32" and b["precision"] == "bf16", f"FAIL: precisions recorded {a.get('precision')}, {b.get('precision')}"
num = [k for k, v in a.items() if isinstance(v, float)]
assert num, "FAIL: no numeric eval metric"
print("eval fp32", {k: a[k] for k in num}, "\neval bf16", {k: b[k] for k in num})
assert any(a[k] != b[k] for k in num), "FAIL: the bf16 evaluation equals the fp32 one (did it run in fp32?)"
assert all(abs(a[k] - b[k]) <= 0.05 * abs(a[k]) + 1e-6 for k in num), "FAIL: bf16 eval far from fp32"
PY
wire=(--grid 2x1x1x1 --data "$data" --width 0.125 --batch 2 --steps 4)
for w in fp32 bf16; do
  "$@" 2 "$cosmoflow" train "${wire[@]}" --allreduce-precision $w --metrics "$work/wire_$w.jsonl" \
    > "$work/wire_$w.log" 2>&1 || { cat "$work/wire_$w.log"; echo "FAIL: --allreduce-precision $w exited non-zero"; exit 1; }
done
python3 - "$work/wire_fp32.jsonl" "$work/wire_bf16.jsonl" <<'PY' || exit 1
import json, sys
a, b = ([json.loads(l) for l in open(f) if '"train"' in l] for f in sys.argv[1:3])
assert len(a) == len(b) == 4, "FAIL: expected 4 training records per run"
assert all(r["allreduce_precision"] == "bf16" for r in b), "FAIL: a record does not say allreduce_precision bf16"
la, lb = [r["loss"] for r in a], [r["loss"] for r in b]
print("fp32 wire", la, "\nbf16 wire", lb)
assert la[0] == lb[0], "FAIL: the first loss differs (it precedes every update)"
assert la != lb, "FAIL: the bf16 wire changed nothing (was it used?)"
assert all(abs(x - y) <= 0.05 * abs(x) for x, y in zip(la, lb)), "FAIL: bf16 wire losses drift beyond 5%"
PY
echo PASS
