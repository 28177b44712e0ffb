#!/usr/bin/env bash
# preemption.sh COSMOFLOW CHECKPOINT_TOOL DATA WORK MPIEXEC...: preemption at 4 ranks (grid 2x2x1x1), as Slurm
# does it. A run that gets SIGUSR1 or SIGTERM stops at the next step boundary on every rank, writes a
# checkpoint and exits with 75; `--resume` then finishes the run, and the losses and the final checkpoint
# (weights, optimizer state, counters) equal those of an uninterrupted run bit for bit.
#   one:  SIGUSR1 raised by rank 2 alone inside step 3 (a signal that reaches one rank only) -> stop after 4
#   all:  SIGTERM sent from outside to every rank while rank 0 is parked inside step 5      -> stop after 6
set -u
cosmoflow="$1"; tool="$2"; data="$3"; work="$4"; shift 4
mpi=("$@")
rm -rf "$work" && mkdir -p "$work"
run() {  # NAME EXTRA...: trains 10 steps into ck_NAME with metrics NAME.jsonl
  local name="$1"; shift
  "${mpi[@]}" 4 "$cosmoflow" train --grid 2x2x1x1 --data "$data" --width 0.125 --batch 2 --steps 10 --seed 3 \
    --checkpoint-every 100 --checkpoint-dir "$work/ck_$name" --metrics "$work/$name.jsonl" "$@" >> "$work/$name.log" 2>&1
}
fail() { cat "$work/$1.log"; echo "FAIL: $2"; exit 1; }
source "$(dirname "$0")/ranks_of.sh"
run full || fail full "the uninterrupted run"

HALO3D_TEST_FAULT=signal:rank=2:step=3:signal=USR1 run one
status=$?
[[ $status -eq 75 ]] || fail one "exit status $status after SIGUSR1, expected 75"
grep -q "stopped by SIGUSR1 after step 4 of 10" "$work/one.log" || fail one "no stop message"

HALO3D_TEST_FAULT=sleep:rank=0:step=5:seconds=120 run all &
pid=$!
until grep -q '"step":4,' "$work/all.jsonl" 2> /dev/null; do
  kill -0 "$pid" 2> /dev/null || fail all "the run ended before step 5"
  sleep 0.2
done
ranks=($(ranks_of "$pid"))
echo "sending SIGTERM to the ranks: ${ranks[*]}"
kill -TERM "${ranks[@]}"
wait "$pid"
status=$?
[[ $status -eq 75 ]] || fail all "exit status $status after SIGTERM, expected 75"
grep -q "stopped by SIGTERM after step 6 of 10" "$work/all.log" || fail all "no stop message"

status=0
for name in one all; do
  run "$name" --resume || fail "$name" "the resumed run"
  "$tool" compare "$work/ck_full/checkpoint-000000000010.h5" "$work/ck_$name/checkpoint-000000000010.h5" ||
    { echo "FAIL: $name: the final checkpoint differs from the uninterrupted run's"; status=1; }
done
python3 - "$work" <<'PY' || status=1
import json, sys
work = sys.argv[1]
def records(name):
    return [json.loads(line) for line in open(f"{work}/{name}.jsonl")]
full = {r["step"]: r["loss"] for r in records("full") if r["phase"] == "train"}
ok = True
for name, stop in (("one", 4), ("all", 6)):
    rs = records(name)
    got = {r["step"]: r["loss"] for r in rs if r["phase"] == "train"}
    pre = [r for r in rs if r["phase"] == "preempted"]
    same = got == full
    print(f"{name}: stopped after step {pre[0]['step'] if pre else None} ({pre[0]['signal'] if pre else ''}), "
          f"losses of steps {sorted(got)} {'equal' if same else 'DIFFER FROM'} the uninterrupted run's")
    ok &= same and len(pre) == 1 and pre[0]["step"] == stop
sys.exit(0 if ok else 1)
PY
[[ $status -eq 0 ]] && echo PASS || echo FAIL
exit $status
