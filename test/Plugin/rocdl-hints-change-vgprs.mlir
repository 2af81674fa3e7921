// Register pressure on gfx942: one sweep over examples/tile_matmul.mlir,
// whose 128 accumulators need more VGPRs than 4 waves per EU leave (128) and
// far more than 8 leave (64). Each hint set must reach the AMDGPU backend and
// show in the manifest's per-kernel metadata; the pipeline's own
// gpu-module-to-binary after the pass still produces the one default binary.

// REQUIRES: rocdl-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %fly_src/examples/tile_matmul.mlir \
// RUN:   --pass-pipeline="builtin.module(rocdl-attach-target{chip=gfx942 O=3},gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx942}),reconcile-unrealized-casts,fly-snapshot{hints=\"waves_per_eu=0;waves_per_eu=4;waves_per_eu=8;maxnreg=64\" binary-pass=\"gpu-module-to-binary{toolkit=%rocm_toolkit}\" out-dir=%t/sweep},gpu-module-to-binary{toolkit=%rocm_toolkit})" \
// RUN:   -o %t/out.mlir
// RUN: FileCheck %s --check-prefix=OUT --input-file=%t/out.mlir
// RUN: %python %S/Inputs/summarize_manifest.py %t/sweep/manifest.json \
// RUN:   --keys vgpr_count,vgpr_spill_count,agpr_count | FileCheck %s

// The main module: exactly one gpu.binary, no variant left behind.
// OUT-NOT:     fly.
// OUT:         gpu.binary @kernels [#gpu.object<#rocdl.target<O = 3, chip = "gfx942">
// OUT-NOT:     gpu.binary
// OUT-NOT:     gpu.module
// OUT-NOT:     @v{{[0-9]+}}_

// CHECK:       sweep tool=fly-snapshot variants=4

// Default (waves_per_eu=0 leaves the attribute unset): more than 128 VGPRs
// (168 with LLVM 22), no spills.
// CHECK-LABEL: variant 0 v0_waves_per_eu_0 status=ok duplicate_of=null hints=waves_per_eu=0
// CHECK-NEXT:    file v0_waves_per_eu_0.mlir ok
// CHECK-NEXT:    file v0_waves_per_eu_0.kernels.gfx942.hsaco ok elf
// CHECK-NEXT:    kernel kernels/tile_matmul vgpr_count={{1[3-9][0-9]|2[0-5][0-9]}} vgpr_spill_count=0 agpr_count=0

// 4 waves per EU: at most 512 / 4 = 128 VGPRs, so the rest spills.
// CHECK-LABEL: variant 1 v1_waves_per_eu_4 status=ok duplicate_of=null hints=waves_per_eu=4
// CHECK-NEXT:    file v1_waves_per_eu_4.mlir ok
// CHECK-NEXT:    file v1_waves_per_eu_4.kernels.gfx942.hsaco ok elf
// CHECK-NEXT:    kernel kernels/tile_matmul vgpr_count=128 vgpr_spill_count={{[1-9][0-9]*}} agpr_count=0

// 8 waves per EU: at most 64 VGPRs, more spills.
// CHECK-LABEL: variant 2 v2_waves_per_eu_8 status=ok duplicate_of=null hints=waves_per_eu=8
// CHECK-NEXT:    file v2_waves_per_eu_8.mlir ok
// CHECK-NEXT:    file v2_waves_per_eu_8.kernels.gfx942.hsaco ok elf
// CHECK-NEXT:    kernel kernels/tile_matmul vgpr_count=64 vgpr_spill_count={{[1-9][0-9]*}} agpr_count=0

// maxnreg=64 is amdgpu-num-vgpr=64, which LLVM doubles on gfx90a and later
// (unified VGPR/AGPR file): 128 registers, with spills.
// CHECK-LABEL: variant 3 v3_maxnreg_64 status=ok duplicate_of=null hints=maxnreg=64
// CHECK-NEXT:    file v3_maxnreg_64.mlir ok
// CHECK-NEXT:    file v3_maxnreg_64.kernels.gfx942.hsaco ok elf
// CHECK-NEXT:    kernel kernels/tile_matmul vgpr_count=128 vgpr_spill_count={{[1-9][0-9]*}} agpr_count=0
// CHECK-NOT:   unlisted file
