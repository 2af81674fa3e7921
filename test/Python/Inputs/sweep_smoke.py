"""A sweep with one crashing hint set through an installed fly_snapshot:
    python sweep_smoke.py <kernel.mlir> <out-dir>"""
import sys

import fly_snapshot

with fly_snapshot.Compiler(cache=False) as compiler:  # executor="process": the default
    result = compiler.compile(open(sys.argv[1]).read(), hint_sets=[
        {}, {"target.triple": "r600-unknown-unknown"}, {"waves_per_eu": 4}])
    for v in result:
        print(v.id, v.status, [k.registers for k in v.kernels])
    print("crash error:", result[1].error.splitlines()[0] if result[1].error else "")
    print("manifest:", result.write(sys.argv[2]).name)
print("alive")
