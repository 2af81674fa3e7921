// reuse-isa on ROCDL: code generation reads every hint, so each variant
// compiles its own ISA (gpu-module-to-binary{format=isa}); fly-assemble-isa
// then assembles it and links it with lld inside the process instead of
// starting ld.lld. The code objects and the gpu.binary ops (kernel metadata
// included) must be byte-identical to a plain replay's.

// REQUIRES: rocdl-toolkit
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{mode} =
// DEFINE: %{reuse} =
// DEFINE: %{sweep} = mlir-opt --load-pass-plugin=%fly_plugin %fly_src/examples/tile_matmul.mlir -o /dev/null \
// DEFINE:   --pass-pipeline="builtin.module(rocdl-attach-target{chip=gfx942 O=3},gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx942}),reconcile-unrealized-casts,fly-snapshot{hints=\"waves_per_eu=0;waves_per_eu=4;maxnreg=64\" binary-pass=\"gpu-module-to-binary{toolkit=%rocm_toolkit}\" jobs=1 out-dir=%t/%{mode} reuse-isa=%{reuse}})"
// REDEFINE: %{mode} = plain
// REDEFINE: %{reuse} = false
// RUN: %{sweep}
// REDEFINE: %{mode} = reuse
// REDEFINE: %{reuse} = true
// RUN: %{sweep} --mlir-print-ir-after-all 2> %t/ir.txt

// RUN: cmp %t/plain/v0_waves_per_eu_0.kernels.gfx942.hsaco %t/reuse/v0_waves_per_eu_0.kernels.gfx942.hsaco
// RUN: cmp %t/plain/v1_waves_per_eu_4.kernels.gfx942.hsaco %t/reuse/v1_waves_per_eu_4.kernels.gfx942.hsaco
// RUN: cmp %t/plain/v2_maxnreg_64.kernels.gfx942.hsaco %t/reuse/v2_maxnreg_64.kernels.gfx942.hsaco
// RUN: cmp %t/plain/v0_waves_per_eu_0.mlir %t/reuse/v0_waves_per_eu_0.mlir
// RUN: cmp %t/plain/v1_waves_per_eu_4.mlir %t/reuse/v1_waves_per_eu_4.mlir
// RUN: cmp %t/plain/v2_maxnreg_64.mlir %t/reuse/v2_maxnreg_64.mlir

// Each variant compiled its own ISA.
// RUN: %python -c "import json; m = json.load(open('%t/reuse/manifest.json')); \
// RUN:   [print(v['id'], 'isa_from', v.get('isa_from')) for v in m['variants']]" \
// RUN:   | FileCheck %s --check-prefix=OWN
// OWN:      v0_waves_per_eu_0 isa_from 0
// OWN-NEXT: v1_waves_per_eu_4 isa_from 1
// OWN-NEXT: v2_maxnreg_64 isa_from 2

// The debugging aids see both steps of every variant.
// RUN: FileCheck %s --check-prefix=IR --input-file=%t/ir.txt
// IR-COUNT-3: IR Dump After GpuModuleToBinaryPass (gpu-module-to-binary)
// IR-COUNT-3: IR Dump After FlyAssembleIsa (fly-assemble-isa)
// IR:         IR Dump After FlySnapshot (fly-snapshot)
