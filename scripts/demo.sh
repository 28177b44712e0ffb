#!/usr/bin/env bash
# The README's first command: bootstrap, build, generate a small synthetic CosmoFlow data set and train the CosmoFlow
# network on 4 MPI ranks with grid 1x2x2x1 (every 32^3 sample split into 2x2 blocks along D and H, which exchange
# halos). Rank 0 prints a progress line, each epoch's mean training loss and the validation MSE beside the MSE of
# predicting the training mean. A few minutes on 2 cores once the dependencies are built.
#
#   HALO3D_BUILD       build directory (default build/)
#   HALO3D_DEMO_DIR    data, checkpoints and metrics (default <build>/demo); reused when present
#   HALO3D_DEMO_EPOCHS epochs (default 16)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build="${HALO3D_BUILD:-$repo/build}"
demo="${HALO3D_DEMO_DIR:-$build/demo}"
epochs="${HALO3D_DEMO_EPOCHS:-16}"

mkdir -p "$build"
echo "== building halo3d into $build (log: $build/demo-build.log)"
halo3d_build "$build" > "$build/demo-build.log" 2>&1 || { tail -40 "$build/demo-build.log"; exit 1; }

datagen="$build/apps/datagen/halo3d-datagen"
if [[ ! -d "$demo/train" ]]; then
  echo "== generating synthetic CosmoFlow samples (4 x 32^3 int16 counts, 4 target parameters) into $demo"
  "$datagen" cosmoflow --size 32 --count 512 --samples-per-file 64 --seed 21 --out "$demo/train.tmp"
  "$datagen" cosmoflow --size 32 --count 128 --samples-per-file 64 --seed 22 --out "$demo/val"
  mv "$demo/train.tmp" "$demo/train"   # only a complete set is reused by the next run
fi

rm -rf "$demo/ckpt" "$demo/train.jsonl"
echo "== training CosmoFlow (width 0.25) on 4 ranks, grid 1x2x2x1, $epochs epochs"
OMP_NUM_THREADS=1 OMP_PROC_BIND=false mpirun "${mpirun_flags[@]}" -np 4 "$build/apps/cosmoflow/cosmoflow" train \
  --grid 1x2x2x1 --data "$demo/train" --val-data "$demo/val" --input-size 32 --width 0.25 --batchnorm --batch 16 \
  --epochs "$epochs" --optimizer adam --lr 2e-3 --warmup-steps 50 --lr-decay poly --transform log1p --seed 1 \
  --checkpoint-dir "$demo/ckpt" --metrics "$demo/train.jsonl"
echo "== metrics: $demo/train.jsonl; checkpoints: $demo/ckpt (see docs/cosmoflow.md)"
