"""compile_variants on a pre-binary module, as a DSL calls it; writes every
object to <out>/<variant id>.<n>.bin (nothing else, so that two such folders
compare with diff -r) and prints the library and toolkit it used.

usage: dsl_sweep.py <rocdl|nvvm> <prebinary.mlir> <out-dir>
"""
import os
import sys

import fly_snapshot

family, prebinary, out = sys.argv[1:]
chip = "gfx942" if family == "rocdl" else "sm_90"
configs = ([{}, {"waves_per_eu": 2}, {"maxnreg": 64}] if family == "rocdl"
           else [{}, {"maxnreg": 64}, {"maxnreg": 32}])
with fly_snapshot.Compiler(jobs=2, cache=False) as compiler:
    # The toolkit the library finds on its own, as fly-tune's preset names it.
    preset = compiler.preset_pipeline("%s:%s" % (family, chip))
    toolkit = preset.rsplit("toolkit=", 1)[1].rstrip("})")
    binary_pass = "gpu-module-to-binary{format=%s toolkit=%s}" % (
        "fatbin" if family == "rocdl" else "bin", toolkit)
    variants = fly_snapshot.compile_variants(
        open(prebinary).read(), binary_pass, configs, chip, compiler=compiler)
os.makedirs(out)
for variant in variants:
    print(variant.id, variant.status, variant.error)
    for n, obj in enumerate(variant.objects):
        with open(os.path.join(out, "%s.%d.bin" % (variant.id, n)), "wb") as f:
            f.write(obj.data)
print("library:", fly_snapshot.library_path())
print("toolkit:", toolkit)
