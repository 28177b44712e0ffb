#!/usr/bin/env python3
"""Issue 12's conv3d line: halo3d against oneDNN on shapes (a)-(e), at 1 and 2 threads, in the same process.

    scripts/conv_line.py OUT [--runs 3] [--build build]     # runs the benchmark, then prints the table
    scripts/conv_line.py OUT --table                        # the table of runs already in OUT

Each run is one bench_conv3d_onednn process per thread count (3 repetitions of 0.2 s, randomly interleaved, medians
kept; fma_peak beside them), written to OUT/line_r{run}_t{threads}.json. The table gives oneDNN's median time over
halo3d's (above 1.0: halo3d is faster) per pass and per run, and forward+backward as the ratio of the sums of the
three passes. The line holds when every forward and forward+backward ratio of every run is at least 1.0; the ratios
below it are bold. docs/PERFORMANCE.md, "Issue 12: the same comparison on the AMD EPYC machine", has the runs so far.
"""
import argparse
import json
import os
import subprocess
import sys

SHAPES = {"C4_K16_D128": "(a)", "C16_K32_D64": "(b)", "C32_K64_D32": "(c)", "C64_K64_D16": "(d)",
          "C32_K32_D64": "(e)"}
PASSES = ("fwd", "bwd_data", "bwd_filter")
THREADS = (1, 2)


def run(out, runs, build):
    bench = os.path.join(build, "bench", "kernels", "bench_conv3d_onednn")
    if not os.access(bench, os.X_OK):
        sys.exit(f"conv_line: {bench} not found (build with oneDNN, the benchmarks on)")
    shapes = "|".join(SHAPES)
    # The table reads every line_r*_t*.json in OUT: an earlier, longer run's files would join this one's.
    for f in os.listdir(out):
        if f.startswith("line_r") and f.endswith(".json"):
            os.remove(os.path.join(out, f))
    for r in range(1, runs + 1):
        for t in THREADS:
            env = dict(os.environ, OMP_NUM_THREADS=str(t), OMP_PROC_BIND="false")
            path = os.path.join(out, f"line_r{r}_t{t}.json")
            print(f"conv_line: run {r} of {runs}, {t} thread(s) -> {path}", file=sys.stderr, flush=True)
            with open(path, "w") as f:
                subprocess.run([bench, f"--benchmark_filter=fma_peak|/({shapes})/", "--benchmark_min_time=0.2",
                                "--benchmark_repetitions=3", "--benchmark_enable_random_interleaving=true",
                                "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                               env=env, stdout=f, stderr=subprocess.DEVNULL, check=True)


def load(path):
    medians, peak = {}, None
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        if b["run_name"].startswith("fma_peak"):
            peak = b["GFLOP/s"]
        else:
            medians[b["run_name"].replace("/manual_time", "")] = b["real_time"]
    return medians, peak


def table(out):
    held = True
    print("| shape | threads | fwd | f+b | backward-data | backward-filter |")
    print("|---|---:|---|---|---|---|")
    peaks = {}
    for t in THREADS:
        runs = sorted(int(f.split("_r")[1].split("_")[0]) for f in os.listdir(out) if f.endswith(f"_t{t}.json"))
        if not runs:
            sys.exit(f"conv_line: no line_r*_t{t}.json in {out}")
        loaded = [load(os.path.join(out, f"line_r{r}_t{t}.json")) for r in runs]
        for r, (med, _) in zip(runs, loaded):
            names = [f"{lib}conv3d_{p}/{shape}" for shape in SHAPES for p in PASSES for lib in ("", "onednn_")]
            absent = [n for n in names if n not in med]
            if absent:
                sys.exit(f"conv_line: line_r{r}_t{t}.json lacks {len(absent)} of the line's benchmarks "
                         f"(first: {absent[0]}); was it built with oneDNN, and run with this script's filter?")
        peaks[t] = [round(p) for _, p in loaded if p]
        for shape, label in SHAPES.items():
            cols = {k: [] for k in ("fwd", "fb", "bwd_data", "bwd_filter")}
            for med, _ in loaded:
                for p in PASSES:
                    cols[p].append(med[f"onednn_conv3d_{p}/{shape}"] / med[f"conv3d_{p}/{shape}"])
                cols["fb"].append(sum(med[f"onednn_conv3d_{p}/{shape}"] for p in PASSES) /
                                  sum(med[f"conv3d_{p}/{shape}"] for p in PASSES))
            for k in ("fwd", "fb"):
                held = held and min(cols[k]) >= 1.0

            def cell(k, on_line):
                return " / ".join(f"**{v:.3f}**" if on_line and v < 1.0 else f"{v:.3f}" for v in cols[k])

            print(f"| {label} {shape} | {t} | {cell('fwd', True)} | {cell('fb', True)} | "
                  f"{cell('bwd_data', False)} | {cell('bwd_filter', False)} |")
    print(f"\nFMA peak GFLOP/s per run: {peaks}")
    print(f"every forward and forward+backward ratio >= 1.0: {'yes' if held else 'no'}")
    return held


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--build", default="build")
    ap.add_argument("--table", action="store_true", help="only print the table of the runs in OUT")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if not args.table:
        run(args.out, args.runs, args.build)
    return 0 if table(args.out) else 1


if __name__ == "__main__":
    sys.exit(main())
