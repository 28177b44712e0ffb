#!/usr/bin/env python3
"""Plot a halo3d-sweep result: the measured step time of every grid as a bar stacked by category
(compute, halo wait, redistribution, allreduce, I/O, and the rest of the step), with the predicted
step time as a hatched bar beside it (its efficiency band as an error bar, for roofline machines).

    python3 scripts/plot_sweep.py sweep4/sweep.jsonl [--out sweep4/sweep.png] [--title TEXT]

Reads sweep.jsonl as halo3d-sweep writes it (apps/sweep/Sweep.hpp lists the keys); grids that were
not measured (invalid or failed) are listed under the plot. Needs matplotlib (Debian:
apt-get install python3-matplotlib).
"""
import argparse
import json
import os
import sys

CATEGORIES = [  # key in "times", label, colour
    ("compute", "compute", "#4c72b0"),
    ("halo_wait", "halo wait", "#dd8452"),
    ("redistribute", "redistribution", "#55a868"),
    ("allreduce", "allreduce", "#c44e52"),
    ("io", "I/O", "#8172b3"),
    ("other", "rest of the step", "#b3b3b3"),
]


def load(path):
    records = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"plot_sweep.py: {path}, line {number}: not JSON: {e}")
    for r in records:
        if "grid" not in r or "status" not in r:
            sys.exit(f"plot_sweep.py: {path}: a record without 'grid' or 'status': {r}")
    return records


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jsonl", help="sweep.jsonl written by halo3d-sweep")
    parser.add_argument("--out", help="PNG file (default: sweep.png beside the input)")
    parser.add_argument("--title", help="plot title (default: from the records)")
    args = parser.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # Debian's python3-matplotlib lives in the system interpreter's packages, which another
        # python3 first on PATH (pyenv, a virtual environment) does not see: try that one once.
        system = "/usr/bin/python3"
        if (os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system)
                and not os.environ.get("HALO3D_PLOT_REEXEC")):
            os.environ["HALO3D_PLOT_REEXEC"] = "1"
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
        sys.exit("plot_sweep.py: matplotlib is not installed (Debian: apt-get install "
                 "python3-matplotlib; or: python3 -m pip install matplotlib)")

    records = load(args.jsonl)
    measured = [r for r in records if r["status"] == "measured"]
    others = [r for r in records if r["status"] != "measured"]
    if not measured:
        sys.exit(f"plot_sweep.py: {args.jsonl} holds no measured grid")
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.jsonl)), "sweep.png")

    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(measured) + 2), 4.8))
    width = 0.38
    xs = range(len(measured))
    for key, label, colour in CATEGORIES:
        bottoms = [sum(r["times"].get(k, 0.0) for k, _, _ in CATEGORIES[: [c[0] for c in CATEGORIES].index(key)])
                   for r in measured]
        heights = [r["times"].get(key, 0.0) for r in measured]
        ax.bar([x - width / 2 for x in xs], heights, width, bottom=bottoms, color=colour, label=label)
    # The measured median itself (the stack may differ from it: each phase is its own largest rank).
    ax.scatter([x - width / 2 for x in xs], [r["measured_step_s"] for r in measured], marker="_",
               s=400, color="black", zorder=3, label="measured step (median)")
    predicted = [(x, r) for x, r in zip(xs, measured) if isinstance(r.get("predicted_step_s"), (int, float))]
    if predicted:
        ys = [r["predicted_step_s"] for _, r in predicted]
        ax.bar([x + width / 2 for x, _ in predicted], ys, width, facecolor="white", edgecolor="black",
               hatch="//", label="predicted step")
        bands = [r.get("predicted", {}).get("band") for _, r in predicted]
        if all(b and len(b) == 2 and b[0] != b[1] for b in bands):
            lo = [y - min(b) for y, b in zip(ys, bands)]
            hi = [max(b) - y for y, b in zip(ys, bands)]
            ax.errorbar([x + width / 2 for x, _ in predicted], ys, yerr=[lo, hi], fmt="none",
                        ecolor="black", capsize=4, label="efficiency band")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["grid"] for r in measured])
    ax.set_xlabel("grid N x D x H x W")
    ax.set_ylabel("seconds per step")
    first = measured[0]
    ax.set_title(args.title or f"{first.get('model', '')}: {first.get('ranks', '?')} ranks, "
                 f"batch {first.get('batch', '?')}, {first.get('steps', '?')} measured steps per grid")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if others:
        text = "not measured: " + "; ".join(f"{r['grid']} ({r['status']})" for r in others)
        fig.text(0.01, 0.01, text[:300], fontsize="x-small")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"plot_sweep.py: wrote {out}")


if __name__ == "__main__":
    main()
