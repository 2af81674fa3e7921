#!/usr/bin/env bash
# Writes what fly-hint-doc generates from the hint registry
# (include/fly/Hints/HintRegistry.h) into the files that carry a copy:
#   README.md                         the hint table, between the lines
#                                     <!-- hint-table:begin --> and
#                                     <!-- hint-table:end -->
#                                     (test/Tools/hint-table.test)
#   docs/manifest.schema.json         hint_set.properties, the JSON Schema of
#                                     each hint's value
#                                     (test/Tools/manifest-schema-hints.test)
#   python/fly_snapshot/_hint_specs.json
#                                     the registry as JSON, which fly_snapshot
#                                     reads when it cannot load its library
#                                     (test/Tools/hint-specs-json.test)
# Each test fails while its copy differs. FLY_HINT_DOC names the tool
# (default: build/bin/fly-hint-doc, built when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${FLY_HINT_DOC:-build/bin/fly-hint-doc}
[ -n "${FLY_HINT_DOC:-}" ] || ninja -C build fly-hint-doc > /dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tool" > "$tmp/table"
"$tool" --manifest-schema-properties > "$tmp/schema-properties"
"$tool" --hint-specs-json > "$tmp/specs"
python3 - "$tmp" <<'PY'
import json
import sys
from pathlib import Path

tmp = Path(sys.argv[1])


def write(path, new, what):
    if Path(path).read_text() != new:
        Path(path).write_text(new)
        print(f"{path}: {what} updated")


readme, table = "README.md", (tmp / "table").read_text()
begin, end = "<!-- hint-table:begin -->\n", "<!-- hint-table:end -->\n"
text = open(readme).read()
if text.count(begin) != 1 or text.count(end) != 1:
    sys.exit(f"{readme}: needs one '{begin.strip()}' and one '{end.strip()}' line")
head, rest = text.split(begin)
_, tail = rest.split(end)
write(readme, head + begin + table + end + tail, "hint table")

# The schema keeps its layout: one line per hint, replacing the lines
# between hint_set's `"properties": {` and its closing brace.
schema = "docs/manifest.schema.json"
lines = open(schema).read().splitlines(keepends=True)
try:
    start = next(i for i, line in enumerate(lines) if line.strip() == '"hint_set": {')
    props = next(i for i in range(start + 1, len(lines))
                 if lines[i].strip() == '"properties": {')
    indent = lines[props][:len(lines[props]) - len(lines[props].lstrip())]
    close = next(i for i in range(props + 1, len(lines))
                 if lines[i].rstrip("\n").rstrip(",") == indent + "}")
except StopIteration:
    sys.exit(f"{schema}: no hint_set with a \"properties\": {{ ... }} block")
properties = json.loads((tmp / "schema-properties").read_text())
body = ",\n".join(f"{indent}  {json.dumps(name)}: {json.dumps(value)}"
                  for name, value in properties.items())
write(schema, "".join(lines[:props + 1]) + body + "\n" + "".join(lines[close:]),
      "hint_set.properties")

write("python/fly_snapshot/_hint_specs.json", (tmp / "specs").read_text(), "hint specs")
PY
