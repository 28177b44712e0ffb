#!/usr/bin/env python3
"""Re-scores validation runs made before the sweep averaged its rounds (docs/scaling.md, "Five rounds, and the
mean of the rounds"): how issue 11's median line reads when each grid's measured step is the mean of its rounds'
medians, and its prediction is priced with each layer's mean over its passes, instead of both medians.

    scripts/round_statistic.py DIR [DIR ...] [--limit 0.15] [--ranks 1,2,4]

Each DIR is the output of scripts/validate_model.sh --each-round (DIR/<config>/P<ranks>.log and
DIR/<config>/P<ranks>/sweep.jsonl). Per (config, P) it scores three ways:
  median   the sweep's own figures: the median of all steps against the prediction from each layer's median
           pass (what those sweeps recorded);
  measured the mean of the rounds' medians (step_s.round_medians, exact) against the same prediction;
  both     the mean of the rounds' medians against the prediction scaled by one factor per sweep, the sum of
           every printed layer timing's mean over its passes divided by the sum of their medians. That is an
           approximation: a step model priced with the means is not linear in them everywhere, and the log does
           not print every timing the sweep pooled (the whole blocks paired with the overlap's pieces).
It prints per run how many (config, P) meet the limit each way and the misses. Exit status 0 whatever the figures.
"""
import argparse
import json
import pathlib
import re
import statistics

TIMED = re.compile(r"\s+timed (?!batch read)(.+?): (?:forward ([\d.e+-]+) ms, backward ([\d.e+-]+)|([\d.e+-]+)) ms$")


def passes(log):
    """Each calibration pass's printed timings: {what was timed: ms, forward + backward} (the batch reads aside)."""
    out = []
    for line in log.read_text().splitlines():
        if line.startswith("calibrating on rank 0") or "timing the layers again" in line:
            out.append({})
            continue
        m = TIMED.match(line)
        if m and out:
            out[-1][m[1]] = sum(float(x) for x in m.groups()[1:] if x)
    return out


def factor(log):
    """Sum of per-timing means over sum of per-timing medians, over the timings every pass printed (1 if none)."""
    ps = passes(log)
    keys = set.intersection(*(set(p) for p in ps)) if len(ps) > 1 else set()
    if not keys:
        return 1.0
    return (sum(statistics.mean(p[k] for p in ps) for k in keys) /
            sum(statistics.median(p[k] for p in ps) for k in keys))


def score(run, ranks):
    res = {}
    for path in sorted(pathlib.Path(run).glob("*/P*/sweep.jsonl")):
        p = path.parent.name
        if not p[1:].isdigit() or int(p[1:]) not in ranks:
            continue
        config = path.parent.parent.name
        log = path.parent.parent / f"{p}.log"
        f = factor(log) if log.exists() else 1.0
        errs = {"median": [], "measured": [], "both": []}
        for line in path.read_text().splitlines():
            r = json.loads(line)
            if r.get("status") != "measured" or not r.get("predicted_step_s"):
                continue
            pred, med = r["predicted_step_s"], r["measured_step_s"]
            mean = statistics.mean(r["step_s"]["round_medians"])
            errs["median"].append(abs(pred - med) / med)
            errs["measured"].append(abs(pred - mean) / mean)
            errs["both"].append(abs(pred * f - mean) / mean)
        if errs["median"]:
            res[(config, p)] = {k: statistics.median(v) for k, v in errs.items()}
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--limit", type=float, default=0.15)
    ap.add_argument("--ranks", default="1,2,4")
    a = ap.parse_args()
    ranks = {int(x) for x in a.ranks.split(",")}
    totals = {"median": 0, "measured": 0, "both": 0}
    rows = 0
    for run in a.runs:
        res = score(run, ranks)
        rows += len(res)
        counts = {k: sum(v[k] <= a.limit for v in res.values()) for k in totals}
        for k in totals:
            totals[k] += counts[k]
        misses = ", ".join(f"{c} {p}: {v['median']:.1%} / {v['measured']:.1%} / {v['both']:.1%}"
                           for (c, p), v in res.items() if max(v.values()) > a.limit)
        print(f"{pathlib.Path(run).name}: within {a.limit:.0%}: median {counts['median']}/{len(res)}, "
              f"measured {counts['measured']}/{len(res)}, both {counts['both']}/{len(res)}"
              + (f"; over the limit one way or another (median / measured / both): {misses}" if misses else ""))
    print(f"all: median {totals['median']}/{rows}, measured {totals['measured']}/{rows}, both {totals['both']}/{rows}")


if __name__ == "__main__":
    main()
