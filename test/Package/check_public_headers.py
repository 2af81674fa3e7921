#!/usr/bin/env python3
"""Checks that every header under include/fly is part of the API: included by
something outside lib/ (tools, plugin, tests, fuzzers, benches, examples), or
by another header that is. A header only lib/ uses belongs beside its sources
(lib/<Folder>/X.h), where it is not installed.

  check_public_headers.py <source root>

Prints each header used by nothing outside lib/ and exits 1 if there is one.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](fly/[^">]+)[">]', re.M)
# Where the API's users live; lib/ is the implementation.
CONSUMERS = ["tools", "plugin", "unittests", "test", "fuzz", "bench",
             "examples", "python"]
SOURCES = (".h", ".hpp", ".inc", ".c", ".cc", ".cpp")


def includes(path):
    with open(path, errors="replace") as f:
        return set(INCLUDE.findall(f.read()))


def files_under(root, folder):
    for directory, dirs, names in os.walk(os.path.join(root, folder)):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(SOURCES):
                yield os.path.join(directory, name)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    include_dir = os.path.join(root, "include")
    headers = {}
    for path in files_under(root, "include/fly"):
        if path.endswith(".h"):
            headers[os.path.relpath(path, include_dir)] = includes(path)
    if not headers:
        sys.exit(f"error: no headers under {include_dir}/fly")
    used = set()
    for folder in CONSUMERS:
        for path in files_under(root, folder):
            used |= includes(path) & headers.keys()
    # What a public header includes is public too.
    todo = list(used)
    while todo:
        for header in headers[todo.pop()] & headers.keys():
            if header not in used:
                used.add(header)
                todo.append(header)
    private = sorted(headers.keys() - used)
    for header in private:
        print(f"include/{header}: used by nothing outside lib/; move it "
              f"beside its sources (lib/{header[len('fly/'):]})")
    if private:
        return 1
    print(f"{len(headers)} headers under include/fly, each used outside lib/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
