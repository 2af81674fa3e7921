"""Checks a fly-tune sweep's register counts against an independent reader.

  check_registers.py <out-dir> <table.txt> rocdl
      reference: `llvm-readelf-22 --notes` of each object file (the AMDGPU
      metadata note: .vgpr_count, .sgpr_count, .vgpr_spill_count, ...)
  check_registers.py <out-dir> <table.txt> nvvm <ptx-dir> <ptxas>
      reference: `ptxas -v` on the PTX of the same hint set (format=isa run
      in <ptx-dir>): "Used N registers" per entry function, and
      "N bytes smem" against the manifest's shared_bytes (not in the table)

Prints one line per (variant, object, kernel):
  <id> <chip> <kernel> <counts>: manifest == reference == table
and exits 1 on any difference or a kernel missing from either side.
"""
import json
import os
import re
import subprocess
import sys


def readelf_counts(path):
    out = subprocess.run(["llvm-readelf-22", "--notes", path], check=True,
                         capture_output=True, text=True).stdout
    # Each kernel is an entry "  - .key: value" of amdhsa.kernels; its .name
    # may come after other keys (they are sorted).
    entries, current = [], None
    for line in out.splitlines():
        m = re.match(r"(\s*)(- )?\.(\w+):\s+(\S+)", line)
        if not m:
            continue
        indent, dash, key, value = m.groups()
        if dash and len(indent) == 2:
            current = {}
            entries.append(current)
        if current is not None and len(indent) == 2 + (0 if dash else 2):
            current[key] = int(value) if value.isdigit() else value
    return {e["name"]: e for e in entries if "name" in e}


def ptxas_counts(ptxas, ptx, chip):
    err = subprocess.run([ptxas, f"-arch={chip}", "-O3", "-v", ptx, "-o",
                          os.devnull], check=True, capture_output=True,
                         text=True).stderr
    kernels, current = {}, None
    for line in err.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            kernels[current] = {"registers": int(m.group(1))}
        m = re.search(r"(\d+) bytes smem", line)
        if m and current in kernels:
            kernels[current]["shared_bytes"] = int(m.group(1))
    return kernels


def table_rows(path):
    """(variant index, chip, kernel) -> the row's cells."""
    rows = {}
    for line in open(path):
        cells = line.split()
        if len(cells) > 4 and cells[0].isdigit() and cells[3] != "-":
            rows[(int(cells[0]), cells[2], cells[3])] = cells
    return rows


def main():
    out_dir, table, family = sys.argv[1:4]
    manifest = json.load(open(os.path.join(out_dir, "manifest.json")))
    rows = table_rows(table)
    bad = 0
    for v in manifest["variants"]:
        for o in v["objects"]:
            if family == "rocdl":
                ref = readelf_counts(os.path.join(out_dir, o["file"]))
                keys = ["vgpr_count", "sgpr_count", "agpr_count"]
            else:
                ptx = os.path.join(sys.argv[4], o["file"].rsplit(".", 1)[0] + ".ptx")
                ref = ptxas_counts(sys.argv[5], ptx, o["chip"])
                keys = ["registers"]
            listed = {k["name"]: k["metadata"] for k in o["kernels"]}
            if set(listed) != set(ref):
                print(f"MISMATCH {v['id']} kernels: manifest {sorted(listed)} "
                      f"reference {sorted(ref)}")
                bad += 1
            for name, md in listed.items():
                mine = [md.get(k) for k in keys]
                theirs = [ref.get(name, {}).get(k) for k in keys]
                row = rows.get((v["index"], o["chip"], name))
                # Table cells after '#', hints, target, kernel, ms.
                shown = [int(c) for c in row[5:5 + len(keys)]] if row else None
                names = list(keys)
                if family == "rocdl":
                    # The spills column: VGPR + SGPR spill counts.
                    spill = lambda d: d.get("vgpr_spill_count", 0) + d.get("sgpr_spill_count", 0)
                    mine.append(spill(md))
                    theirs.append(spill(ref.get(name, {})))
                    if shown is not None:
                        shown.append(int(row[5 + len(keys)]))
                    names.append("spills")
                if family == "nvvm":
                    # No .nv.shared.<kernel> section: no shared memory.
                    mine.append(md.get("shared_bytes", 0))
                    theirs.append(ref.get(name, {}).get("shared_bytes", 0))
                    names.append("shared_bytes")
                counts = " ".join(f"{k}={m}" for k, m in zip(names, mine))
                # The table shows the counts before shared_bytes.
                if mine == theirs and shown == mine[:len(shown or [None])]:
                    print(f"{v['id']} {o['chip']} {name} {counts}: "
                          f"manifest == reference == table")
                else:
                    print(f"MISMATCH {v['id']} {o['chip']} {name}: manifest "
                          f"{mine} reference {theirs} table {shown}")
                    bad += 1
    sys.exit(1 if bad else 0)


main()
