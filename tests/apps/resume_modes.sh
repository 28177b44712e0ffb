#!/usr/bin/env bash
# resume_modes.sh COSMOFLOW DATA WORK MPIEXEC...: what a run does with the checkpoint directory it is given.
#   - without --resume, a directory that already holds checkpoints is refused (they would be mixed);
#   - --resume with every checkpoint invalid is refused, and the files stay as they were;
#   - --resume=if-any then starts from scratch, setting the invalid files aside (never deleting them, also
#     when pruning runs);
#   - --resume with an empty directory is refused; --resume=if-any with an absent one starts from scratch.
set -u
cosmoflow="$1"; data="$2"; work="$3"; shift 3
mpi=("$@")
rm -rf "$work" && mkdir -p "$work"
ck="$work/ck"
train() { "${mpi[@]}" 2 "$cosmoflow" train --data "$data" --width 0.125 --batch 2 --steps 2 "$@" 2>&1; }
fail() { printf '%s\n' "$out"; echo "FAIL: $1"; exit 1; }
out="$(train --checkpoint-dir "$ck" --checkpoint-every 1)" || fail "the first run"
out="$(train --checkpoint-dir "$ck")" && fail "a fresh run into a directory with checkpoints exited 0"
grep -q "already holds 2 checkpoint(s), the newest .*checkpoint-000000000002.h5: pass --resume" <<<"$out" ||
  fail "no message naming the checkpoints"
for f in "$ck"/checkpoint-*.h5; do echo "garbage" > "$f"; done
cp -r "$ck" "$work/ck.copy"
out="$(train --checkpoint-dir "$ck" --resume)" && fail "--resume with only invalid checkpoints exited 0"
grep -q "\-\-resume: no valid checkpoint in '$ck' (2 failed validation, newest: .*checkpoint-000000000002.h5" \
  <<<"$out" || fail "no message naming the invalid checkpoints"
diff -r -x .lock "$ck" "$work/ck.copy" > /dev/null || fail "the refused run changed the checkpoints"
out="$(train --checkpoint-dir "$ck" --resume=if-any --keep-checkpoints 1 --checkpoint-every 1)" ||
  fail "--resume=if-any with only invalid checkpoints"
grep -q "no valid checkpoint in $ck: starting from scratch" <<<"$out" || fail "no fresh-start message"
for step in 1 2; do
  f="$ck/checkpoint-00000000000$step.h5.invalid"
  [[ "$(cat "$f")" == "garbage" ]] || fail "the invalid checkpoint of step $step was not kept as $f"
done
[[ "$(cd "$ck" && echo checkpoint-*.h5)" == "checkpoint-000000000002.h5" ]] || fail "the new run's checkpoint"
mkdir -p "$work/empty"
out="$(train --checkpoint-dir "$work/empty" --resume)" && fail "--resume with an empty directory exited 0"
grep -q "\-\-resume: no valid checkpoint in '$work/empty' (it holds none); pass --resume=if-any" <<<"$out" ||
  fail "no message for the empty directory"
out="$(train --checkpoint-dir "$work/absent" --resume=if-any)" || fail "--resume=if-any with an absent directory"
echo PASS
