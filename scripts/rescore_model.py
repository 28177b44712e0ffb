#!/usr/bin/env python3
"""Re-price the grids of a finished validation (scripts/validate_model.sh) with the current step model, without
running anything again.

    scripts/rescore_model.py DIR [--machine FILE] [--plan build/apps/plan/halo3d-plan] [--json FILE] [--batch-reads]
                             [--slice-s Q] [--core-pacing F] [--add-timings FILE] [--layout-ratio RUN LEGACY]... [--drop-neighbours] [--only CONFIG...] [--ranks P...]

For every measured grid of DIR/<config>/P<ranks>/sweep.jsonl it runs halo3d-plan with that configuration's model
flags (those of scripts/validate_model.sh), the grid, all ranks on one node, and the machine file (default
the sweep's own DIR/<config>/P<ranks>.machine.json where validate_model.sh --fresh left one, else
DIR/this-machine.json: the calibration the sweeps used; --slice-s Q writes a copy with the scheduler slice set to Q
seconds; --core-pacing F one with core_pacing.fraction set to F; --add-timings FILE adds the layer timings of another machine file that this one lacks, such as the
input store timed after the sweeps; --layout-ratio RUN LEGACY adds the overlap-piece timings of split ranks,
RUN's timings with a "neighbours" key scaled by the machine's own whole-block timing of that layer and block over
LEGACY's timing of the same key (or of the block without neighbours), where RUN is `halo3d-plan --calibrate FILE
--paired LEGACY` (the whole block alternated with the pieces, run by run) or LEGACY a --calibrate-layout legacy
run of the same plans: the ratio of pieces to whole block measured in one process, applied to the quiet
calibration; given several times, the least timing of each key is kept; --drop-neighbours prices every rank with its
block's whole-block timing, as the model did before the overlap's pieces were calibrated: a calibration by
halo3d-sweep --calibrate holds both; --batch-reads prices the batch read with the machine file's timings of the
validation data, as the sweep did, instead of the read rate). It prints, per (config, P), the sweep's own figures (as scripts/model_accuracy.py) beside the
re-priced ones: median and worst |predicted - measured| / measured step time, and the grid the model picks with how
much slower it measured than the best. The measurements are the sweep's: this is in-sample for anything fitted
to them.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile

# scripts/validate_model.sh's configurations, as halo3d-plan flags.
CONFIGS = {
    "cosmoflow64_b2": ["--model", "cosmoflow", "--input-size", "64", "--width", "0.25", "--batch", "2"],
    "cosmoflow64_b4": ["--model", "cosmoflow", "--input-size", "64", "--width", "0.25", "--batch", "4"],
    "cosmoflow128_b2": ["--model", "cosmoflow", "--input-size", "128", "--width", "0.25", "--batch", "2"],
    "cosmoflow128_b4": ["--model", "cosmoflow", "--input-size", "128", "--width", "0.25", "--batch", "4"],
    "unet64_b2": ["--model", "unet3d", "--input-size", "64", "--base", "8", "--depth", "3", "--batch", "2"],
}
# The batch-read timing each configuration's data gets from halo3d-sweep --calibrate (halo3d-datagen's files).
BATCH_READS = {"cosmoflow": "batch read cosmoflow int16", "unet3d": "batch read unet float32"}


def load(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def price(plan, machine, flags, grid, ranks):
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as out:
        subprocess.run([plan, *flags, "--ranks", str(ranks), "--ranks-per-node", str(ranks), "--grid", grid,
                        "--machine", str(machine), "--json", out.name], check=True, stdout=subprocess.DEVNULL)
        return json.loads(pathlib.Path(out.name).read_text().splitlines()[0])


def summary(rows, key):
    errors = [abs(r[key] - r["measured_step_s"]) / r["measured_step_s"] for r in rows]
    best = min(rows, key=lambda r: r["measured_step_s"])
    pick = min(rows, key=lambda r: r[key])
    worst = max(rows, key=lambda r: abs(r[key] - r["measured_step_s"]) / r["measured_step_s"])
    return {"median_error": statistics.median(errors), "worst_error": max(errors), "worst_grid": worst["grid"],
            "pick_grid": pick["grid"], "pick_s": pick["measured_step_s"], "best_grid": best["grid"],
            "best_s": best["measured_step_s"], "pick_slowdown": pick["measured_step_s"] / best["measured_step_s"] - 1}


def key(t):
    return (t["layer"], tuple(t["input"]), tuple(t["output"]), t.get("threads", 1),
            tuple(t.get("neighbours", (0, 0, 0))))


def prepared(machine, args):
    """MACHINE as the options change it: a temporary copy, or MACHINE itself when none applies."""
    tmp = None
    if args.slice_s is not None or args.add_timings is not None or args.layout_ratio or args.drop_neighbours or \
            args.core_pacing is not None:
        doc = json.loads(machine.read_text())
        if args.core_pacing is not None:
            doc["core_pacing"] = {"fraction": args.core_pacing, "source": "scripts/rescore_model.py --core-pacing"}
        if args.drop_neighbours:
            doc["layers"] = [t for t in doc["layers"] if key(t)[4] == (0, 0, 0)]
        if args.slice_s is not None:
            doc["scheduler"] = {"slice_s": args.slice_s, "source": "scripts/rescore_model.py --slice-s"}
        if args.layout_ratio:
            least = [{}, {}]  # RUN, LEGACY: the least of each key over the files given
            for pair in args.layout_ratio:
                for i, path in enumerate(pair):
                    for t in json.loads(path.read_text())["layers"]:
                        k = key(t)
                        if k not in least[i] or t["forward_s"] + t.get("backward_s", 0) < \
                                least[i][k]["forward_s"] + least[i][k].get("backward_s", 0):
                            least[i][k] = t
            own = {key(t): t for t in doc["layers"]}
            added = 0
            for k, t in least[0].items():
                whole = k[:4] + ((0, 0, 0),)
                if k[4] == (0, 0, 0) or k in own or whole not in own or \
                        (k not in least[1] and whole not in least[1]):
                    continue
                m, leg = own[whole], least[1][k] if k in least[1] else least[1][whole]
                scaled = dict(t)
                for f in ("forward_s", "backward_s"):
                    scaled[f] = t[f] * (m[f] / leg[f] if leg[f] > 0 else 1.0)
                doc["layers"].append(scaled)
                added += 1
            print(f"--layout-ratio: {added} split-rank timings added", file=sys.stderr)
        if args.add_timings is not None:
            layers = doc["layers"]
            have = {key(t) for t in layers}
            extra = json.loads(args.add_timings.read_text())["layers"]
            layers += [t for t in extra if key(t) not in have]
        tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(doc, tmp)
        tmp.close()
        machine = pathlib.Path(tmp.name)
    return machine, tmp


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--machine", type=pathlib.Path)
    parser.add_argument("--plan", default="build/apps/plan/halo3d-plan")
    parser.add_argument("--slice-s", type=float, help="price with this scheduler slice (seconds)")
    parser.add_argument("--core-pacing", type=float,
                        help="price with this core pacing (the machine file's core_pacing.fraction)")
    parser.add_argument("--add-timings", type=pathlib.Path,
                        help="machine file whose layer timings missing from --machine are added")
    parser.add_argument("--layout-ratio", nargs=2, type=pathlib.Path, action="append", metavar=("RUN", "LEGACY"),
                        help="add split ranks' timings of RUN scaled by machine / LEGACY (same blocks)")
    parser.add_argument("--drop-neighbours", action="store_true",
                        help="price without the split ranks' overlap-piece timings (the whole blocks' instead)")
    parser.add_argument("--only", nargs="*", default=None, help="configurations to re-price (default: all)")
    parser.add_argument("--ranks", type=int, nargs="*", default=None, help="rank counts to re-price (default: all)")
    parser.add_argument("--json", type=pathlib.Path, help="also write every re-priced grid as JSON")
    parser.add_argument("--batch-reads", action="store_true",
                        help="price the batch read with the machine file's batch-read timings, as the sweep did "
                             "(default: at the read rate, as before they existed)")
    args = parser.parse_args()
    print("| model | P | grids | sweep: median | worst | pick vs best | re-priced: median | worst (grid) "
          "| pick | measured best | pick vs best |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    records = []
    temporaries = []
    # validate_model.sh --fresh keeps each sweep's own calibration beside it; without --machine each sweep is
    # re-priced with the file it was priced with.
    def machine_of(config, ranks):
        own = args.dir / config / f"P{ranks}.machine.json"
        path = args.machine or (own if own.exists() else args.dir / "this-machine.json")
        path, tmp = prepared(path, args)
        if tmp:
            temporaries.append(pathlib.Path(tmp.name))
        return path
    try:
        for path in sorted(args.dir.glob("*/P*/sweep.jsonl")):
            config, ranks = path.parent.parent.name, int(path.parent.name[1:])
            if config not in CONFIGS or (args.only is not None and config not in args.only):
                continue
            if args.ranks is not None and ranks not in args.ranks:
                continue
            rows = [r for r in load(path) if r.get("status") == "measured" and r.get("measured_step_s")
                    and r.get("predicted_step_s")]
            if not rows:
                continue
            machine = machine_of(config, ranks)
            for r in rows:
                flags = CONFIGS[config]
                if args.batch_reads:
                    flags = [*flags, "--batch-read", BATCH_READS[flags[1]]]
                p = price(args.plan, machine, flags, r["grid"], ranks)
                r["repriced_step_s"] = p["step_s"]
                records.append({"config": config, "ranks": ranks, "grid": r["grid"],
                                "measured_step_s": r["measured_step_s"], "sweep_predicted_step_s":
                                r["predicted_step_s"], "repriced": p})
            old, new = summary(rows, "predicted_step_s"), summary(rows, "repriced_step_s")
            print(f"| {config} | {ranks} | {len(rows)} | {100 * old['median_error']:.1f}% "
                  f"| {100 * old['worst_error']:.1f}% | +{100 * old['pick_slowdown']:.1f}% "
                  f"| {100 * new['median_error']:.1f}% | {100 * new['worst_error']:.1f}% ({new['worst_grid']}) "
                  f"| {new['pick_grid']} ({new['pick_s']:.3f} s) | {new['best_grid']} ({new['best_s']:.3f} s) "
                  f"| +{100 * new['pick_slowdown']:.1f}% |", flush=True)
    finally:
        for t in temporaries:
            t.unlink()
    if args.json:
        args.json.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
