#!/usr/bin/env bash
# The performance model's validation on this machine (docs/scaling.md, "Validation"): halo3d-sweep with
# --calibrate at P = 1, 2, 4 and 8 ranks (one OpenMP thread per rank) of CosmoFlow 64^3 and 128^3 (width 0.25,
# batch 2 and 4) and U-Net 64^3 (base 8, depth 3, batch 2), over every valid grid; then scripts/model_accuracy.py
# prints, per (model, P), the median and worst |predicted - measured| / measured step time, whether the grid the
# model picks (--grid auto's choice) measures within 10% of the measured best, and the worst memory error.
#
#   scripts/validate_model.sh [OUT] [--build DIR] [--steps S] [--warmup W] [--rounds R] [--ranks "1 2 4 8"]
#                             [--only NAME...] [--fresh] [--each-round]
#
# --fresh gives each sweep a machine file of its own (OUT/<config>/P<ranks>.machine.json) with the layer table and
# scheduler slice emptied, so that its --calibrate times every layer it prices right before the sweep runs, in the
# machine's state of that minute (docs/scaling.md, "Calibrated in place"). No sweep reuses a block that an earlier
# sweep timed minutes before, in another state of the machine. After the sweep its timings are merged into
# OUT/this-machine.json (a key timed again replaces the older timing), which the probe reads against.
# Without it the sweeps price with the shipped file's timings and time only the keys it lacks.
# --each-round passes halo3d-sweep --calibrate-each-round: the layers are timed again before each
# later round and the grids priced with each layer's mean over the rounds, so that the timings
# sample the same minutes as the steps (docs/scaling.md, "Time-sharing in
# proportion, and the layers timed in each round").
#
# Each sweep runs its grids in turn R times (halo3d-sweep --rounds; default 3), W warm-up and S measured steps each
# time, and a grid's figures pool its rounds: on this shared VM a stretch of a minute or two in which the cores run
# 20-30% slower (machine_drift.py sees it) would otherwise fall on whichever grids ran in it.
#
# The calibration (layer timings, shared-memory link, reduction rate) goes into OUT/this-machine.json, a copy of
# machines/this-machine.json; copy it back to update the shipped file. Run it on a quiet machine: every figure is
# a wall-clock time. Before and after each sweep scripts/machine_drift.py times a probe model's layers against that
# file (OUT/<config>/P<ranks>.drift-before.json and .drift-after.json): model_accuracy.py prints the ratio beside
# the errors, so that a machine which changed speed under a sweep is seen as such.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$repo/validation}"
shift || true
build="$repo/build"
steps=5
warmup=1
rounds=3
ranks="1 2 4 8"
only=()
fresh=0
each_round=()
while (($#)); do
  case "$1" in
    --build) build="$2"; shift ;;
    --steps) steps="$2"; shift ;;
    --warmup) warmup="$2"; shift ;;
    --rounds) rounds="$2"; shift ;;
    --ranks) ranks="$2"; shift ;;
    --only) only+=("$2"); shift ;;
    --fresh) fresh=1 ;;
    --each-round) each_round=(--calibrate-each-round) ;;
    *) echo "validate_model: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out/data"
machine="$out/this-machine.json"
# empty_machine SRC DST: SRC with its layer table and scheduler slice emptied, for one sweep to calibrate.
empty_machine() {
  python3 - "$1" "$2" <<'PY'
import json, sys
machine = json.load(open(sys.argv[1]))
machine["layers"] = []
machine.pop("scheduler", None)
machine["source"] = ("validate_model.sh --fresh: machines/this-machine.json with its layer table and scheduler "
                     "slice emptied; every timing below was taken by the sweep it prices, just before it ran")
json.dump(machine, open(sys.argv[2], "w"), indent=1)
PY
}
# merge_machine SRC DST: SRC's layer timings and scheduler slice into DST, replacing the keys both hold.
merge_machine() {
  python3 - "$1" "$2" "$repo/scripts" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from machine_drift import key  # a timing's key: every field but its times
src, dst = (json.load(open(p)) for p in sys.argv[1:3])
layers = {key(t): t for t in dst.get("layers", [])}
layers.update({key(t): t for t in src.get("layers", [])})
dst["layers"] = list(layers.values())
if "scheduler" in src:
    dst["scheduler"] = src["scheduler"]
json.dump(dst, open(sys.argv[2], "w"), indent=1)
PY
}
if [[ ! -f "$machine" ]]; then
  cp "$repo/machines/this-machine.json" "$machine"
  if ((fresh)); then empty_machine "$machine" "$machine"; fi
fi
mpirun_flags=(--oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && mpirun_flags+=(--allow-run-as-root)
datagen="$build/apps/datagen/halo3d-datagen"
sweep="$build/apps/sweep/halo3d-sweep"
drift() { python3 "$repo/scripts/machine_drift.py" "$machine" "$1" --plan "$build/apps/plan/halo3d-plan"; }

[[ -d "$out/data/c64" ]] || "$datagen" cosmoflow --size 64 --count 16 --out "$out/data/c64" > /dev/null
[[ -d "$out/data/c128" ]] || "$datagen" cosmoflow --size 128 --count 8 --out "$out/data/c128" > /dev/null
[[ -d "$out/data/u64" ]] || "$datagen" segmentation --size 64 --count 8 --out "$out/data/u64" > /dev/null

# name | model flags
configs=(
  "cosmoflow64_b2|--model cosmoflow --data $out/data/c64 --width 0.25 --batch 2"
  "cosmoflow64_b4|--model cosmoflow --data $out/data/c64 --width 0.25 --batch 4"
  "cosmoflow128_b2|--model cosmoflow --data $out/data/c128 --width 0.25 --batch 2"
  "cosmoflow128_b4|--model cosmoflow --data $out/data/c128 --width 0.25 --batch 4"
  "unet64_b2|--model unet3d --data $out/data/u64 --base 8 --depth 3 --batch 2"
)
for config in "${configs[@]}"; do
  name="${config%%|*}"
  flags="${config#*|}"
  if ((${#only[@]})) && [[ " ${only[*]} " != *" $name "* ]]; then continue; fi
  for p in $ranks; do
    dir="$out/$name/P$p"
    if [[ -f "$dir/sweep.jsonl" ]] && grep -q '"status"' "$dir/sweep.jsonl" && [[ -f "$dir/done" ]]; then
      echo "== $name P=$p: done before ($dir)"
      continue
    fi
    echo "== $name P=$p ($(date +%T))"
    mkdir -p "$out/$name"
    echo "   machine speed against the calibration, before: $(drift "$dir.drift-before.json")"
    sweep_machine="$machine"
    if ((fresh)); then
      sweep_machine="$dir.machine.json"
      empty_machine "$machine" "$sweep_machine"
    fi
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=1 OMP_PROC_BIND=false mpirun "${mpirun_flags[@]}" -np "$p" "$sweep" $flags \
      --calibrate "${each_round[@]}" --machine "$sweep_machine" --steps "$steps" --warmup "$warmup" \
      --rounds "$rounds" --out "$dir" > "$dir.log" 2>&1 ||
      { echo "   failed: see $dir.log"; tail -5 "$dir.log"; continue; }
    if ((fresh)); then merge_machine "$sweep_machine" "$machine"; fi
    touch "$dir/done"
    tail -n 2 "$dir.log"
    echo "   after: $(drift "$dir.drift-after.json")"
  done
done
python3 "$repo/scripts/model_accuracy.py" "$out" | tee "$out/accuracy.md"
