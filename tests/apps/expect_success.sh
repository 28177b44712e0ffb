#!/usr/bin/env bash
# expect_success.sh REGEX COMMAND...: passes if COMMAND exits 0 and its output matches the extended regular
# expression REGEX. Prints the output either way.
exec "$(dirname "$0")/expect_exit.sh" success "$@"
