#!/usr/bin/env bash
# expect_success.sh REGEX COMMAND...: passes if COMMAND exits 0 and its output matches the extended regular
# expression REGEX. Prints the output either way.
set -u
regex="$1"; shift
output="$("$@" 2>&1)"
status=$?
printf '%s\n' "$output"
if [[ $status -ne 0 ]]; then
  echo "expect_success: the command failed (status $status)" >&2
  exit 1
fi
if ! grep -Eq -- "$regex" <<<"$output"; then
  echo "expect_success: the output does not match: $regex" >&2
  exit 1
fi
echo "expect_success: succeeded as expected"
