#!/usr/bin/env python3
"""Summary of scripts/device_check.sh: test pass/fail counts, the GFLOP/s table of bench_conv3d_cudnn with the
ratios halo3d / cuDNN per pass and precision, the CosmoFlow stack and halo pack figures, and the steps with their
times. Writes summary.md and summary.json into --out; exit status 1 if a step or a test failed."""

import argparse
import glob
import json
import os
import re
import sys

# The acceptance bar of issue 14: halo3d's conv3d at least this fraction of cuDNN fp32 on shapes (b)-(e).
BAR = 0.5
BAR_SHAPES = ["C16_K32_D64", "C32_K64_D32", "C64_K64_D16", "C32_K32_D64"]
PRECISIONS = ["cudnn_fp32", "cudnn_tf32", "cudnn_bf16", "cudnn_bf16_cl"]
PASSES = ["fwd", "bwd_data", "bwd_filter"]


def last_words(log_path):
    """Why a program or step failed: its log's first error line, else its last line (": ..."), or ""."""
    try:
        lines = [line.strip() for line in open(log_path, errors="replace") if line.strip()]
    except OSError:
        return ""
    errors = [line for line in lines if re.search(r"error|abort|terminate|what\(\)", line, re.IGNORECASE)]
    line = errors[0] if errors else (lines[-1] if lines else "")
    return (": " + line[:200]) if line else ""


def read_steps(logs):
    """The steps of steps.tsv; a failed step whose log is logs/<step>.log gets that log's last words."""
    steps = []
    path = os.path.join(logs, "steps.tsv")
    if os.path.exists(path):
        for line in open(path):
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3:
                step = {"step": parts[0], "status": parts[1], "seconds": int(parts[2] or 0),
                        "note": parts[3] if len(parts) > 3 else ""}
                if step["status"] == "FAIL":
                    step["note"] += last_words(os.path.join(logs, step["step"] + ".log"))
                steps.append(step)
    return steps


def read_tests(logs):
    """One record per test program: cases, skipped cases, failures, exit status; a program without a report crashed
    or timed out."""
    programs = []
    for rc_path in sorted(glob.glob(os.path.join(logs, "tests", "*.rc"))):
        name = os.path.basename(rc_path)[:-3]
        rc = int(open(rc_path).read().strip() or 1)
        record = {"program": name, "exit": rc, "tests": 0, "skipped": 0, "failures": 0, "failed": [], "report": False}
        report = os.path.join(logs, "tests", name + ".json")
        try:
            data = json.load(open(report))
            record["report"] = True
            record["tests"] = int(data.get("tests", 0)) - int(data.get("disabled", 0))
            record["failures"] = int(data.get("failures", 0)) + int(data.get("errors", 0))
            for suite in data.get("testsuites", []):
                for case in suite.get("testsuite", []):
                    # GTEST_SKIP (a host-only case on a device): neither passed nor failed.
                    if case.get("result") == "SKIPPED" and not case.get("failures"):
                        record["skipped"] += 1
                    if case.get("failures"):
                        record["failed"].append(suite.get("name", "?") + "." + case.get("name", "?"))
        except (OSError, ValueError):
            pass
        if rc != 0 and record["failures"] == 0:
            record["failures"] = 1  # crashed, timed out (124) or failed outside a case
            record["failed"].append("exit status %d%s%s" % (rc, "" if record["report"] else ", no report",
                                                            last_words(os.path.join(logs, "tests", name + ".log"))))
        programs.append(record)
    return programs


def read_benchmarks(path):
    try:
        data = json.load(open(path))
    except (OSError, ValueError):
        return None
    return data.get("benchmarks", [])


