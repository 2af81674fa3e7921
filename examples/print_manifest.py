#!/usr/bin/env python3
"""Prints the variant table of a fly-snapshot manifest.json, as fly-tune does.

One row per variant, object (target) and kernel; one section per target
family, with the register columns that family has (AMDGPU: VGPR, SGPR, AGPR;
NVIDIA: REGS). Every cell comes from the manifest: each kernel's
`resources` (registers, spills, scratch, occupancy, normalised once by the
library) and `best_per_kernel` (the best row's note says 'best').
"""
import json
import sys


def cell(value):
    return "-" if value is None else str(value)


def resources(family, res):
    """Register columns, spills and scratch/stack of one kernel, as the
    library normalised them (the kernel's `resources`)."""
    regs = [res["vgpr"], res["sgpr"], res["agpr"]] if family == "rocdl" else [res["registers"]]
    return regs, res["spills"], res["scratch"]


def failure_summary(error):
    """The error's first line, and the next when the first only introduces
    it ("`ptxas` invocation failed. Log:"), as fly-tune's row shows it."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    if not lines:
        return ""
    if lines[0].endswith(":") and len(lines) > 1:
        return lines[0] + " " + lines[1]
    return lines[0]


def main(path):
    manifest = json.load(open(path))
    variants = manifest["variants"]
    best = {(b["gpu_module"], b["chip"], b.get("target_index", 0), b["kernel"]): b["variant"]
            for b in manifest.get("best_per_kernel", [])}
    families = []
    for v in variants:
        for obj in v.get("objects", []):
            if obj.get("family") not in families:
                families.append(obj.get("family"))
    for family in families or [None]:
        amd = family == "rocdl"
        title = {"rocdl": "AMDGPU (rocdl) targets", "nvvm": "NVIDIA (nvvm) targets"}
        print(f"\n{title.get(family, 'variants')}:")
        reg_head = f"{'VGPR':>5} {'SGPR':>5} {'AGPR':>5}" if amd else f"{'REGS':>5}"
        print(f"{'#':<3} {'hint set':<30} {'target':<8} {'kernel':<16} {'ms':>8} "
              f"{reg_head} {'spills':>6} {('scratch' if amd else 'stack'):>7} "
              f"{'occ':>5} {'bytes':>8}  note")
        for v in variants:
            hints = v["hints"] or "(default)"
            if v["status"] != "ok":
                if family == (families or [None])[0]:
                    print(f"{v['index']:<3} {hints:<30} FAILED: {failure_summary(v['error'])}")
                continue
            ms = f"{v['replay_ms']:.1f}"
            note = ", ".join(x for x in (
                f"same as #{v['duplicate_of']}" if v.get("duplicate_of") is not None else "",
                "numerics" if v.get("changes_numerics") else "") if x)
            for obj in v["objects"]:
                if obj.get("family") != family:
                    continue
                label = obj["chip"]
                if any(o is not obj and o["gpu_module"] == obj["gpu_module"] and
                       o["chip"] == obj["chip"] for o in v["objects"]):
                    label = f"{obj['chip']}#{obj.get('target_index', 0)}"
                if not obj["kernels"]:
                    why = obj.get("register_note", "no kernels listed")
                    dashes = " ".join(f"{'-':>5}" for _ in range(3 if amd else 1))
                    print(f"{v['index']:<3} {hints:<30} {label:<8} {'-':<16} "
                          f"{ms:>8} {dashes} {'-':>6} {'-':>7} {'-':>5} "
                          f"{obj['size']:>8}  {'; '.join(x for x in (note, why) if x)}")
                    continue
                for k in obj["kernels"]:
                    regs, spills, scratch = resources(family, k["resources"])
                    occ = k["resources"]["occupancy"]
                    is_best = best.get((obj["gpu_module"], obj["chip"],
                                        obj.get("target_index", 0),
                                        k["name"])) == v["index"]
                    row_note = ", ".join(x for x in ("best" if is_best else "", note) if x)
                    reg_cells = " ".join(f"{cell(r):>5}" for r in regs)
                    print(f"{v['index']:<3} {hints:<30} {label:<8} "
                          f"{k['name']:<16} {ms:>8} {reg_cells} {cell(spills):>6} "
                          f"{cell(scratch):>7} {cell(occ):>5} {obj['size']:>8}  {row_note}")


if __name__ == "__main__":
    main(sys.argv[1])
