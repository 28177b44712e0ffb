#!/usr/bin/env bash
# nan_loss.sh COSMOFLOW DATA WORKDIR MPIEXEC... : a run that diverges must stop with a clear error, write a
# diagnostic, and leave its last good checkpoint intact (eval can load it); with no checkpoint yet, the
# diagnostic is written all the same.
set -u
cosmoflow="$1"; data="$2"; work="$3"; shift 3
rm -rf "$work" && mkdir -p "$work"
out="$("$@" 2 "$cosmoflow" train --data "$data" --width 0.125 --batch 2 --steps 20 --optimizer sgd --lr 1e30 \
        --checkpoint-dir "$work/ckpt" --checkpoint-every 1 2>&1)"
status=$?
printf '%s\n' "$out"
[[ $status -ne 0 ]] || { echo "FAIL: the diverging run exited 0"; exit 1; }
grep -Eq "the loss became (nan|inf|-nan|-inf) at step [0-9]+" <<<"$out" || { echo "FAIL: no loss message"; exit 1; }
ls "$work"/ckpt/nan-diagnostic-step*.json >/dev/null 2>&1 || { echo "FAIL: no diagnostic file"; exit 1; }
ls "$work"/ckpt/checkpoint-*.h5 >/dev/null 2>&1 || { echo "FAIL: no checkpoint kept"; exit 1; }
"$@" 2 "$cosmoflow" eval --data "$data" --width 0.125 --batch 2 --checkpoint-dir "$work/ckpt" ||
  { echo "FAIL: the last checkpoint does not load"; exit 1; }
# Diverging before any checkpoint exists (and before the directory does): the diagnostic is still written.
out="$("$@" 2 "$cosmoflow" train --data "$data" --width 0.125 --batch 2 --steps 20 --optimizer sgd --lr 1e30 \
        --checkpoint-dir "$work/fresh" 2>&1)"
status=$?
printf '%s\n' "$out"
[[ $status -ne 0 ]] || { echo "FAIL: the diverging run exited 0"; exit 1; }
diag="$(sed -n 's/.*Diagnostic: \([^;]*\); last good checkpoint: (none).*/\1/p' <<<"$out")"
[[ -n "$diag" && -s "$diag" ]] || { echo "FAIL: the diagnostic file named in the error ('$diag') was not written"; exit 1; }
echo "PASS"
