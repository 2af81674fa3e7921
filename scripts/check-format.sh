#!/usr/bin/env bash
# Checks that every C/C++ file git tracks is clang-formatted (LLVM style,
# .clang-format), with Debian's clang-format-22. `--fix` formats them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-22}
mapfile -t files < <(git ls-files '*.c' '*.cpp' '*.h' | grep -v '/Inputs/')
if [ "${1:-}" = --fix ]; then
  "$CLANG_FORMAT" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$CLANG_FORMAT" --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} file(s) are not clang-formatted (run scripts/check-format.sh --fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check-format: ${#files[@]} files clang-formatted"
