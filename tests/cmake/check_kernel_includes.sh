#!/usr/bin/env bash
# The kernels hide their implementations (kernels/README.md, "Interfaces and implementations"):
#   1. no file in apps/, nn/, io/, comm/, core/ or bench/ includes a kernels/impl/ header (tests
#      may, to run the device code of a kernel or to instantiate it for another space);
#   2. no public kernels/*.hpp includes an impl/ header: the kernels/*.cpp files that instantiate
#      the kernels are the only ones to see their implementations.
# Usage: check_kernel_includes.sh <source root>. Prints every offending line; exit 1 if any.
set -euo pipefail
root=${1:?usage: check_kernel_includes.sh <source root>}
cd "$root"

status=0
include_of() {  # files under the given folders whose #include lines match the pattern
  local pattern=$1
  shift
  grep -rHEn --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cc' \
    "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"][^>\"]*${pattern}" "$@" 2>/dev/null || true
}

layers=()
for d in apps nn io comm core bench; do
  [[ -d $d ]] && layers+=("$d")
done
if ((${#layers[@]})); then
  while IFS= read -r hit; do
    [[ -z $hit ]] && continue
    echo "layering: $hit"
    echo "  includes a kernels implementation header; call the public kernels/*.hpp instead"
    status=1
  done < <(include_of 'kernels/impl/' "${layers[@]}")
fi

while IFS= read -r hit; do
  [[ -z $hit ]] && continue
  echo "layering: $hit"
  echo "  a public kernel header includes an implementation header; declare here, define in impl/"
  status=1
done < <(include_of 'impl/' kernels/*.hpp)

if ((status == 0)); then
  echo "kernel implementations stay behind kernels/*.hpp"
fi
exit "$status"
