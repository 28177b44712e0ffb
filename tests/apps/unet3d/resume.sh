#!/usr/bin/env bash
# resume.sh UNET3D DATA WORK MPIEXEC...: a unet3d checkpoint written on grid 1x2x1x1 resumes on 2x1x1x1 and on
# 1 rank with the losses of the uninterrupted run (within 1e-5, relative: float32 sums in another order), and on
# the same grid bit for bit.
set -u
unet3d="$1"; data="$2"; work="$3"; shift 3
mpi=("$@")
rm -rf "$work" && mkdir -p "$work"
common=(--data "$data/train32" --base 4 --depth 2 --transform constant:0.01 --batch 2 --bn-stats global --steps 6
        --seed 5 --no-shuffle)
run() {  # NAME RANKS GRID EXTRA...
  local name="$1" ranks="$2" grid="$3"; shift 3
  "${mpi[@]}" "$ranks" "$unet3d" train --grid "$grid" "${common[@]}" --metrics "$work/$name.jsonl" "$@" \
    > "$work/$name.log" 2>&1 || { cat "$work/$name.log"; echo "FAIL: run $name"; exit 1; }
}
loss_at() {  # NAME STEP
  grep '"phase":"train"' "$work/$1.jsonl" | grep "\"step\":$2," | sed -n 's/.*"loss":\([-0-9.eE+]*\).*/\1/p'
}
run full 2 1x2x1x1 --checkpoint-dir "$work/ck_full" --checkpoint-every 3 --keep-checkpoints 5
status=0
for target in same:2:1x2x1x1:0 other:2:2x1x1x1:1e-5 single:1:1x1x1x1:1e-5; do
  IFS=: read -r name ranks grid tol <<<"$target"
  mkdir -p "$work/ck_$name"
  cp "$work"/ck_full/checkpoint-000000000003.h5 "$work/ck_$name/"
  run "$name" "$ranks" "$grid" --checkpoint-dir "$work/ck_$name" --resume
  grep -q "resuming from .*checkpoint-000000000003.h5 at step 3" "$work/$name.log" ||
    { cat "$work/$name.log"; echo "FAIL: $name did not resume at step 3"; exit 1; }
  [[ -z "$(loss_at "$name" 2)" ]] || { echo "FAIL: $name repeated step 2"; status=1; }
  for step in 3 4 5; do
    got="$(loss_at "$name" $step)"; ref="$(loss_at full $step)"
    if awk -v a="$got" -v b="$ref" -v t="$tol" 'BEGIN { d = a - b; if (d < 0) d = -d; r = b < 0 ? -b : b;
                                                         exit !(a != "" && d <= t * r) }'; then
      echo "$name step $step: $got vs uninterrupted $ref ok"
    else
      echo "$name step $step: '$got' vs uninterrupted $ref MISMATCH (tolerance $tol)"; status=1
    fi
  done
done
[[ $status -eq 0 ]] && echo PASS || echo FAIL
exit $status
