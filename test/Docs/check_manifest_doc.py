#!/usr/bin/env python3
"""Checks that docs/manifest.md names every key the manifest schema allows,
and no other: the top-level, variant and object tables, the kernel keys,
`resources`' keys and best_per_kernel's. The schema forbids keys it does not
list (additionalProperties: false) and the manifest-schema ctest validates
every manifest the suite wrote against it, so the writer's keys are the
schema's.

usage: check_manifest_doc.py MANIFEST_MD SCHEMA_JSON
"""
import json
import re
import sys


def table_keys(text, heading):
    """The backquoted keys of the first column of the table under `heading`."""
    section = re.search(r"^## " + re.escape(heading) + r"\n(.*?)(?=^## |\Z)",
                        text, re.S | re.M)
    if not section:
        sys.exit(f"no '## {heading}' section")
    keys = set()
    for line in section.group(1).splitlines():
        cells = line.split("|")
        if len(cells) > 2 and "`" in cells[1]:
            keys.update(re.findall(r"`([^`]+)`", cells[1]))
    return keys, section.group(1)


def row_keys(section, key):
    """The backquoted names in the meaning column of `key`'s row."""
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) > 3 and f"`{key}`" in cells[1]:
            return set(re.findall(r"`([^`]+)`", cells[3]))
    sys.exit(f"no row for `{key}`")


def main():
    text = open(sys.argv[1]).read()
    schema = json.load(open(sys.argv[2]))
    defs = schema["$defs"]
    kernel = defs["object"]["properties"]["kernels"]["items"]
    top_doc, top_section = table_keys(text, "Top level")
    variant_doc, _ = table_keys(text, "Variants")
    object_doc, object_section = table_keys(text, "Objects")
    kernel_doc = row_keys(object_section, "kernels")
    best_doc = row_keys(top_section, "best_per_kernel")
    checks = [
        ("top level", top_doc, schema["properties"]),
        ("variant", variant_doc, defs["variant"]["properties"]),
        ("object", object_doc, defs["object"]["properties"]),
        ("kernel", kernel_doc, kernel["properties"]),
        ("best_per_kernel entry", best_doc,
         schema["properties"]["best_per_kernel"]["items"]["properties"]),
    ]
    # `resources`' keys are listed in the prose after the tables.
    prose = text[text.index("`resources` is the same"):]
    resources = set(kernel["properties"]["resources"]["properties"])
    missing = sorted(k for k in resources if f"`{k}`" not in prose)
    failures = 0
    if missing:
        print(f"resources: in the schema, not in the doc: {missing}")
        failures += 1
    for name, documented, allowed in checks:
        allowed = set(allowed)
        if allowed - documented:
            print(f"{name}: in the schema, not in the doc: "
                  f"{sorted(allowed - documented)}")
            failures += 1
        # A kernel row also names values; only keys count as extra.
        if name not in ("kernel", "best_per_kernel entry") and \
                documented - allowed:
            print(f"{name}: in the doc, not in the schema: "
                  f"{sorted(documented - allowed)}")
            failures += 1
    total = sum(len(c[2]) for c in checks) + len(resources)
    print(f"checked {total} manifest keys; {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
