#!/usr/bin/env python3
"""Plot a strong-scaling projection written by `halo3d-plan --json` (one JSON object per rank count).

    python3 scripts/plot_scaling.py scaling.jsonl --out docs/images/scaling_cosmoflow512_v100.png \
        [--title "CosmoFlow 512^3, batch 64, V100 + EDR"]

Left: the predicted step time of the chosen grid at each rank count, stacked by category (compute, halo
exchange, redistribution, allreduce, I/O), with the roofline efficiency band as an error bar and the grid
written above each bar. Right: the strong-scaling efficiency, T(P0) * P0 / (T(P) * P), against the
smallest rank count P0 of the file. Needs matplotlib (Debian: python3-matplotlib; run it with
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
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    bottom = [0.0] * len(rows)
    for key, label in CATEGORIES:
        values = [r.get(key, 0.0) for r in rows]
        left.bar(x, values, bottom=bottom, label=label)
        bottom = [b + v for b, v in zip(bottom, values)]
    for i, r in enumerate(rows):
        lo, hi = r.get("step_band_s", [r["step_s"], r["step_s"]])
        # The band: the slow end (low efficiency) above, the fast end below.
        left.errorbar(i, r["step_s"], yerr=[[r["step_s"] - min(lo, hi)], [max(lo, hi) - r["step_s"]]],
                      fmt="none", ecolor="black", capsize=4)
        left.text(i, max(lo, hi, r["step_s"]) * 1.03, r["grid"], ha="center", va="bottom", fontsize=7,
                  rotation=90)
    left.set_xticks(x, [str(p) for p in ranks])
    left.set_xlabel("GPUs (ranks)")
    left.set_ylabel("predicted step time (s)")
    left.set_yscale("log")
    left.legend(fontsize=8)
    left.set_title("step time by category (bar: efficiency band)")
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
