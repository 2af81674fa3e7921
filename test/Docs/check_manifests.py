#!/usr/bin/env python3
"""Validates every manifest.json under ROOT against docs/manifest.schema.json.

Run by ctest after the lit suite (test/CMakeLists.txt), so it sees every
manifest the tests wrote. A manifest counts as written by fly when its
out-dir's `.fly-outdir` record (lib/Support/OutputDirectory) lists it;
hand-made ones (fixtures of fly-run's hostile-input tests) are skipped and
counted. It fails if a manifest does not validate, or if the suite wrote no
manifest of some tool (the check must not pass on nothing).

usage: check_manifests.py SCHEMA ROOT [--tools fly-tune,fly-opt,fly-snapshot]
"""
import argparse
import json
import os
import sys

import jsonschema


def written_by_fly(directory):
    """Whether fly's out-dir record in `directory` lists manifest.json."""
    try:
        with open(os.path.join(directory, ".fly-outdir")) as f:
            return "manifest.json" in (line.strip() for line in f)
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("schema")
    parser.add_argument("root")
    parser.add_argument("--tools", default="fly-tune,fly-opt,fly-snapshot",
                        help="tools of which at least one manifest must exist")
    args = parser.parse_args()
    with open(args.schema) as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)

    seen = {}
    failures = 0
    skipped = 0
    for dirpath, _, filenames in os.walk(args.root):
        if "manifest.json" not in filenames:
            continue
        path = os.path.join(dirpath, "manifest.json")
        if not written_by_fly(dirpath):
            skipped += 1
            continue
        try:
            with open(path) as f:
                manifest = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: not JSON: {e}")
            failures += 1
            continue
        errors = sorted(validator.iter_errors(manifest), key=lambda e: list(e.path))
        for error in errors:
            where = "/".join(str(p) for p in error.absolute_path) or "(top)"
            print(f"{path}: {where}: {error.message}")
        failures += bool(errors)
        if isinstance(manifest, dict):
            seen.setdefault(manifest.get("tool"), []).append(path)
        if not errors and manifest["variant_count"] != len(manifest["variants"]):
            print(f"{path}: variant_count {manifest['variant_count']} != "
                  f"{len(manifest['variants'])} variants")
            failures += 1

    total = sum(len(paths) for paths in seen.values())
    for tool in filter(None, args.tools.split(",")):
        if tool not in seen:
            print(f"no manifest written by {tool} under {args.root}")
            failures += 1
    summary = ", ".join(f"{tool}: {len(paths)}" for tool, paths in sorted(seen.items(), key=str))
    noun = "manifest" if total == 1 else "manifests"
    print(f"checked {total} {noun} ({summary}); {failures} failed"
          + (f"; {skipped} not written by fly skipped" if skipped else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
