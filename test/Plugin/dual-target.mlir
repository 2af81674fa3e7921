// One gpu.module, two targets: every variant writes one object per target,
// named with its chip and listed with its file, target and chip. A hint
// limited to one chip (target[gfx90a].O, O[gfx942]) leaves the other
// target's object byte-identical to the default's. Hints that would make the
// two targets one, select no target, or name an unknown chip are located
// errors before anything compiles.

// REQUIRES: rocdl-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o %t/out.mlir \
// RUN:   --pass-pipeline="builtin.module(gpu.module(convert-gpu-to-rocdl{chipset=gfx90a}),reconcile-unrealized-casts,fly-snapshot{hints-file=%S/Inputs/dual_target_hints.json binary-pass=\"gpu-module-to-binary{format=bin toolkit=%rocm_toolkit}\" out-dir=%t/sweep},gpu-module-to-binary{format=bin toolkit=%rocm_toolkit})"
// RUN: ls %t/sweep | FileCheck %s --check-prefix=FILES
// FILES:      manifest.json
// FILES-NEXT: v0_default.dual.gfx90a.hsaco
// FILES-NEXT: v0_default.dual.gfx942.hsaco
// FILES-NEXT: v0_default.mlir
// FILES-NEXT: v1_target_gfx90a__O_0.dual.gfx90a.hsaco
// FILES-NEXT: v1_target_gfx90a__O_0.dual.gfx942.hsaco
// FILES-NEXT: v1_target_gfx90a__O_0.mlir
// FILES-NEXT: v2_O_gfx942__1.dual.gfx90a.hsaco
// FILES-NEXT: v2_O_gfx942__1.dual.gfx942.hsaco
// FILES-NEXT: v2_O_gfx942__1.mlir
// FILES-EMPTY:

// Each file holds the chip its name says (the ELF header's machine flags).
// RUN: llvm-readelf-22 -h %t/sweep/v0_default.dual.gfx90a.hsaco | FileCheck %s --check-prefix=GFX90A
// RUN: llvm-readelf-22 -h %t/sweep/v1_target_gfx90a__O_0.dual.gfx90a.hsaco | FileCheck %s --check-prefix=GFX90A
// RUN: llvm-readelf-22 -h %t/sweep/v0_default.dual.gfx942.hsaco | FileCheck %s --check-prefix=GFX942
// RUN: llvm-readelf-22 -h %t/sweep/v2_O_gfx942__1.dual.gfx942.hsaco | FileCheck %s --check-prefix=GFX942
// GFX90A: Flags: {{.*}} gfx90a
// GFX942: Flags: {{.*}} gfx942

// A hint for one chip changes that chip's object only.
// RUN: cmp %t/sweep/v0_default.dual.gfx942.hsaco %t/sweep/v1_target_gfx90a__O_0.dual.gfx942.hsaco
// RUN: not cmp -s %t/sweep/v0_default.dual.gfx90a.hsaco %t/sweep/v1_target_gfx90a__O_0.dual.gfx90a.hsaco
// RUN: cmp %t/sweep/v0_default.dual.gfx90a.hsaco %t/sweep/v2_O_gfx942__1.dual.gfx90a.hsaco
// RUN: not cmp -s %t/sweep/v0_default.dual.gfx942.hsaco %t/sweep/v2_O_gfx942__1.dual.gfx942.hsaco

