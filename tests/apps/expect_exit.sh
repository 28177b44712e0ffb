#!/usr/bin/env bash
# expect_exit.sh success|failure REGEX COMMAND...: passes if COMMAND exits 0 (success) or non-zero (failure, within
# the CTest timeout, i.e. without hanging) and its output matches the extended regular expression REGEX. Prints the
# output either way. expect_success.sh and expect_failure.sh are its two modes.
set -u
mode="$1"; regex="$2"; shift 2
name="expect_$mode"
output="$("$@" 2>&1)"
status=$?
printf '%s\n' "$output"
if [[ $mode == success && $status -ne 0 ]]; then
  echo "$name: the command failed (status $status)" >&2
  exit 1
fi
if [[ $mode == failure && $status -eq 0 ]]; then
  echo "$name: the command succeeded, but it should have failed" >&2
  exit 1
fi
if ! grep -Eq -- "$regex" <<<"$output"; then
  echo "$name: exit status $status, but the output does not match: $regex" >&2
  exit 1
fi
if [[ $mode == success ]]; then
  echo "$name: succeeded as expected"
else
  echo "$name: failed as expected (status $status)"
fi
