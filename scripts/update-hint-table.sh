#!/usr/bin/env bash
# Writes the hint table that fly-hint-doc generates from the hint registry
# (include/fly/Hints/HintRegistry.h) into README.md, between the lines
# <!-- hint-table:begin --> and <!-- hint-table:end -->. test/Tools/
# hint-table.test fails while the two differ. FLY_HINT_DOC names the tool
# (default: build/bin/fly-hint-doc, built when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${FLY_HINT_DOC:-build/bin/fly-hint-doc}
[ -n "${FLY_HINT_DOC:-}" ] || ninja -C build fly-hint-doc > /dev/null
"$tool" > README.md.hint-table
trap 'rm -f README.md.hint-table' EXIT
python3 - README.md README.md.hint-table <<'PY'
import sys
readme, table = sys.argv[1], open(sys.argv[2]).read()
begin, end = "<!-- hint-table:begin -->\n", "<!-- hint-table:end -->\n"
text = open(readme).read()
if text.count(begin) != 1 or text.count(end) != 1:
    sys.exit(f"{readme}: needs one '{begin.strip()}' and one '{end.strip()}' line")
head, rest = text.split(begin)
_, tail = rest.split(end)
new = head + begin + table + end + tail
if new != text:
    open(readme, "w").write(new)
    print(f"{readme}: hint table updated")
PY
