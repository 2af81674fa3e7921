"""Checks that every level-2 cache entry (llvmcache-binary-*) under a cache
directory holds one of an out-dir's objects exactly once and none of them
printed the way MLIR prints object bytes (escaped, `\\7FELF`).

    python3 objects_once.py <out-dir> <cache-dir>
"""

import base64
import glob
import os
import sys

out, cache = sys.argv[1], sys.argv[2]
objects = []
for path in sorted(glob.glob(os.path.join(out, "*"))):
    if path.endswith((".hsaco", ".cubin", ".fatbin")):
        with open(path, "rb") as f:
            objects.append(base64.b64encode(f.read()))
entries = sorted(glob.glob(os.path.join(cache, "llvmcache-binary-*")))
for path in entries:
    with open(path, "rb") as f:
        entry = f.read()
    counts = [entry.count(obj) for obj in objects]
    if max(counts) != 1:
        sys.exit("%s holds an object %d times" % (path, max(counts)))
    if b"\\7FELF" in entry:
        sys.exit("%s holds an object printed in MLIR too" % path)
print("%d entries, each object once" % len(entries))
