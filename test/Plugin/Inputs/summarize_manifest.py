"""Prints a fly-snapshot manifest.json as stable lines for FileCheck.

  variant <index> <id> status=<ok|failed> duplicate_of=<n|null> hints=<...>
    file <name> ok|MISSING|EMPTY [elf]
    kernel <gpu_module>/<kernel> <key>=<value> ...
    error <first line of the error>

--keys k1,k2 limits the kernel metadata printed (default: all, sorted).
Exits non-zero if the manifest is not what fly-snapshot writes.
"""
import argparse
import json
import os
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("manifest")
    parser.add_argument("--keys", default="")
    args = parser.parse_args()
    keys = [k for k in args.keys.split(",") if k]
    out_dir = os.path.dirname(os.path.abspath(args.manifest))
    with open(args.manifest) as f:
        manifest = json.load(f)

    variants = manifest["variants"]
    if manifest["variant_count"] != len(variants):
        sys.exit("variant_count does not match the variants listed")
    print(f"sweep tool={manifest['tool']} variants={len(variants)}")
    for variant in variants:
        dup = variant.get("duplicate_of")
        print(
            f"variant {variant['index']} {variant['id']} "
            f"status={variant['status']} "
            f"duplicate_of={'null' if dup is None else dup} "
            f"hints={variant['hints']}"
        )
        for name in variant["files"]:
            path = os.path.join(out_dir, name)
            if not os.path.isfile(path):
                state = "MISSING"
            elif os.path.getsize(path) == 0:
                state = "EMPTY"
            else:
                state = "ok"
                with open(path, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        state += " elf"
            print(f"  file {name} {state}")
        for obj in variant.get("objects", []):
            for kernel in obj["kernels"]:
                meta = kernel["metadata"]
                shown = keys or sorted(meta)
                fields = " ".join(
                    f"{k}={json.dumps(meta[k]) if k in meta else '<none>'}"
                    for k in shown
                )
                print(f"  kernel {obj['gpu_module']}/{kernel['name']} {fields}")
        if variant["status"] != "ok":
            lines = variant.get("error", "").strip().splitlines() or [""]
            print(f"  error {lines[0]}")
    # Every object file in the directory is listed by some variant.
    listed = {name for v in variants for name in v["files"]}
    for name in sorted(os.listdir(out_dir)):
        if name not in ("manifest.json", ".fly-outdir") and name not in listed:
            print(f"unlisted file {name}")
    # .fly-outdir records exactly the files fly wrote (the next run removes
    # those and keeps everything else).
    record_path = os.path.join(out_dir, ".fly-outdir")
    if os.path.exists(record_path):
        with open(record_path) as f:
            recorded = {line.strip() for line in f
                        if line.strip() and not line.startswith("#")}
        if recorded != listed | {"manifest.json"}:
            print(f"out-dir record differs: {sorted(recorded ^ (listed | {'manifest.json'}))}")
    else:
        print("no out-dir record")


if __name__ == "__main__":
    main()
