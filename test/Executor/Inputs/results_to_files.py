"""Writes the objects of a work directory's results/<entry>.json (what child
fly-tune --run-plan processes produce) as files, named like fly-tune's
out-dir: <id>.<gpu module>.<chip><extension> (single-target modules), and
prints one line per result.

    python3 results_to_files.py <work-dir> <out-dir>
"""

import base64
import json
import os
import re
import sys

# What fly names an object of a family and #gpu.object format
# (Replay/ObjectMetadata.cpp, getExtension).
EXTENSIONS = {
    ("rocdl", "offload"): ".bc", ("nvvm", "offload"): ".bc",
    ("rocdl", "assembly"): ".s", ("nvvm", "assembly"): ".ptx",
    ("rocdl", "bin"): ".hsaco", ("nvvm", "bin"): ".cubin",
    ("rocdl", "fatbin"): ".hsaco", ("nvvm", "fatbin"): ".fatbin",
}


def objects(result):
    """(gpu module, chip, extension, bytes) of each object of a result: its
    gpu.binary ops, each object's target attribute printed (VariantCodec)."""
    for binary in result["binaries"]:
        for obj in binary["objects"]:
            family = re.match(r"#(\w+)\.target", obj["target"]).group(1)
            chip = re.search(r'chip = "([^"]*)"', obj["target"]).group(1)
            yield (binary["name"], chip, EXTENSIONS[family, obj["format"]],
                   base64.b64decode(obj["bytes"]))

work, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
with open(os.path.join(work, "plan.json")) as f:
    plan = json.load(f)
results = os.path.join(work, "results")
for name in sorted(os.listdir(results), key=lambda n: int(n.split(".")[0])):
    entry = plan["entries"][int(name.split(".")[0])]
    with open(os.path.join(results, name)) as f:
        result = json.load(f)
    found = list(objects(result))
    for gpu_module, chip, extension, data in found:
        path = os.path.join(out, entry["id"] + "." + gpu_module + "." + chip +
                            extension)
        with open(path, "wb") as f:
            f.write(data)
    print("result", entry["id"], "error" if "error" in result else "ok",
          len(found))
