#!/usr/bin/env python3
"""The bf16 accuracy study's figure and table (scripts/precision_study.sh writes the inputs): training loss per
step and validation loss per epoch of CosmoFlow and U-Net in fp32 and bf16, side by side, and a Markdown table of
the final validation MSE (CosmoFlow) and mean foreground Dice (U-Net) of each precision with their difference.

    /usr/bin/python3 scripts/plot_precision.py STUDY_DIR [--out STUDY_DIR/precision.png]

Reads STUDY_DIR/{cosmoflow,unet}_{fp32,bf16}.jsonl (train's --metrics). The table goes to stdout; the figure needs
matplotlib (Debian: python3-matplotlib) and is skipped with a notice without it.
"""
import argparse
import json
import os
import sys


def load(path):
    train, val = [], []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("phase") == "train":
                train.append((r["step"], r["loss"]))
            elif r.get("phase") == "val":
                val.append(r)
    return train, val


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("study")
    ap.add_argument("--out")
    a = ap.parse_args()
    runs = {}
    for model in ("cosmoflow", "unet"):
        for p in ("fp32", "bf16"):
            path = os.path.join(a.study, f"{model}_{p}.jsonl")
            if not os.path.exists(path):
                sys.exit(f"plot_precision: {path} missing (run scripts/precision_study.sh)")
            runs[model, p] = load(path)

    print("| model | metric | fp32 | bf16 | bf16 vs fp32 | bar |")
    print("|---|---|---|---|---|---|")
    c32, c16 = runs["cosmoflow", "fp32"][1][-1]["mse"], runs["cosmoflow", "bf16"][1][-1]["mse"]
    print(f"| CosmoFlow 64³ | final validation MSE | {c32:.4f} | {c16:.4f} | {100 * (c16 - c32) / c32:+.1f}% |"
          f" within 10%: {'yes' if abs(c16 - c32) <= 0.1 * c32 else 'NO'} |")
    u32 = runs["unet", "fp32"][1][-1]["mean_foreground_dice"]
    u16 = runs["unet", "bf16"][1][-1]["mean_foreground_dice"]
    print(f"| U-Net 64³ | final mean foreground Dice | {u32:.4f} | {u16:.4f} | {u16 - u32:+.4f} |"
          f" within 0.02: {'yes' if abs(u16 - u32) <= 0.02 else 'NO'} |")
    for model in ("cosmoflow", "unet"):
        key = "mse" if model == "cosmoflow" else "mean_foreground_dice"
        for p in ("fp32", "bf16"):
            vals = ", ".join(f"{r[key]:.4f}" for r in runs[model, p][1])
            print(f"\n{model} {p} validation {key} per epoch: {vals}", end="")
    print()

    if not a.out:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_precision: matplotlib missing, no figure (Debian: apt-get install python3-matplotlib)",
              file=sys.stderr)
        return
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    style = {"fp32": dict(color="#4c72b0"), "bf16": dict(color="#dd8452", linestyle="--")}
    for col, (model, title, key, label) in enumerate([
            ("cosmoflow", "CosmoFlow 64³, width 0.25", "mse", "validation MSE"),
            ("unet", "U-Net 64³, base 8, depth 3", "mean_foreground_dice", "validation mean foreground Dice")]):
        for p in ("fp32", "bf16"):
            train, val = runs[model, p]
            axes[0][col].plot([s for s, _ in train], [l for _, l in train], label=p, linewidth=0.8, **style[p])
            axes[1][col].plot([r["epoch"] + 1 for r in val], [r[key] for r in val], marker="o", label=p, **style[p])
        axes[0][col].set_title(title)
        axes[0][col].set_xlabel("step")
        axes[0][col].set_ylabel("training loss")
        axes[0][col].set_yscale("log")
        axes[1][col].set_xlabel("epoch")
        axes[1][col].set_ylabel(label)
        for ax in (axes[0][col], axes[1][col]):
            ax.legend()
            ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"\nfigure: {a.out}")


if __name__ == "__main__":
    main()
