#!/usr/bin/env bash
# cosmoflow_learning.sh DATAGEN COSMOFLOW WORK MPIEXEC...: the learning check of docs/cosmoflow.md. Generates 512
# training and 128 validation samples of 32^3 (the generator's parameters are recoverable from the field), trains
# CosmoFlow (width 0.25, BatchNorm) on 2 ranks for 16 epochs, and requires the final validation MSE to be at least
# 3x lower than that of predicting the mean training target. `cosmoflow eval` of the final checkpoint must report
# the same validation MSE.
set -u
datagen="$1"; cosmoflow="$2"; work="$3"; shift 3
rm -rf "$work" && mkdir -p "$work"
"$datagen" cosmoflow --size 32 --count 512 --samples-per-file 64 --seed 21 --out "$work/train" > /dev/null &&
  "$datagen" cosmoflow --size 32 --count 128 --samples-per-file 64 --seed 22 --out "$work/val" > /dev/null ||
  { echo "FAIL: datagen"; exit 1; }
model=(--input-size 32 --width 0.25 --batchnorm --transform log1p)
"$@" 2 "$cosmoflow" train --grid 2x1x1x1 --data "$work/train" --val-data "$work/val" "${model[@]}" --batch 16 \
  --epochs 16 --optimizer adam --lr 2e-3 --warmup-steps 50 --lr-decay poly --seed 1 \
  --checkpoint-dir "$work/ckpt" --metrics "$work/metrics.jsonl" | grep -v "^features\|^head\|^input" ||
  { echo "FAIL: training exited non-zero"; exit 1; }
last_val="$(grep '"phase":"val"' "$work/metrics.jsonl" | tail -1)"
mse="$(sed -n 's/.*"mse":\([0-9.eE+-]*\).*/\1/p' <<<"$last_val")"
base="$(sed -n 's/.*"baseline_mse":\([0-9.eE+-]*\).*/\1/p' <<<"$last_val")"
out="$("$@" 2 "$cosmoflow" eval --grid 2x1x1x1 --data "$work/val" "${model[@]}" --checkpoint-dir "$work/ckpt" 2>&1)" ||
  { printf '%s\n' "$out"; echo "FAIL: eval exited non-zero"; exit 1; }
printf '%s\n' "$out" | grep -v "^features\|^head\|^input"
eval_mse="$(sed -n 's/.*samples, mse \([0-9.eE+-]*\).*/\1/p' <<<"$out")"
echo "validation mse $mse, predicting the training mean $base (ratio $(awk -v a="$base" -v b="$mse" 'BEGIN{print a/b}'),"\
     "required >= 3); eval of the final checkpoint: mse $eval_mse"
awk -v m="$mse" -v b="$base" -v e="$eval_mse" 'BEGIN { d = m - e; if (d < 0) d = -d; exit !(m > 0 && b >= 3 * m && d <= 1e-4 * m) }' ||
  { echo "FAIL: validation MSE not 3x below the mean predictor's, or eval disagrees"; exit 1; }
echo "PASS"
