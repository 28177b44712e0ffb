#!/usr/bin/env bash
# learning.sh UNET3D DATA WORK MPIEXEC...: the learning run of docs/unet3d.md. Trains a small U-Net on 2 ranks
# (grid 1x2x1x1) for 8 epochs of 16 samples of 32^3, then requires a mean foreground Dice >= 0.7 on the 4
# validation volumes, both from the last validation record of the training metrics and from `unet3d eval` of
# the final checkpoint (which the predict tests use).
set -u
unet3d="$1"; data="$2"; work="$3"; shift 3
rm -rf "$work" && mkdir -p "$work"
model=(--base 8 --depth 2 --transform constant:0.01)
"$@" 2 "$unet3d" train --data "$data/train32" --val-data "$data/val32" "${model[@]}" --batch 2 --epochs 8 \
  --lr 5e-3 --lr-decay poly --loss ce --checkpoint-dir "$work/ckpt" --metrics "$work/metrics.jsonl" ||
  { echo "FAIL: training exited non-zero"; exit 1; }
dice_of() { sed -n 's/.*"mean_foreground_dice":\([0-9.eE+-]*\).*/\1/p' | tail -1; }
train_dice="$(grep '"phase":"val"' "$work/metrics.jsonl" | dice_of)"
out="$("$@" 2 "$unet3d" eval --data "$data/val32" "${model[@]}" --checkpoint-dir "$work/ckpt" \
        --metrics "$work/eval.jsonl" 2>&1)" || { printf '%s\n' "$out"; echo "FAIL: eval exited non-zero"; exit 1; }
printf '%s\n' "$out"
eval_dice="$(dice_of < "$work/eval.jsonl")"
echo "mean foreground Dice: last validation $train_dice, eval $eval_dice (required >= 0.7)"
awk -v a="$train_dice" -v b="$eval_dice" 'BEGIN { exit !(a >= 0.7 && b >= 0.7 && a == b) }' ||
  { echo "FAIL: Dice below 0.7, or eval disagrees with the last validation"; exit 1; }
echo "PASS"
