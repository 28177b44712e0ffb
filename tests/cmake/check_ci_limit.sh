#!/usr/bin/env bash
# scripts/test.sh builds its sanitizer stages within HALO3D_CI_BUDGET (build_within_limit): a build is started
# only with at least 60 s left after its tests' reserve, stopped at the limit (its tests skipped), and a failing
# configure or build fails the script. This runs the script's build_within_limit and scripts/common.sh's
# halo3d_build, as they are in the tree, against a fake cmake whose build takes FAKE_BUILD_S seconds. The
# elapsed times are a few seconds away from the 60 s threshold, so that a slow start cannot flip a case.
# Usage: check_ci_limit.sh <source dir>   (about 70 s: the stopped case waits out its 70 s)
set -euo pipefail
src="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
cat > "$work/bin/cmake" << 'FAKE'
#!/usr/bin/env bash
if [[ "$1" == --build ]]; then
  [[ -n "${FAKE_BUILD_FAILS:-}" ]] && exit 2
  sleep "${FAKE_BUILD_S:-0}"; echo built
else
  [[ -n "${FAKE_CONFIGURE_FAILS:-}" ]] && exit 3
  echo configured
fi
FAKE
chmod +x "$work/bin/cmake"
cat > "$work/run.sh" << RUN
set -euo pipefail
repo="$src"; jobs=1; kokkos_prefix=/none; kokkos_args=(); launcher=()
export PATH="$work/bin:\$PATH"
start=\$(( \$(date +%s) - GONE ))
ci_budget="\$HALO3D_CI_BUDGET"  # as scripts/test.sh sets it
eval "\$(sed -n '/^halo3d_build() {/,/^}/p' "$src/scripts/common.sh")"
eval "\$(sed -n '/^build_within_limit() {/,/^}/p' "$src/scripts/test.sh")"
if build_within_limit "$work/build" 600 -DX=1; then echo "TESTS RUN"; else echo "TESTS SKIPPED"; fi
echo "script continues"
RUN
failures=0
case_() {  # <what> <expected rc> <expected output, a grep -E pattern> [VAR=value ...]
  local what="$1" want_rc="$2" want="$3"; shift 3
  local out rc=0
  out="$(env HALO3D_CI_BUDGET=1000 "$@" bash "$work/run.sh" 2>&1)" || rc=$?
  if [[ "$rc" == "$want_rc" ]] && grep -qE "$want" <<< "$out"; then
    echo "ok: $what"
  else
    echo "FAIL: $what: rc $rc (expected $want_rc), output:"; echo "$out"
    failures=$((failures + 1))
  fi
}
case_ "time left: built, tests run" 0 "built.*TESTS RUN|TESTS RUN" GONE=0
case_ "under 60 s left: not built, tests skipped" 0 "not built and its tests skipped" GONE=345
case_ "the limit reached: stopped, tests skipped, script goes on" 0 \
  "reached HALO3D_CI_BUDGET=1000.*stopped" GONE=330 FAKE_BUILD_S=120
case_ "a failing configure fails the script" 3 "^" GONE=0 FAKE_CONFIGURE_FAILS=1
case_ "a failing build fails the script" 2 "^" GONE=0 FAKE_BUILD_FAILS=1
((failures == 0)) || { echo "$failures case(s) failed"; exit 1; }
