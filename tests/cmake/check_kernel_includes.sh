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

# Transitional exception, to be deleted with the include it excuses: apps/unet3d/Segmentation.cpp
# still writes softmax, argmax and the Dice counts through kernels::impl::readCells/writeCells, until
# it calls kernels/Segmentation.hpp (softmaxArgmax, diceCounts). When it no longer includes
# kernels/impl/, this check fails until the line below and kernels/impl/ElementwiseViews.hpp (the
# forwarding header it includes) are deleted.
allowed=(apps/unet3d/Segmentation.cpp)

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
    file=${hit%%:*}
    skip=0
    for a in "${allowed[@]}"; do
      [[ $file == "$a" ]] && skip=1
    done
    ((skip)) && continue
    echo "layering: $hit"
    echo "  includes a kernels implementation header; call the public kernels/*.hpp instead"
    status=1
  done < <(include_of 'kernels/impl/' "${layers[@]}")
fi

for a in "${allowed[@]}"; do
  if [[ -f $a ]] && [[ -z $(include_of 'kernels/impl/' "$a") ]]; then
    echo "layering: $a no longer includes kernels/impl/: delete its exception in $0"
    echo "  and the forwarding header kernels/impl/ElementwiseViews.hpp"
    status=1
  fi
done

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
