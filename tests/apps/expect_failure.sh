#!/usr/bin/env bash
# expect_failure.sh REGEX COMMAND...: passes if COMMAND exits non-zero (within the CTest timeout, i.e. without
# hanging) and its output matches the extended regular expression REGEX. Prints the output either way.
set -u
regex="$1"; shift
output="$("$@" 2>&1)"
status=$?
printf '%s\n' "$output"
if [[ $status -eq 0 ]]; then
  echo "expect_failure: the command succeeded, but it should have failed" >&2
  exit 1
fi
if ! grep -Eq -- "$regex" <<<"$output"; then
  echo "expect_failure: exit status $status, but the output does not match: $regex" >&2
  exit 1
fi
echo "expect_failure: failed as expected (status $status)"
