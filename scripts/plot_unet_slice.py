#!/usr/bin/env python3
"""Plot one slice of a `unet3d predict` output beside the sample's input and true labels.

    python3 scripts/plot_unet_slice.py --sample data/big64/unet_000001.h5 --prediction seg.h5 \
        --out docs/images/unet3d_slice.png [--axis 0] [--index N]

--sample is a U-Net sample file (`volume` (C, D, H, W) or (N, C, D, H, W), `segmentation` (D, H, W) or
(N, D, H, W); --sample-index picks N), --prediction the file `unet3d predict` wrote (`labels` (D, H, W)). The slice
defaults to the one along --axis with the most voxels of the rarest foreground class in the true labels. Panels:
input channel 0, true labels, predicted labels, and the voxels where they differ; the title gives the per-class
Dice of the slice and of the whole volume.
"""
import argparse

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

CLASS_COLOURS = ["#000000", "#3b9ae1", "#f0542c", "#6cc24a", "#f5c518", "#a05ad6"]


def dice(pred, truth, classes):
    out = []
    for c in range(classes):
        p, t = pred == c, truth == c
        denominator = p.sum() + t.sum()
        out.append(2.0 * (p & t).sum() / denominator if denominator else 1.0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", required=True, help="U-Net sample file (volume, segmentation)")
    ap.add_argument("--sample-index", type=int, default=0, help="sample in a batched file")
    ap.add_argument("--prediction", required=True, help="output of unet3d predict (labels)")
    ap.add_argument("--out", default="docs/images/unet3d_slice.png")
    ap.add_argument("--axis", type=int, default=0, choices=[0, 1, 2], help="0: D, 1: H, 2: W")
    ap.add_argument("--index", type=int, default=None, help="slice index (default: most rare-class voxels)")
    a = ap.parse_args()

    with h5py.File(a.sample, "r") as f:
        volume, truth = f["volume"][()], f["segmentation"][()].astype(np.int64)
    if volume.ndim == 5:
        volume, truth = volume[a.sample_index], truth[a.sample_index]
    with h5py.File(a.prediction, "r") as f:
        pred = f["labels"][()].astype(np.int64)
    if pred.shape != truth.shape:
        raise SystemExit(f"prediction {pred.shape} and true labels {truth.shape} differ in shape")
    classes = int(max(truth.max(), pred.max())) + 1

    if a.index is None:
        counts = np.bincount(truth.ravel(), minlength=classes)
        present = [c for c in range(1, classes) if counts[c] > 0]
        rare = min(present, key=lambda c: counts[c]) if present else 0
        other = tuple(d for d in range(3) if d != a.axis)
        a.index = int(np.argmax((truth == rare).sum(axis=other)))

    def cut(x):
        return np.take(x, a.index, axis=a.axis)

    image, t, p = cut(volume[0]), cut(truth), cut(pred)
    cmap = ListedColormap(CLASS_COLOURS[:classes])
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.9))
    axes[0].imshow(image, cmap="gray")
    axes[0].set_title("input (channel 0)")
    axes[1].imshow(t, cmap=cmap, vmin=0, vmax=classes - 1, interpolation="nearest")
    axes[1].set_title("ground truth")
    axes[2].imshow(p, cmap=cmap, vmin=0, vmax=classes - 1, interpolation="nearest")
    axes[2].set_title("prediction")
    axes[3].imshow(image, cmap="gray")
    axes[3].imshow(np.ma.masked_where(p == t, np.ones_like(p)), cmap=ListedColormap(["#ff00ff"]), alpha=0.9)
    axes[3].set_title(f"differences ({int((p != t).sum())} voxels)")
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
    fmt = lambda ds: ", ".join(f"{d:.3f}" for d in ds)  # noqa: E731
    fig.suptitle(f"{'DHW'[a.axis]} = {a.index}: Dice per class (background first) slice [{fmt(dice(p, t, classes))}], "
                 f"volume [{fmt(dice(pred, truth, classes))}]", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
