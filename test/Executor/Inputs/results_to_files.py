"""Writes the objects of a work directory's results/<entry>.json (what child
fly-tune --run-plan processes produce) as files, named like fly-tune's
out-dir: <id>.<gpu module>.<chip><extension> (single-target modules), and
prints one line per result.

    python3 results_to_files.py <work-dir> <out-dir>
"""

import base64
import json
import os
import sys

work, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
with open(os.path.join(work, "plan.json")) as f:
    plan = json.load(f)
results = os.path.join(work, "results")
for name in sorted(os.listdir(results), key=lambda n: int(n.split(".")[0])):
    entry = plan["entries"][int(name.split(".")[0])]
    with open(os.path.join(results, name)) as f:
        result = json.load(f)
    for obj in result["objects"]:
        path = os.path.join(out, entry["id"] + "." + obj["gpu_module"] + "." +
                            obj["chip"] + obj["extension"])
        with open(path, "wb") as f:
            f.write(base64.b64decode(obj["bytes"]))
    print("result", entry["id"], "error" if "error" in result else "ok",
          len(result["objects"]))
