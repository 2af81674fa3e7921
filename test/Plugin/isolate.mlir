// REQUIRES: rocdl-toolkit
// executor=isolated: a hint set that crashes the backend (the r600 backend does
// not know gfx942; instruction selection ends in an LLVM fatal error, which would end
// mlir-opt) fails only its variant inside stock mlir-opt. The others are
// written, and mlir-opt reports the failure and exits 1 instead of dying.

// RUN: rm -rf %t && mkdir -p %t
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null 2> %t/err \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=1;target.triple=r600-unknown-unknown;waves_per_eu=2\" executor=isolated out-dir=%t/sweep binary-pass=\"gpu-module-to-binary{format=fatbin toolkit=%rocm_toolkit}\"})"
// RUN: FileCheck %s < %t/err
// CHECK: LLVM ERROR: Cannot select
// CHECK: error: fly-snapshot: replay of variant 'v1_target_triple_r600_unknown_unknown' (hints 'target.triple=r600-unknown-unknown') failed:
// CHECK-NEXT: {{^    }}the binary pass hit an LLVM fatal error{{.*}}: Cannot select
// RUN: ls %t/sweep | FileCheck %s --check-prefix=FILES
// FILES: manifest.json
// FILES: v0_waves_per_eu_1.kernels.gfx942.hsaco
// FILES: v2_waves_per_eu_2.kernels.gfx942.hsaco

// Without isolation too: the LLVM fatal error unwinds to the binary pass,
// which fails that variant's gpu.module; mlir-opt lives.
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=1;target.triple=r600-unknown-unknown\" out-dir=%t/batch binary-pass=\"gpu-module-to-binary{format=fatbin toolkit=%rocm_toolkit}\"})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BATCH
// BATCH: LLVM ERROR: Cannot select
// BATCH: error: fly-snapshot: replay of variant 'v1_target_triple_r600_unknown_unknown' (hints 'target.triple=r600-unknown-unknown') failed:
// BATCH: the binary pass hit an LLVM fatal error: Cannot select
// RUN: ls %t/batch | FileCheck %s --check-prefix=BATCH-FILES

// The process executor needs fly-tune: inside a pass it is refused before
// anything compiles, as is the old isolate= spelling.
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=1\" executor=process})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PROCESS
// PROCESS: error: fly-snapshot: executor must be batch or isolated inside a pass, got 'process'
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=1\" isolate=true})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OLD
// OLD: no such option isolate
// BATCH-FILES: manifest.json
// BATCH-FILES: v0_waves_per_eu_1.kernels.gfx942.hsaco

module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
      %0 = rocdl.workitem.id.x : i32
      %1 = llvm.getelementptr %arg0[%0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %2 = llvm.load %1 : !llvm.ptr<1> -> f32
      %3 = llvm.fadd %2, %2 : f32
      llvm.store %3, %1 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
