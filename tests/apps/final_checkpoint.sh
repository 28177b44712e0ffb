#!/usr/bin/env bash
# final_checkpoint.sh COSMOFLOW DATA WORK MPIEXEC...: the end of a run always saves a checkpoint, also between
# --checkpoint-every marks (--steps 7 --checkpoint-every 5 leaves steps 5 and 7), and the run resumes from it.
set -u
cosmoflow="$1"; data="$2"; work="$3"; shift 3
rm -rf "$work" && mkdir -p "$work"
common=(--data "$data" --width 0.125 --batch 2 --checkpoint-dir "$work/ck")
"$@" 2 "$cosmoflow" train "${common[@]}" --steps 7 --checkpoint-every 5 > "$work/run.log" 2>&1 ||
  { cat "$work/run.log"; echo "FAIL: training exited non-zero"; exit 1; }
got="$(cd "$work/ck" && echo checkpoint-*.h5)"
echo "checkpoints: $got"
[[ "$got" == "checkpoint-000000000005.h5 checkpoint-000000000007.h5" ]] ||
  { echo "FAIL: expected the checkpoints of steps 5 and 7"; exit 1; }
out="$("$@" 2 "$cosmoflow" train "${common[@]}" --steps 7 --resume 2>&1)" ||
  { printf '%s\n' "$out"; echo "FAIL: resume exited non-zero"; exit 1; }
grep -q "nothing to do: 7 of 7 steps already done" <<<"$out" ||
  { printf '%s\n' "$out"; echo "FAIL: the resumed run did not start at step 7"; exit 1; }
echo PASS
