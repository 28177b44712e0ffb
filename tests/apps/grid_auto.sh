#!/usr/bin/env bash
# grid_auto.sh COSMOFLOW DATA WORK MACHINE LAUNCHER...: `cosmoflow train --grid auto --machine MACHINE` on 2 ranks
# prints its choice with its predicted step time and memory and the runner-up, trains on that grid, and every
# metrics record names it under "grid".
set -eu
cosmoflow="$1"; data="$2"; work="$3"; machine="$4"; shift 4
rm -rf "$work"
mkdir -p "$work"
output="$("$@" 2 "$cosmoflow" train --grid auto --data "$data" --width 0.125 --batch 2 --steps 2 \
          --machine "$machine" --metrics "$work/metrics.jsonl" 2>&1)"
printf '%s\n' "$output"
chosen="$(sed -n 's/^--grid auto: \([0-9]*x[0-9]*x[0-9]*x[0-9]*\) (predicted [0-9.e+-]* s per step, [0-9.]* [KM]iB per rank), the fastest predicted .*runner-up [0-9]*x.*/\1/p' <<<"$output")"
[[ -n "$chosen" ]] ||
  { echo "grid_auto: no '--grid auto: GRID (predicted T s per step, M per rank) ...; runner-up ...' line" >&2; exit 1; }
grep -q "^cosmoflow: grid $chosen, 2 ranks" <<<"$output" ||
  { echo "grid_auto: the run did not use the chosen grid $chosen" >&2; exit 1; }
python3 - "$work/metrics.jsonl" "$chosen" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert len(records) == 2, f"expected 2 step records, got {len(records)}"
for r in records:
    assert r.get("grid") == sys.argv[2], f"record {r} does not name grid {sys.argv[2]}"
print(f"grid_auto: chose {sys.argv[2]}; every metrics record names it")
PY
