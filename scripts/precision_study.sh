#!/usr/bin/env bash
# The bf16 accuracy study of docs/precision.md: CosmoFlow (64^3, width 0.25) and U-Net (64^3, base 8, depth 3)
# trained in fp32 and in bf16 from the same initial weights (--seed) and the same data order, on 2 ranks with
# grid 1x2x1x1 (so that the bf16 halos travel), then scripts/plot_precision.py draws the loss curves side by side
# and prints the final validation MSE / Dice of each precision.
#
#   scripts/precision_study.sh [OUT=precision-study] [--build DIR] [--epochs-cosmoflow E] [--epochs-unet E]
#
# About 10 minutes on 2 cores. Data: halo3d-datagen, generated once into OUT/data.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-precision-study}"
shift || true
build="$repo/build"
epochs_c=8
epochs_u=8
while (($#)); do
  case "$1" in
    --build) build="$2"; shift ;;
    --epochs-cosmoflow) epochs_c="$2"; shift ;;
    --epochs-unet) epochs_u="$2"; shift ;;
    *) echo "precision_study: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
mpi=(mpirun --oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
dg="$build/apps/datagen/halo3d-datagen"
data="$out/data"
mkdir -p "$data"
[[ -d "$data/c64train" ]] || "$dg" cosmoflow --size 64 --count 256 --samples-per-file 32 --seed 31 --out "$data/c64train" > /dev/null
[[ -d "$data/c64val" ]] || "$dg" cosmoflow --size 64 --count 64 --samples-per-file 32 --seed 32 --out "$data/c64val" > /dev/null
[[ -d "$data/u64train" ]] || "$dg" segmentation --size 64 --count 16 --seed 33 --out "$data/u64train" > /dev/null
[[ -d "$data/u64val" ]] || "$dg" segmentation --size 64 --count 4 --seed 34 --out "$data/u64val" > /dev/null

for p in fp32 bf16; do
  echo "== CosmoFlow 64^3 width 0.25, $p, $epochs_c epochs ($(date +%T))"
  rm -f "$out/cosmoflow_$p.jsonl"
  "${mpi[@]}" -np 2 "$build/apps/cosmoflow/cosmoflow" train --grid 1x2x1x1 --precision "$p" \
    --data "$data/c64train" --val-data "$data/c64val" --input-size 64 --width 0.25 --batchnorm --batch 8 \
    --epochs "$epochs_c" --optimizer adam --lr 2e-3 --warmup-steps 20 --lr-decay poly --transform log1p --seed 1 \
    --metrics "$out/cosmoflow_$p.jsonl" > "$out/cosmoflow_$p.log" 2>&1 || { tail -20 "$out/cosmoflow_$p.log"; exit 1; }
  tail -n 2 "$out/cosmoflow_$p.log"
  echo "== U-Net 64^3 base 8 depth 3, $p, $epochs_u epochs ($(date +%T))"
  rm -f "$out/unet_$p.jsonl"
  "${mpi[@]}" -np 2 "$build/apps/unet3d/unet3d" train --grid 1x2x1x1 --precision "$p" \
    --data "$data/u64train" --val-data "$data/u64val" --base 8 --depth 3 --transform constant:0.01 --batch 2 \
    --epochs "$epochs_u" --lr 5e-3 --lr-decay poly --loss ce --seed 1 \
    --metrics "$out/unet_$p.jsonl" > "$out/unet_$p.log" 2>&1 || { tail -20 "$out/unet_$p.log"; exit 1; }
  tail -n 2 "$out/unet_$p.log"
done
/usr/bin/python3 "$repo/scripts/plot_precision.py" "$out" --out "$out/precision.png" | tee "$out/summary.md"
