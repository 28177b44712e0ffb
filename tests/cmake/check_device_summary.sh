#!/usr/bin/env bash
# scripts/device_check_summary.py on made-up logs of the kind the H100's first runs left: a program whose report
# has a passed and a skipped case (GTEST_SKIP: counted apart, not as passed), a program that died before its
# report (its log's error line in the summary), and a benchmark step that failed (likewise). Exit status 1 (FAIL).
# Usage: check_device_summary.sh <source dir>
set -euo pipefail
src="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
logs="$work/logs"
mkdir -p "$logs/tests"
printf 'build\tok\t40\t2 test programs\nbench_halo_pack\tFAIL\t0\texit status 134, see logs/bench_halo_pack.log\n' \
  > "$logs/steps.tsv"
printf 'Running bench_halo_pack\nKokkos::Cuda::initialize ERROR: compute capability 8.0 on 9.0\n' > "$logs/bench_halo_pack.log"
cat > "$logs/tests/prog_a.json" << 'JSON'
{"tests": 2, "failures": 0, "disabled": 0, "errors": 0,
 "testsuites": [{"name": "S", "testsuite": [{"name": "ran", "result": "COMPLETED"},
                                            {"name": "host_only", "result": "SKIPPED"}]}]}
JSON
echo 0 > "$logs/tests/prog_a.rc"
echo 134 > "$logs/tests/prog_b.rc"
printf 'starting\nKokkos::Cuda::initialize ERROR: not supported\n' > "$logs/tests/prog_b.log"

rc=0
python3 "$src/scripts/device_check_summary.py" --logs "$logs" --out "$work/out" --mode real --elapsed 1 --budget 2 \
  > /dev/null || rc=$?
md="$work/out/summary.md"
fail() { echo "check_device_summary: $*" >&2; cat "$md" >&2; exit 1; }
((rc == 1)) || fail "exit status $rc, expected 1"
grep -qF "2 programs, 2 cases, 1 passed, 1 skipped, 1 failed." "$md" || fail "test counts"
grep -qF "| prog_a | 2 | 1 | 0 | 0 |" "$md" || fail "prog_a's row"
grep -qF -- "- FAILED prog_b: exit status 134, no report: Kokkos::Cuda::initialize ERROR: not supported" "$md" ||
  fail "prog_b's reason"
grep -qF "| bench_halo_pack | FAIL | 0 | exit status 134, see logs/bench_halo_pack.log: Kokkos::Cuda::initialize ERROR: compute capability 8.0 on 9.0 |" \
  "$md" || fail "the benchmark step's reason"
echo "check_device_summary: ok"
