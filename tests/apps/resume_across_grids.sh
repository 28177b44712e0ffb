#!/usr/bin/env bash
# resume_across_grids.sh COSMOFLOW DATA WORKDIR MPIEXEC... : a checkpoint written on grid 1x2x2x1 (4 ranks) and
# resumed on 2x1x1x1 (2 ranks) and on 1 rank continues with the losses of the uninterrupted run (within 1e-5,
# relative); resumed on the same grid, bit for bit.
set -u
cosmoflow="$1"; data="$2"; work="$3"; shift 3
mpi=("$@")
rm -rf "$work" && mkdir -p "$work"
common=(--data "$data" --width 0.125 --batch 4 --batchnorm --bn-stats global --steps 6 --seed 5)
run() { # run NAME RANKS GRID EXTRA...
  local name="$1" ranks="$2" grid="$3"; shift 3
  "${mpi[@]}" "$ranks" "$cosmoflow" train --grid "$grid" "${common[@]}" --metrics "$work/$name.jsonl" "$@" \
    > "$work/$name.log" 2>&1 || { cat "$work/$name.log"; echo "FAIL: run $name"; exit 1; }
}
run full 4 1x2x2x1 --checkpoint-dir "$work/ck_full" --checkpoint-every 3 --keep-checkpoints 5
for target in same:4:1x2x2x1 other:2:2x1x1x1 single:1:1x1x1x1; do
  IFS=: read -r name ranks grid <<<"$target"
  mkdir -p "$work/ck_$name"
  cp "$work"/ck_full/checkpoint-000000000003.h5 "$work/ck_$name/"
  run "$name" "$ranks" "$grid" --checkpoint-dir "$work/ck_$name" --resume
  grep -q "resuming from .*checkpoint-000000000003.h5 at step 3" "$work/$name.log" ||
    { cat "$work/$name.log"; echo "FAIL: $name did not resume at step 3"; exit 1; }
done
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def losses(name):
    return {r["step"]: r["loss"] for r in map(json.loads, open(f"{work}/{name}.jsonl")) if r["phase"] == "train"}
full = losses("full")
ok = True
for name, exact in (("same", True), ("other", False), ("single", False)):
    got = losses(name)
    assert sorted(got) == [3, 4, 5], f"{name}: steps {sorted(got)}"
    for step, loss in got.items():
        ref = full[step]
        good = loss == ref if exact else abs(loss - ref) <= 1e-5 * abs(ref)
        print(f"{name:6s} step {step}: {loss!r} vs uninterrupted {ref!r} {'ok' if good else 'MISMATCH'}")
        ok &= good
sys.exit(0 if ok else 1)
PY
status=$?
[[ $status -eq 0 ]] && echo PASS || echo FAIL
exit $status
