#!/usr/bin/env bash
# check_syntax.sh SCRIPT...: `bash -n` on every script; fails if there are none or any does not parse.
set -u
[[ $# -gt 0 ]] || { echo "check_syntax: no scripts given"; exit 1; }
status=0
for f in "$@"; do
  if bash -n "$f"; then echo "ok: $f"; else echo "FAIL: $f"; status=1; fi
done
exit $status
