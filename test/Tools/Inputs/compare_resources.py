"""Checks that every reader shows the kernel resources the manifest holds.

  compare_resources.py <out-dir> <fly-tune table.txt> <print_manifest.py> [<isa-out-dir>]

For each (variant, object, kernel) of <out-dir>/manifest.json it compares
the kernel's `resources` (the library's normalised registers, spills,
scratch, occupancy) with fly-tune's table row, print_manifest.py's row and
fly_snapshot.read_out_dir's Kernel, and the `best` notes of both tables with
best_per_kernel. With <isa-out-dir> (the same sweep as format=isa, ROCDL,
assembled with verbose comments) the occupancy is also compared with LLVM's
own `; Occupancy: N` comment where the assembly has one. Prints one line per kernel:
  <id> <chip> <kernel> <fields>: manifest == table == print_manifest == python
and exits 1 on any difference; no kernel at all is a failure too.
"""
import json
import os
import re
import subprocess
import sys

from fly_snapshot import read_out_dir


def table_rows(text):
    """(variant index, target label, kernel) -> (the register..occ cells, note)."""
    rows, family = {}, None
    for line in text.splitlines():
        if line.startswith("AMDGPU (rocdl)"):
            family = "rocdl"
        elif line.startswith("NVIDIA (nvvm)"):
            family = "nvvm"
        cells = line.split()
        if len(cells) < 5 or not cells[0].isdigit() or cells[3] == "-" or cells[2] == "FAILED:":
            continue
        width = 3 if family == "rocdl" else 1
        # '#', hints, target, kernel, ms, registers, spills, scratch, occ, bytes, note...
        values = cells[5:5 + width + 3]
        rows[(int(cells[0]), cells[2], cells[3])] = (values, "best" in cells[5 + width + 4:])
    return rows


def cell(value):
    return "-" if value is None else str(value)


def llvm_occupancy(isa_dir, variant_id):
    """kernel -> LLVM's '; Occupancy: N' from that variant's .s files."""
    found = {}
    for name in os.listdir(isa_dir):
        if not (name.startswith(variant_id + ".") and name.endswith(".s")):
            continue
        kernel = None
        for line in open(os.path.join(isa_dir, name)):
            m = re.match(r"^(\w+):\s*(;.*)?$", line)
            if m and not line.startswith("."):
                kernel = m.group(1)
            m = re.search(r";\s*Occupancy:\s*(\d+)", line)
            if m and kernel:
                found[kernel] = int(m.group(1))
    return found


def main():
    out_dir, table_path, printer = sys.argv[1:4]
    isa_dir = sys.argv[4] if len(sys.argv) > 4 else None
    manifest = json.load(open(os.path.join(out_dir, "manifest.json")))
    tune = table_rows(open(table_path).read())
    printed = table_rows(subprocess.run(
        [sys.executable, printer, os.path.join(out_dir, "manifest.json")],
        check=True, capture_output=True, text=True).stdout)
    python = {v.index: v for v in read_out_dir(out_dir)}
    best = {(b["gpu_module"], b["chip"], b["target_index"], b["kernel"]): b["variant"]
            for b in manifest["best_per_kernel"]}
    bad = checked = 0
    for v in manifest["variants"]:
        if v["status"] != "ok":
            continue
        occ_ref = llvm_occupancy(isa_dir, v["id"]) if isa_dir else {}
        for oi, o in enumerate(v["objects"]):
            rocdl = o["family"] == "rocdl"
            label = o["chip"]
            if any(p is not o and p["gpu_module"] == o["gpu_module"] and p["chip"] == o["chip"]
                   for p in v["objects"]):
                label = "%s#%d" % (o["chip"], o["target_index"])
            for ki, k in enumerate(o["kernels"]):
                md, res = k["metadata"], k["resources"]
                if not 0 <= md.get("agpr_count", 0) <= 2**31 - 1:
                    print("MISMATCH %s %s: the agpr_count sentinel %d is in the metadata"
                          % (v["id"], k["name"], md["agpr_count"]))
                    bad += 1
                fields = (["vgpr", "sgpr", "agpr"] if rocdl else ["registers"]) + \
                    ["spills", "scratch", "occupancy"]
                mine = [cell(res[f]) for f in fields]
                pk = python[v["index"]].objects[oi].kernels[ki]
                py_regs = [pk.registers, pk.sgprs, pk.agprs] if rocdl else [pk.registers]
                py = [cell(x) for x in py_regs + [pk.spills, pk.scratch, pk.occupancy]]
                key = (v["index"], label, k["name"])
                is_best = best.get((o["gpu_module"], o["chip"], o["target_index"],
                                    k["name"])) == v["index"]
                views = {"table": tune.get(key), "print_manifest": printed.get(key)}
                ok = py == mine and pk.lds == res["shared"]
                for name, row in views.items():
                    ok = ok and row is not None and row[0] == mine and row[1] == is_best
                if k["name"] in occ_ref and cell(occ_ref[k["name"]]) != mine[-1]:
                    print("MISMATCH %s %s %s: occupancy %s, LLVM says %d"
                          % (v["id"], o["chip"], k["name"], mine[-1], occ_ref[k["name"]]))
                    bad += 1
                shown = " ".join("%s=%s" % (f, m) for f, m in zip(fields, mine))
                if ok:
                    print("%s %s %s %s: manifest == table == print_manifest == python"
                          % (v["id"], label, k["name"], shown))
                else:
                    print("MISMATCH %s %s %s: manifest %s best=%s python %s table %s "
                          "print_manifest %s" % (v["id"], label, k["name"], mine, is_best,
                                                 py, views["table"], views["print_manifest"]))
                    bad += 1
                checked += 1
    if not checked:
        print("MISMATCH: no kernel checked")
    sys.exit(1 if bad or not checked else 0)


main()
