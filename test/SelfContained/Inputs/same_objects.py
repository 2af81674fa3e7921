"""Compares the GPU objects (*.hsaco, *.cubin, *.bin, *.fatbin) of two
output folders byte for byte: the same names, at least one, equal bytes.

usage: same_objects.py <expected dir> <actual dir>
"""
import sys
from pathlib import Path

SUFFIXES = (".hsaco", ".cubin", ".bin", ".fatbin")
expected, actual = (Path(d) for d in sys.argv[1:])


def objects(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(SUFFIXES))


names = objects(expected)
if not names:
    sys.exit("error: no objects in %s" % expected)
if objects(actual) != names:
    sys.exit("error: %s has %s, %s has %s" % (expected, names, actual, objects(actual)))
differ = [n for n in names if (expected / n).read_bytes() != (actual / n).read_bytes()]
if differ:
    sys.exit("error: objects differ: " + " ".join(differ))
print("%d objects identical" % len(names))
