#!/usr/bin/env bash
# expect_failure.sh REGEX COMMAND...: passes if COMMAND exits non-zero (within the CTest timeout, i.e. without
# hanging) and its output matches the extended regular expression REGEX. Prints the output either way.
exec "$(dirname "$0")/expect_exit.sh" failure "$@"