def conv_table(benchmarks):
    """{(pass, shape): {variant: record}} from names like halo3d_fp32/fwd/C4_K16_D128."""
    table = {}
    order = []
    for b in benchmarks:
        if b.get("run_type", "iteration") != "iteration":
            continue
        parts = b["name"].split("/")
        if len(parts) < 3:
            continue
        variant, pass_, shape = parts[0], parts[1], parts[2]
        key = (pass_, shape)
        if key not in table:
            table[key] = {}
            order.append(key)
        entry = {"error": b.get("error_message") if b.get("error_occurred") else None,
                 "gflops": b.get("GFLOP/s"), "ms": b.get("real_time"), "label": b.get("label", "")}
        table[key][variant] = entry
    return table, order


def fmt(x, digits=0):
    return "-" if x is None else ("%.*f" % (digits, x))


def benchmark_table(md, summary, key, benchmarks, heading, columns, record, cells, show_errors):
    """A section of summary.md with one row per run of a benchmark program, and the same runs in summary[key]:
    record(b) picks a run's figures, cells(record) formats them in the order of `columns`. A run that failed is
    a row with its error message (show_errors) or left out, and never in summary[key]."""
    md += ["", heading, "", "| %s |" % " | ".join(columns), "|" + "---|" * len(columns)]
    summary[key] = []
    for b in benchmarks:
        if b.get("error_occurred"):
            if show_errors:
                md.append("| %s | error: %s |%s" % (b["name"], b.get("error_message"), " |" * (len(columns) - 2)))
            continue
        r = record(b)
        md.append("| %s |" % " | ".join(cells(r)))
        summary[key].append(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", default="real")
    ap.add_argument("--elapsed", type=int, default=0)
    ap.add_argument("--budget", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    steps = read_steps(args.logs)
    programs = read_tests(args.logs)
    summary = {"mode": args.mode, "elapsed_s": args.elapsed, "budget_s": args.budget, "steps": steps}
    gpu = os.path.join(args.logs, "gpu.txt")
    if os.path.exists(gpu):
        summary["gpu"] = open(gpu).read().strip()
    md = ["# halo3d device check (%s)" % ("dry run, OpenMP backend" if args.mode == "dry" else "GPU"), ""]
    if "gpu" in summary:
        md += ["GPU: " + summary["gpu"], ""]
    md += ["Finished in %d s (budget %d s)." % (args.elapsed, args.budget), ""]

    md += ["## Steps", "", "| step | status | s | note |", "|---|---|---|---|"]
    md += ["| %s | %s | %d | %s |" % (s["step"], s["status"], s["seconds"], s["note"]) for s in steps]

    total = sum(p["tests"] for p in programs)
    failed = sum(p["failures"] for p in programs)
    skipped = sum(p["skipped"] for p in programs)
    # Per program: a program that died before its report counts one failure but has no case to take it from.
    passed = sum(max(p["tests"] - p["skipped"] - p["failures"], 0) for p in programs)
    summary["tests"] = {"programs": len(programs), "cases": total, "skipped": skipped, "failed": failed,
                        "per_program": programs}
    md += ["", "## Tests", "",
           "%d programs, %d cases, %d passed, %d skipped, %d failed." %
           (len(programs), total, passed, skipped, failed),
           "", "| program | cases | skipped | failed | exit |", "|---|---|---|---|---|"]
    for p in programs:
        md.append("| %s | %d | %d | %d | %d |" % (p["program"], p["tests"], p["skipped"], p["failures"], p["exit"]))
    for p in programs:
        for case in p["failed"][:20]:
            md.append("- FAILED %s: %s" % (p["program"], case))

    # bench_conv3d_cudnn: GFLOP/s per variant and the ratio of halo3d to each cuDNN variant.
    conv = read_benchmarks(os.path.join(args.logs, "bench_conv3d_cudnn.json"))
    if conv is not None:
        table, order = conv_table(conv)
        rows, bar_rows = [], []
        md += ["", "## conv3d: halo3d (fp32) against cuDNN, GFLOP/s and halo3d / cuDNN", "",
               "fp32 is like for like (cuDNN without tensor cores); TF32 and bf16 are cuDNN's tensor-core figures, "
               "against halo3d's fp32.", "",
               "| pass | shape | halo3d fp32 | cuDNN fp32 | ratio | cuDNN TF32 | ratio | cuDNN bf16 | ratio "
               "| cuDNN bf16 NDHWC | ratio |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for key in order:
            pass_, shape = key
            v = table[key]
            ours = (v.get("halo3d_fp32") or {}).get("gflops")
            row = {"pass": pass_, "shape": shape, "halo3d_fp32": ours}
            cells = ["%s | %s | %s" % (pass_, shape, fmt(ours))]
            for prec in PRECISIONS:
                e = v.get(prec) or {}
                theirs = e.get("gflops")
                ratio = ours / theirs if ours and theirs else None
                row[prec] = theirs
                row[prec + "_ratio"] = ratio
                row[prec + "_algo"] = e.get("label") or e.get("error")
                cells.append("%s | %s" % (fmt(theirs) if not e.get("error") else "n/a", fmt(ratio, 2)))
            rows.append(row)
            md.append("| " + " | ".join(cells) + " |")
            if shape in BAR_SHAPES and pass_ in PASSES:
                bar_rows.append(row)
        summary["conv3d"] = rows
        if bar_rows:
            low = [r for r in bar_rows if not r["cudnn_fp32_ratio"] or r["cudnn_fp32_ratio"] < BAR]
            summary["conv3d_bar"] = {"bar": BAR, "shapes": BAR_SHAPES, "below": low}
            md += ["", "Acceptance bar (issue 14): halo3d >= %.1fx cuDNN fp32 on (b)-(e), every pass: %s" %
                   (BAR, "met" if not low else "NOT met on " + ", ".join(
                       "%s/%s (%s)" % (r["pass"], r["shape"], fmt(r["cudnn_fp32_ratio"], 2)) for r in low))]
        algos = [(r["pass"], r["shape"], p, r[p + "_algo"]) for r in rows for p in PRECISIONS if r.get(p + "_algo")]
        if algos:
            md += ["", "<details><summary>cuDNN algorithms</summary>", ""]
            md += ["- %s %s %s: %s" % a for a in algos]
            md += ["", "</details>"]

    stack = read_benchmarks(os.path.join(args.logs, "bench_cosmoflow_stack.json"))
    if stack is not None:
        benchmark_table(md, summary, "cosmoflow_stack", stack,
                        "## CosmoFlow conv stack, forward + backward on one device",
                        ["benchmark", "step ms", "forward ms", "backward ms", "conv GFLOP/s"],
                        lambda b: {k: b.get(k) for k in ("name", "real_time", "fwd_ms", "bwd_ms", "GFLOP/s")},
                        lambda r: [r["name"], fmt(r["real_time"], 2), fmt(r["fwd_ms"], 2), fmt(r["bwd_ms"], 2),
                                   fmt(r["GFLOP/s"])],
                        show_errors=True)

    pack = read_benchmarks(os.path.join(args.logs, "bench_halo_pack.json"))
    if pack is not None:
        benchmark_table(md, summary, "halo_pack", pack,
                        "## Halo pack and unpack (26 regions of a 16 x 64^3 float block)",
                        ["benchmark", "path", "us", "GB/s"],
                        lambda b: {"name": b["name"], "path": b.get("label"), "us": b.get("real_time"),
                                   "GB/s": b.get("bytes_per_second", 0) / 1e9},
                        lambda r: [r["name"], r["path"] or "", fmt(r["us"], 1), fmt(r["GB/s"], 1)],
                        show_errors=False)

    bad_steps = [s for s in steps if s["status"] == "FAIL"]
    skipped = [s for s in steps if s["status"] == "skipped"]
    ok = not bad_steps and failed == 0 and programs
    summary["ok"] = bool(ok)
    md += ["", "**%s**: %d failed steps, %d failed test cases%s." % (
        "PASS" if ok else "FAIL", len(bad_steps), failed,
        (", %d steps skipped over the budget" % len(skipped)) if skipped else "")]
    open(os.path.join(args.out, "summary.md"), "w").write("\n".join(md) + "\n")
    json.dump(summary, open(os.path.join(args.out, "summary.json"), "w"), indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
