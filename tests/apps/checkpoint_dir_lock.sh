#!/usr/bin/env bash
# checkpoint_dir_lock.sh COSMOFLOW DATA WORK MPIEXEC...: one run per checkpoint directory.
#   A trains with checkpoints and parks inside step 2 (test fault); B, started on the same directory and metrics
#   file, is refused with a message naming A; A is killed (SIGKILL, its lock goes with it); C resumes from A's
#   checkpoint. Every metrics record carries a run_id, and A's and C's differ.
set -u
cosmoflow="$1"; data="$2"; work="$3"; shift 3
mpi=("$@")
rm -rf "$work" && mkdir -p "$work"
common=(--data "$data" --width 0.125 --batch 2 --checkpoint-dir "$work/ck" --metrics "$work/metrics.jsonl")
HALO3D_TEST_FAULT=sleep:rank=0:step=2:seconds=300 "${mpi[@]}" 2 "$cosmoflow" train "${common[@]}" --steps 6 \
  --checkpoint-every 1 > "$work/a.log" 2>&1 &
a=$!
until [[ -e "$work/ck/checkpoint-000000000002.h5" ]]; do
  kill -0 "$a" 2> /dev/null || { cat "$work/a.log"; echo "FAIL: run A ended early"; exit 1; }
  sleep 0.2
done
holder="$(cat "$work/ck/.lock")"
echo "lock: $holder"
out="$("${mpi[@]}" 2 "$cosmoflow" train "${common[@]}" --seed 8 --steps 6 2>&1)"
status=$?
printf '%s\n' "$out"
source "$(dirname "$0")/ranks_of.sh"
kill -KILL $(ranks_of "$a")
wait "$a"
[[ $status -ne 0 ]] || { echo "FAIL: the second run on a locked directory exited 0"; exit 1; }
grep -qF "is in use by another run ($holder;" <<<"$out" || { echo "FAIL: the refusal does not name the holder"; exit 1; }
[[ "$(cat "$work/ck/.lock")" == "$holder" ]] || { echo "FAIL: the refused run touched the lock file"; exit 1; }
"${mpi[@]}" 2 "$cosmoflow" train "${common[@]}" --steps 4 --checkpoint-every 1 --resume > "$work/c.log" 2>&1 ||
  { cat "$work/c.log"; echo "FAIL: resuming after the killed run failed"; exit 1; }
grep -q "resuming from .*checkpoint-000000000002.h5 at step 2" "$work/c.log" ||
  { cat "$work/c.log"; echo "FAIL: C did not resume at step 2"; exit 1; }
python3 - "$work/metrics.jsonl" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
ids = [r.get("run_id") for r in records]
assert all(ids), "a record without run_id"
runs = list(dict.fromkeys(ids))
steps = {i: [r["step"] for r in records if r["run_id"] == i] for i in runs}
print("runs and their steps:", steps)
assert len(runs) == 2 and steps[runs[0]] == [0, 1] and steps[runs[1]] == [2, 3], "expected A: 0, 1 and C: 2, 3"
PY
[[ $? -eq 0 ]] || { echo FAIL; exit 1; }
echo PASS
