#!/usr/bin/env bash
# predict.sh MODE UNET3D COMPARE DATA CKPT WORK MPIEXEC...: `unet3d predict` on a 64^3 volume, 2x the training
# size per dimension, with the model of learning.sh.
#   ranks    whole-volume prediction at 1, 2 (1x2x1x1) and 4 (1x2x2x1) ranks: identical label files
#   sliding  sliding window (tile 32, overlap 0.25 and 0.5, on 2 and 4 ranks) against the whole volume:
#            >= 99% of the voxels agree
#   pad      a 34^3 volume, not divisible by 2^depth = 4, padded to 36^3 with --pad: the same labels on 1 and 2
#            ranks
set -u
mode="$1"; unet3d="$2"; compare="$3"; data="$4"; ckpt="$5"; work="$6"; shift 6
rm -rf "$work" && mkdir -p "$work"
model=(--base 8 --depth 2 --transform constant:0.01 --checkpoint-dir "$ckpt")
predict() {  # RANKS OUT ARGS...
  local np="$1" out="$2"; shift 2
  "${mpiexec[@]}" "$np" "$unet3d" predict "${model[@]}" --out "$work/$out" "$@" ||
    { echo "FAIL: predict $out exited non-zero"; exit 1; }
}
mpiexec=("$@")
case "$mode" in
  ranks)
    predict 1 np1.h5 --data "$data/big64" --sample 1 --probabilities
    predict 2 np2.h5 --data "$data/big64" --sample 1 --grid 1x2x1x1
    predict 4 np4.h5 --data "$data/big64" --sample 1 --grid 1x2x2x1
    "$compare" "$work/np1.h5" "$work/np2.h5" 1 && "$compare" "$work/np1.h5" "$work/np4.h5" 1 ||
      { echo "FAIL: the labels depend on the rank count"; exit 1; } ;;
  sliding)
    predict 2 whole.h5 --data "$data/big64" --sample 1
    predict 2 tile25.h5 --data "$data/big64" --sample 1 --tile 32 --overlap 0.25
    predict 4 tile50.h5 --data "$data/big64" --sample 1 --tile 32 --overlap 0.5 --grid 1x1x2x2
    "$compare" "$work/whole.h5" "$work/tile25.h5" 0.99 && "$compare" "$work/whole.h5" "$work/tile50.h5" 0.99 ||
      { echo "FAIL: sliding window and whole volume agree on fewer than 99% of the voxels"; exit 1; } ;;
  pad)
    predict 1 pad1.h5 --data "$data/odd34" --pad
    predict 2 pad2.h5 --data "$data/odd34" --pad --grid 1x1x2x1
    "$compare" "$work/pad1.h5" "$work/pad2.h5" 1 || { echo "FAIL: padded prediction depends on the grid"; exit 1; } ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
echo "PASS"
