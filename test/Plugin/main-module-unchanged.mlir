// The pass compiles hinted copies and removes them again: the module it
// hands on is the module it got, to the byte, locations included, so the
// pipeline's own gpu-module-to-binary afterwards produces what it would
// without fly-snapshot in front of it.

// RUN: rm -rf %t && mkdir -p %t
// RUN: mlir-opt %s -o %t/ref.mlir
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o %t/out.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2;maxnreg=64;O=1,fast_fp_math=1;target.chip=gfx90a\" binary-pass=\"gpu-module-to-binary{format=isa}\" out-dir=%t/sweep})"
// RUN: diff %t/ref.mlir %t/out.mlir

// Locations too, and in generic form.
// RUN: mlir-opt %s -mlir-print-debuginfo -mlir-print-op-generic -o %t/ref.loc.mlir
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -mlir-print-debuginfo -mlir-print-op-generic -o %t/out.loc.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2;maxnreg=64;O=1,fast_fp_math=1;target.chip=gfx90a\" binary-pass=\"gpu-module-to-binary{format=isa}\"})"
// RUN: diff %t/ref.loc.mlir %t/out.loc.mlir

// The pass did run: one object per gpu.module and variant.
// RUN: ls %t/sweep | env LC_ALL=C sort | FileCheck %s --check-prefix=SWEEP
// SWEEP:      manifest.json
// SWEEP-NEXT: v0_waves_per_eu_2.kernels.gfx942.s
// SWEEP-NEXT: v0_waves_per_eu_2.mlir
// SWEEP-NEXT: v0_waves_per_eu_2.more_kernels.gfx942.s
// SWEEP-NEXT: v1_maxnreg_64.kernels.gfx942.s
// SWEEP-NEXT: v1_maxnreg_64.mlir
// SWEEP-NEXT: v1_maxnreg_64.more_kernels.gfx942.s
// SWEEP-NEXT: v2_O_1.fast_fp_math_1.kernels.gfx942.s
// SWEEP-NEXT: v2_O_1.fast_fp_math_1.mlir
// SWEEP-NEXT: v2_O_1.fast_fp_math_1.more_kernels.gfx942.s
// SWEEP-NEXT: v3_target_chip_gfx90a.kernels.gfx90a.s
// SWEEP-NEXT: v3_target_chip_gfx90a.mlir
// SWEEP-NEXT: v3_target_chip_gfx90a.more_kernels.gfx90a.s
// SWEEP-EMPTY:

// The following binary pass gives the same result with and without the
// snapshot pass in front of it.
// RUN: mlir-opt %s -o %t/bin.ref.mlir \
// RUN:   --pass-pipeline="builtin.module(gpu-module-to-binary{format=isa})"
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o %t/bin.out.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2;maxnreg=64;O=1,fast_fp_math=1;target.chip=gfx90a\" binary-pass=\"gpu-module-to-binary{format=isa}\"},gpu-module-to-binary{format=isa})"
// RUN: diff %t/bin.ref.mlir %t/bin.out.mlir
// RUN: FileCheck %s --check-prefix=BIN --input-file=%t/bin.out.mlir
// BIN:     func.func @host
// BIN:     gpu.binary @kernels [#gpu.object<#rocdl.target<chip = "gfx942">
// BIN:     gpu.binary @more_kernels [#gpu.object<#rocdl.target<O = 3, chip = "gfx942", flags = {"unsafe-math"}>
// BIN-NOT: fly.hints
// BIN-NOT: gfx90a

module attributes {gpu.container_module, fly.test.tag = "keep me"} {
  func.func @host(%buf: !llvm.ptr<1>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%buf : !llvm.ptr<1>)
    return
  }
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.mlir.global internal @scale(2.0 : f32) {addr_space = 1 : i32} : f32
    llvm.func @helper(%x: f32) -> f32 {
      %0 = llvm.mlir.addressof @scale : !llvm.ptr<1>
      %1 = llvm.load %0 : !llvm.ptr<1> -> f32
      %2 = llvm.fmul %x, %1 : f32
      llvm.return %2 : f32
    }
    llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel, rocdl.waves_per_eu = 1 : i32, passthrough = [["amdgpu-num-vgpr", "100"]]} {
      %0 = rocdl.workitem.id.x : i32
      %1 = llvm.getelementptr %arg0[%0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %2 = llvm.load %1 : !llvm.ptr<1> -> f32
      %3 = llvm.call @helper(%2) : (f32) -> f32
      llvm.store %3, %1 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
  gpu.module @more_kernels [#rocdl.target<O = 3, chip = "gfx942", flags = {"unsafe-math"}>] {
    llvm.func @k2() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}
