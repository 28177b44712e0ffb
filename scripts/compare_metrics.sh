#!/usr/bin/env bash
# Do two builds train alike, bit for bit? Runs the demo's CosmoFlow training (scripts/demo.sh: 4 ranks, grid
# 1x2x2x1, 16 epochs) and the U-Net learning run (tests/apps/unet3d/learning.sh: 2 ranks, 8 epochs) with each
# build on the same data and seeds, then compares every metrics record's losses, validation MSE and Dice and
# learning rate as exact hexadecimal floats (timings and run ids differ and are left out). Exit 0 when equal.
#
#   scripts/compare_metrics.sh OLD_BUILD NEW_BUILD [WORK=compare-metrics]
set -euo pipefail
old="$1"; new="$2"; work="${3:-compare-metrics}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$work"
mpi=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
data="$work/data"
if [[ ! -d "$data/unet/val32" ]]; then
  dg="$new/apps/datagen/halo3d-datagen"
  "$dg" cosmoflow --size 32 --count 512 --samples-per-file 64 --seed 21 --out "$data/train" > /dev/null
  "$dg" cosmoflow --size 32 --count 128 --samples-per-file 64 --seed 22 --out "$data/val" > /dev/null
  "$repo/tests/apps/unet3d/make_data.sh" "$dg" "$data/unet" > /dev/null
fi
for v in old new; do
  b="$old"; [[ $v == new ]] && b="$new"
  out="$work/$v"; rm -rf "$out"; mkdir -p "$out"
  "${mpi[@]}" -np 4 "$b/apps/cosmoflow/cosmoflow" train --grid 1x2x2x1 --data "$data/train" --val-data "$data/val" \
    --input-size 32 --width 0.25 --batchnorm --batch 16 --epochs 16 --optimizer adam --lr 2e-3 --warmup-steps 50 \
    --lr-decay poly --transform log1p --seed 1 --checkpoint-dir "$out/ckpt-cosmoflow" \
    --metrics "$out/cosmoflow.jsonl" > "$out/cosmoflow.log" 2>&1
  "${mpi[@]}" -np 2 "$b/apps/unet3d/unet3d" train --data "$data/unet/train32" --val-data "$data/unet/val32" \
    --base 8 --depth 2 --transform constant:0.01 --batch 2 --epochs 8 --lr 5e-3 --lr-decay poly --loss ce \
    --checkpoint-dir "$out/ckpt-unet" --metrics "$out/unet.jsonl" > "$out/unet.log" 2>&1
done
python3 - "$work" << 'PY'
import json, sys
work = sys.argv[1]
def exact(v):
    return v.hex() if isinstance(v, float) else [exact(x) for x in v] if isinstance(v, list) else v
def records(path):
    keep = lambda k: k in ("phase", "step", "epoch", "lr", "samples") or any(s in k for s in ("loss", "mse", "dice"))
    return [{k: exact(v) for k, v in json.loads(line).items() if keep(k)} for line in open(path)]
ok = True
for app in ("cosmoflow", "unet"):
    a, b = records(f"{work}/old/{app}.jsonl"), records(f"{work}/new/{app}.jsonl")
    same = a == b
    ok &= same
    print(f"{app}: {len(a)} and {len(b)} records, {'bit-identical' if same else 'DIFFERENT'}")
sys.exit(0 if ok else 1)
PY
