#!/usr/bin/env python3
"""How close any prediction fixed in advance could come to the sweeps of several protocol runs: the noise floor
of issue 11's median line (median |predicted - measured| / measured step time <= 15% for every (model, P)).

    scripts/model_noise_floor.py DIR [DIR ...] [--ranks 1,2,4] [--limit 0.15] [--fit-runs K]

Each DIR is the output of scripts/validate_model.sh (DIR/<config>/P<ranks>/sweep.jsonl). For every run and
(config, P) it scores the median error of three predictors of each grid's measured step:
  model   the run's own predictions, as scripts/model_accuracy.py scores them;
  factor  the model's predictions times one factor per (config, P), the factor in 0.80-1.20 that passes the most
          runs: fitted on the runs it scores, an upper bound for any constant correction of the model; with
          --fit-runs K, fitted on the first K runs only, and every count below is over the runs after them (out of
          sample);
  oracle  each grid's median measured step over all the given runs (its own run included): a prediction that
          knows every grid's typical step on this machine but not the machine's speed in a given run, i.e. the
          best that a calibration taken once could do.
It prints per run how many (config, P) are within the limit under each, the misses, and how many consecutive
pairs of runs have every (config, P) within it. Exit status 0 whatever the figures.
"""
import argparse
import pathlib
import statistics

from model_accuracy import load as load_rows  # a sweep.jsonl's records


def load(run_dir, ranks):
    """{(config, P): [(grid, predicted_s or None, measured_s)]} of one run's measured grids."""
    out = {}
    for path in sorted(pathlib.Path(run_dir).glob("*/P*/sweep.jsonl")):
        p = path.parent.name
        if not p[1:].isdigit() or int(p[1:]) not in ranks:
            continue
        rows = [(r["grid"], r.get("predicted_step_s"), r["measured_step_s"]) for r in load_rows(path)
                if r.get("status") == "measured" and r.get("measured_step_s")]
        if rows:
            out[(path.parent.parent.name, p)] = rows
    return out


def median_error(pairs):
    return statistics.median(abs(pred - meas) / meas for pred, meas in pairs)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", type=pathlib.Path)
    parser.add_argument("--ranks", default="1,2,4", help="the P to score (default 1,2,4)")
    parser.add_argument("--limit", type=float, default=0.15)
    parser.add_argument("--fit-runs", type=int, default=0,
                        help="fit the factors on the first K runs and count only the runs after them")
    args = parser.parse_args()
    ranks = {int(x) for x in args.ranks.split(",")}
    runs = [(d.name, load(d, ranks)) for d in args.dirs]
    keys = sorted({k for _, run in runs for k in run})

    # oracle: each grid's median measured step over the runs
    typical = {}
    for key in keys:
        by_grid = {}
        for _, run in runs:
            for grid, _, meas in run.get(key, []):
                by_grid.setdefault(grid, []).append(meas)
        typical[key] = {g: statistics.median(v) for g, v in by_grid.items()}

    def passes(run, key, predict):
        """(within the limit, median error or None where no grid is priced)"""
        pairs = [(predict(grid, pred), meas) for grid, pred, meas in run[key]]
        pairs = [(p, m) for p, m in pairs if p]
        err = median_error(pairs) if pairs else None
        return err is not None and err <= args.limit, err

    factors = {}
    for key in keys:
        best = (-1, 1.0)
        for i in range(81):
            f = 0.80 + 0.005 * i
            n = sum(passes(run, key, lambda g, p, f=f: p * f if p else None)[0]
                    for _, run in runs[:args.fit_runs or len(runs)] if key in run)
            if n > best[0] or (n == best[0] and abs(f - 1) < abs(best[1] - 1)):
                best = (n, f)
        factors[key] = best[1]

    predictors = {
        "model": lambda key: (lambda g, p: p),
        "factor": lambda key: (lambda g, p: p * factors[key] if p else None),
        "oracle": lambda key: (lambda g, p: typical[key][g]),
    }
    print(f"{len(runs)} runs, {len(keys)} (config, P), limit {100 * args.limit:.0f}%" +
          (f"; factors fitted on the first {args.fit_runs}, counts over the {len(runs) - args.fit_runs} after them"
           if args.fit_runs else ""))
    print("factors: " + ", ".join(f"{c}/{p} {factors[(c, p)]:.3f}" for c, p in keys))
    print("| run | model | factor | oracle | model's misses | oracle's misses |")
    print("|---|---|---|---|---|---|")
    all_pass = {name: [] for name in predictors}
    totals = {name: 0 for name in predictors}
    for name, run in runs[args.fit_runs:]:
        cells, misses = [], {}
        for pname, make in predictors.items():
            ok, miss = 0, []
            for key in keys:
                if key not in run:
                    continue
                good, err = passes(run, key, make(key))
                ok += good
                if not good:
                    miss.append(f"{key[0]} {key[1]} {100 * err:.1f}%" if err is not None else f"{key[0]} {key[1]}")
            cells.append(f"{ok} of {sum(1 for k in keys if k in run)}")
            totals[pname] += ok
            misses[pname] = miss
            all_pass[pname].append(not miss)
        print(f"| {name} | {' | '.join(cells)} | {'; '.join(misses['model']) or '—'} | "
              f"{'; '.join(misses['oracle']) or '—'} |")
    for pname, flags in all_pass.items():
        pairs = sum(1 for a, b in zip(flags, flags[1:]) if a and b)
        print(f"{pname}: {totals[pname]} (config, P) within the limit; {sum(flags)} runs with every one within it; "
              f"{pairs} consecutive pairs of such runs")


if __name__ == "__main__":
    main()
