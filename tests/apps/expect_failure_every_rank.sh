#!/usr/bin/env bash
# expect_failure_every_rank.sh NP REGEX... -- LAUNCHER... -- COMMAND...: runs `LAUNCHER... NP COMMAND...` with each
# rank's exit status recorded (rank_status.sh). Passes if the output matches every extended regular expression REGEX
# and all NP ranks exited non-zero (within the CTest timeout, i.e. without hanging, and without an abort, which
# would leave some rank's status unrecorded). Prints the output either way.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
np="$1"; shift
regexes=()
while [[ $# -gt 0 && "$1" != "--" ]]; do regexes+=("$1"); shift; done
shift
launcher=()
while [[ $# -gt 0 && "$1" != "--" ]]; do launcher+=("$1"); shift; done
shift
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
output="$("${launcher[@]}" "$np" "$here/rank_status.sh" "$dir" "$@" 2>&1)"
printf '%s\n' "$output"
status=0
for regex in "${regexes[@]}"; do
  if ! grep -Eq -- "$regex" <<<"$output"; then
    echo "expect_failure_every_rank: the output does not match: $regex" >&2
    status=1
  fi
done
for ((r = 0; r < np; ++r)); do
  if [[ ! -f "$dir/rank.$r" ]]; then
    echo "expect_failure_every_rank: rank $r recorded no exit status (killed or aborted?)" >&2
    status=1
  elif [[ "$(cat "$dir/rank.$r")" == 0 ]]; then
    echo "expect_failure_every_rank: rank $r exited 0, but it should have failed" >&2
    status=1
  fi
done
[[ $status -eq 0 ]] && echo "expect_failure_every_rank: every rank failed as expected"
exit $status
