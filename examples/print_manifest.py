#!/usr/bin/env python3
"""Prints the variant table of a fly-snapshot manifest.json."""
import json
import sys

manifest = json.load(open(sys.argv[1]))
print(f"{'variant':<34} {'vgpr':>5} {'sgpr':>5} {'spills':>7} {'scratch':>8} {'ms':>8}  note")
for v in manifest["variants"]:
    if v["status"] != "ok":
        print(f"{v['id']:<34} FAILED: {v['error'].splitlines()[0]}")
        continue
    for obj in v["objects"]:
        for k in obj["kernels"]:
            md = k["metadata"]
            spills = md.get("vgpr_spill_count", 0) + md.get("sgpr_spill_count", 0)
            note = f"same objects as variant {v['duplicate_of']}" if v["duplicate_of"] is not None else ""
            print(f"{v['id']:<34} {md.get('vgpr_count', md.get('registers', '-')):>5} "
                  f"{md.get('sgpr_count', '-'):>5} {spills:>7} "
                  f"{md.get('private_segment_fixed_size', '-'):>8} {v['replay_ms']:>8}  {note}")