// The manifest lists both objects with file, target and chip, and their
// kernels (format=bin: read from the AMDGPU metadata notes).
// RUN: %python -c "import json,sys; m=json.load(open(sys.argv[1])); [print(v['id'], o['file'], o['chip'], o['target'], o['register_source'], ' '.join(k['name'] + '=' + str(k['metadata']['vgpr_count']) for k in o['kernels'])) for v in m['variants'] for o in v['objects']]" %t/sweep/manifest.json | FileCheck %s --check-prefix=MANIFEST
// MANIFEST:      v0_default v0_default.dual.gfx90a.hsaco gfx90a #rocdl.target<chip = "gfx90a"> AMDGPU metadata note scale={{[0-9]+}} axpy={{[0-9]+}}
// MANIFEST-NEXT: v0_default v0_default.dual.gfx942.hsaco gfx942 #rocdl.target<chip = "gfx942"> AMDGPU metadata note scale={{[0-9]+}} axpy={{[0-9]+}}
// MANIFEST-NEXT: v1_target_gfx90a__O_0 v1_target_gfx90a__O_0.dual.gfx90a.hsaco gfx90a #rocdl.target<O = 0, chip = "gfx90a">
// MANIFEST-NEXT: v1_target_gfx90a__O_0 v1_target_gfx90a__O_0.dual.gfx942.hsaco gfx942 #rocdl.target<chip = "gfx942">
// MANIFEST-NEXT: v2_O_gfx942__1 v2_O_gfx942__1.dual.gfx90a.hsaco gfx90a #rocdl.target<chip = "gfx90a">
// MANIFEST-NEXT: v2_O_gfx942__1 v2_O_gfx942__1.dual.gfx942.hsaco gfx942 #rocdl.target<O = 1, chip = "gfx942">

// An unqualified target.chip would turn both targets into one.
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(gpu.module(convert-gpu-to-rocdl{chipset=gfx90a}),reconcile-unrealized-casts,fly-snapshot{hints=\";target.chip=gfx942\" binary-pass=\"gpu-module-to-binary{format=bin toolkit=%rocm_toolkit}\" out-dir=%t/collapse})" 2>&1 | FileCheck %s --check-prefix=COLLAPSE
// COLLAPSE: dual-target.mlir:[[@LINE+12]]:3: error: hint set 'target.chip=gfx942' makes targets #0 (#rocdl.target<chip = "gfx90a">) and #1 (#rocdl.target<chip = "gfx942">) of gpu.module @dual identical (#rocdl.target<chip = "gfx942">)
// RUN: not ls %t/collapse

// A selector that picks no target, and a chip LLVM does not know.
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(gpu.module(convert-gpu-to-rocdl{chipset=gfx90a}),reconcile-unrealized-casts,fly-snapshot{hints=\"target[gfx90b].O=1;target[gfx90a].chip=gfx9422\" binary-pass=\"gpu-module-to-binary{format=bin toolkit=%rocm_toolkit}\"})" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: hint 'target[gfx90b].O' (hint set 'target[gfx90b].O=1') selects 'gfx90b', which is neither a family (rocdl, nvvm) nor the chip of any target of this module
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(gpu.module(convert-gpu-to-rocdl{chipset=gfx90a}),reconcile-unrealized-casts,fly-snapshot{hints=\"target[gfx90a].chip=gfx9422\" binary-pass=\"gpu-module-to-binary{format=bin toolkit=%rocm_toolkit}\"})" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: hint 'target[gfx90a].chip' (hint set 'target[gfx90a].chip=gfx9422') names chip 'gfx9422', which LLVM's AMDGPU backend does not know; did you mean 'gfx942'?

module attributes {gpu.container_module} {
  gpu.module @dual [#rocdl.target<chip = "gfx90a">, #rocdl.target<chip = "gfx942">] {
    gpu.func @scale(%a: memref<1024xf32>, %s: f32) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %a[%tx] : memref<1024xf32>
      %m = arith.mulf %v, %s : f32
      memref.store %m, %a[%tx] : memref<1024xf32>
      gpu.return
    }
    gpu.func @axpy(%x: memref<1024xf32>, %y: memref<1024xf32>, %s: f32) kernel {
      %tx = gpu.thread_id x
      %bx = gpu.block_id x
      %c256 = arith.constant 256 : index
      %o = arith.muli %bx, %c256 : index
      %i = arith.addi %o, %tx : index
      %a = memref.load %x[%i] : memref<1024xf32>
      %b = memref.load %y[%i] : memref<1024xf32>
      %m = arith.mulf %a, %s : f32
      %r = arith.addf %m, %b : f32
      memref.store %r, %y[%i] : memref<1024xf32>
      gpu.return
    }
  }
}
