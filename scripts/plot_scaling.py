#!/usr/bin/env python3
"""Plot a strong-scaling projection written by `halo3d-plan --json` (one JSON object per rank count).

    python3 scripts/plot_scaling.py scaling.jsonl --out docs/images/scaling_cosmoflow512_v100.png \
        [--title "CosmoFlow 512^3, batch 64, V100 + EDR"]

Left: the predicted step time of the chosen grid at each rank count (log axes), with the roofline efficiency
band shaded and the grid written at each point. Middle: the share of the step of each category (compute, halo
exchange, redistribution, allreduce, I/O: the exposed times, which add up to the step). Right: the
strong-scaling efficiency, T(P0) * P0 / (T(P) * P), against the smallest rank count P0 of the file. Needs matplotlib (Debian: python3-matplotlib; run it with
/usr/bin/python3 when another Python comes first on PATH).
"""
import argparse
import json
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_scaling.py needs matplotlib (Debian: apt-get install python3-matplotlib; "
             "then run it with /usr/bin/python3)")

CATEGORIES = [("compute_s", "compute"), ("halo_s", "halo exchange"),
              ("redistribute_s", "redistribution"), ("allreduce_s", "allreduce"), ("io_s", "I/O")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("projection", help="halo3d-plan --json output")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    rows = [json.loads(line) for line in open(a.projection) if line.strip()]
    rows = [r for r in rows if r.get("fits", True)]  # rank counts where no grid fits are left out
    if not rows:
        sys.exit(f"{a.projection}: no projection rows")
    rows.sort(key=lambda r: r["ranks"])
    ranks = [r["ranks"] for r in rows]
    x = list(range(len(rows)))
    # Three panels: the step time on a log axis (stacked bars on a log axis would hide the small categories
    # under the axis), the share of each category, and the efficiency.
    fig, (time_ax, left, right) = plt.subplots(1, 3, figsize=(17, 5))
    steps = [r["step_s"] for r in rows]
    bands = [r.get("step_band_s", [r["step_s"], r["step_s"]]) for r in rows]
    time_ax.plot(ranks, steps, marker="o", label="predicted step time")
    time_ax.fill_between(ranks, [min(b) for b in bands], [max(b) for b in bands], alpha=0.25,
                         label="efficiency band")
    for p, r in zip(ranks, rows):
        time_ax.annotate(r["grid"], (p, r["step_s"]), textcoords="offset points", xytext=(0, 8), ha="center",
                         fontsize=7, rotation=90)
    time_ax.set_xscale("log", base=2)
    time_ax.set_yscale("log")
    time_ax.set_xlabel("GPUs (ranks)")
    time_ax.set_ylabel("predicted step time (s)")
    time_ax.set_title("step time and the chosen grid")
    time_ax.grid(True, which="both", alpha=0.3)
    time_ax.legend(fontsize=8)
    bottom = [0.0] * len(rows)
    for key, label in CATEGORIES:
        values = [r.get(key, 0.0) / r["step_s"] if r["step_s"] > 0 else 0.0 for r in rows]
        left.bar(x, values, bottom=bottom, label=label)
        bottom = [b + v for b, v in zip(bottom, values)]
    left.set_xticks(x, [str(p) for p in ranks])
    left.set_xlabel("GPUs (ranks)")
    left.set_ylabel("share of the predicted step")
    left.set_ylim(0, 1.05)
    left.legend(fontsize=8)
    left.set_title("where the step goes")
    base = rows[0]["step_s"] * rows[0]["ranks"]
    eff = [base / (r["step_s"] * r["ranks"]) for r in rows]
    right.plot(ranks, eff, marker="o")
    right.set_xscale("log", base=2)
    right.set_ylim(0, 1.1)
    right.set_xlabel("GPUs (ranks)")
    right.set_ylabel(f"strong-scaling efficiency vs {rows[0]['ranks']} ranks")
    right.grid(True, alpha=0.3)
    right.set_title("efficiency")
    fig.suptitle(a.title or f"{rows[0]['model']} {rows[0]['input_size']}^3, batch {rows[0]['batch']}, "
                 f"{rows[0]['machine']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
