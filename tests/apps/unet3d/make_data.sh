#!/usr/bin/env bash
# make_data.sh DATAGEN OUT: the synthetic segmentation sets of the unet3d app tests (a few seconds).
#   train32  16 samples of 32^3 (seed 1)          val32  4 samples of 32^3 (seed 2)
#   big64    2 samples of 64^3, 2x the training size per dimension (seed 3; sample 1 holds lesions)
#   odd34    1 sample of 34^3, not divisible by 2^2 (seed 4)
#   nomanifest  one training file without datagen.json (its labels 0..2 are then only checked by the reader)
set -eu
datagen="$1"; out="$2"
rm -rf "$out" && mkdir -p "$out"
"$datagen" segmentation --size 32 --count 16 --seed 1 --out "$out/train32"
"$datagen" segmentation --size 32 --count 4 --seed 2 --out "$out/val32"
"$datagen" segmentation --size 64 --count 2 --seed 3 --out "$out/big64"
"$datagen" segmentation --size 34 --count 1 --seed 4 --out "$out/odd34"
mkdir -p "$out/nomanifest" && cp "$out/train32/unet_000000.h5" "$out/nomanifest/"
