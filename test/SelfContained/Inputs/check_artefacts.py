"""Checks what the self-contained artefacts need and export: the NEEDED
entries of each name only the C and C++ runtime (and zlib/zstd), and the C
API library defines no dynamic symbol but fly* (and _init/_fini). Prints the
glibc floor (the newest GLIBC_2.N symbol version needed).

usage: check_artefacts.py <self-contained dir>
"""
import re
import subprocess
import sys
from pathlib import Path

ALLOWED = re.compile(r"^(libc|libm|libgcc_s|libstdc\+\+|libz|libzstd|ld-linux-x86-64)\.so\.\d+$")
root = Path(sys.argv[1])
binaries = [root / "bin" / "fly-tune", root / "bin" / "fly-opt",
            root / "lib" / "libFlySnapshotCAPI.so"]
failed = False
floor = (2, 0)
for binary in binaries:
    dynamic = subprocess.run(["readelf", "-d", str(binary)], check=True,
                             capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    bad = [n for n in needed if not ALLOWED.match(n)]
    print("%s needs %s" % (binary.name, " ".join(needed)))
    if bad:
        print("error: %s needs %s" % (binary.name, " ".join(bad)))
        failed = True
    symbols = subprocess.run(["objdump", "-T", str(binary)], check=True,
                             capture_output=True, text=True).stdout
    for major, minor in re.findall(r"\bGLIBC_(\d+)\.(\d+)", symbols):
        floor = max(floor, (int(major), int(minor)))
capi = root / "lib" / "libFlySnapshotCAPI.so"
defined = subprocess.run(["nm", "-D", "--defined-only", str(capi)], check=True,
                         capture_output=True, text=True).stdout.split("\n")
names = [line.split()[-1] for line in defined if line.strip()]
foreign = [n for n in names if not n.startswith("fly") and n not in ("_init", "_fini")]
print("libFlySnapshotCAPI.so exports %d symbols, %d not fly*" % (len(names), len(foreign)))
if foreign:
    print("error: exported: " + " ".join(foreign[:20]))
    failed = True
print("glibc floor: %d.%d" % floor)
sys.exit(1 if failed else 0)
