#!/usr/bin/env bash
# Fails if any C++ file of the repository differs from what clang-format makes of it (.clang-format: Google style,
# 100 columns). scripts/test.sh runs it first, so CI fails on unformatted code. Fix with:
#   clang-format -i $(git ls-files '*.cpp' '*.hpp')
#
#   CLANG_FORMAT   the clang-format to use (default: clang-format-14, else clang-format; Debian 12 ships 14,
#                  and another major version may format differently)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
tool="${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}"
if [[ -z "$tool" ]]; then
  echo "check_format: clang-format not found (Debian: apt-get install clang-format)" >&2
  exit 1
fi
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu')
else
  mapfile -t files < <(find . -path ./build -prune -o \( -name '*.cpp' -o -name '*.hpp' \) -print)
fi
bad=()
for f in "${files[@]}"; do
  "$tool" --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted with $("$tool" --version):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix: $tool -i ${bad[*]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted ($("$tool" --version | head -n1))"
