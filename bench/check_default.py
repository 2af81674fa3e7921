#!/usr/bin/env python3
"""Checks a fly-tune out-dir's default variant against stock mlir-opt.

Runs stock mlir-opt on the manifest's input with the manifest's pipeline
(the preset fly-tune used, unsplit), takes every #gpu.object of the
gpu.binary ops it prints, and compares their bytes with the object files of
the variant whose hint set is empty (the default). Prints one line per
object; exit 0 when all are identical, 1 when one differs or is missing.

  check_default.py --mlir-opt mlir-opt-22 OUT_DIR [OUT_DIR...]

--hints picks the variant of another hint set (its canonical text, e.g.
'waves_per_eu=1'), and --stock-input gives stock mlir-opt the input that
writes those hints by hand.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# The object's head; its kernel metadata and properties come before `bin`.
OBJECT = re.compile(r'#gpu\.object<#(\w+)\.target<[^>]*?chip = "([^"]+)"[^>]*>,')
PAYLOAD = re.compile(r'\b(?:bin|assembly) = "')


def decode_string(text, start):
    """MLIR's escaped string starting at text[start]: bytes and end index."""
    out = bytearray()
    i = start
    while True:
        c = text[i]
        if c == '"':
            return bytes(out), i + 1
        if c == "\\":
            nxt = text[i + 1]
            if nxt in '\\"':
                out.append(ord(nxt))
                i += 2
            elif nxt == "n":
                out.append(10)
                i += 2
            elif nxt == "t":
                out.append(9)
                i += 2
            else:
                out.append(int(text[i + 1:i + 3], 16))
                i += 3
            continue
        out.extend(c.encode("utf-8"))
        i += 1


def stock_objects(mlir_opt, manifest, stock_input):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "stock.mlir")
        subprocess.run([mlir_opt, stock_input or manifest["input"],
                        "--pass-pipeline=" + manifest["pipeline"], "-o", out],
                       check=True)
        with open(out, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    objects = []
    pos = 0
    while m := OBJECT.search(text, pos):
        payload = PAYLOAD.search(text, m.end())
        if not payload:
            break
        data, pos = decode_string(text, payload.end())
        objects.append((m.group(1), m.group(2), data))
    return objects


def check(mlir_opt, out_dir, hints="", stock_input=None):
    with open(os.path.join(out_dir, "manifest.json")) as f:
        manifest = json.load(f)
    chosen = [v for v in manifest["variants"] if v.get("hints", "") == hints]
    if not chosen:
        print(f"{out_dir}: no hint set '{hints}' in the sweep")
        return False
    ours = chosen[0]["objects"]
    stock = stock_objects(mlir_opt, manifest, stock_input)
    ok = len(ours) == len(stock)
    if not ok:
        print(f"{out_dir}: {len(ours)} objects from fly-tune, {len(stock)} from stock mlir-opt")
    for obj, (family, chip, data) in zip(ours, stock):
        with open(os.path.join(out_dir, obj["file"]), "rb") as f:
            mine = f.read()
        same = mine == data and obj["family"] == family and obj["chip"] == chip
        ok &= same
        print(f"{obj['file']}: {len(mine)} bytes, stock {family}:{chip} {len(data)} bytes: "
              + ("identical" if same else "DIFFERENT"))
    return ok


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mlir-opt", default="mlir-opt-22")
    p.add_argument("--hints", default="",
                   help="the variant's hint set, canonical (default: empty)")
    p.add_argument("--stock-input",
                   help="what stock mlir-opt compiles (default: the manifest's input)")
    p.add_argument("out_dirs", nargs="+")
    args = p.parse_args(argv)
    results = [check(args.mlir_opt, d, args.hints, args.stock_input)
               for d in args.out_dirs]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
