// A variant that fails inside a batch does not make the others compile
// again: each good variant's replay shows up exactly once under
// --mlir-print-ir-after-all (before, the whole batch was compiled a second
// time one variant at a time). The failing one keeps its own error.

// RUN: rm -rf %t && mkdir -p %t
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null --mlir-print-ir-after-all \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=1;target.triple=bogus-unknown;waves_per_eu=2;O=0\" binary-pass=\"gpu-module-to-binary{format=isa}\" jobs=4})" \
// RUN:   2> %t/ir
// RUN: FileCheck %s --check-prefix=ERR < %t/ir
// ERR: error: fly-snapshot: replay of variant 'v1_target_triple_bogus_unknown' (hints 'target.triple=bogus-unknown') failed:
// ERR-NEXT: {{^    .*}}Failed to lookup target for triple 'bogus-unknown'
// RUN: grep -c '^module @v0_waves_per_eu_1 ' %t/ir | FileCheck %s --check-prefix=ONCE
// RUN: grep -c '^module @v2_waves_per_eu_2 ' %t/ir | FileCheck %s --check-prefix=ONCE
// RUN: grep -c '^module @v3_O_0 ' %t/ir | FileCheck %s --check-prefix=ONCE
// ONCE: {{^1$}}

// The same without threads (the pass manager stops at the failure, so the
// variants after it were never reached: they compile once, alone).
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null --mlir-print-ir-after-all --mlir-disable-threading \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=1;target.triple=bogus-unknown;waves_per_eu=2;O=0\" binary-pass=\"gpu-module-to-binary{format=isa}\" jobs=4})" \
// RUN:   2> %t/ir1
// RUN: grep -c '^module @v0_waves_per_eu_1 ' %t/ir1 | FileCheck %s --check-prefix=ONCE
// RUN: grep -c '^module @v2_waves_per_eu_2 ' %t/ir1 | FileCheck %s --check-prefix=ONCE
// RUN: grep -c '^module @v3_O_0 ' %t/ir1 | FileCheck %s --check-prefix=ONCE

// fly-opt (ReplayInstrumentation) replays hint sets 2..N the same way.
// RUN: not fly-opt %s -o /dev/null --mlir-print-ir-after-all \
// RUN:   --fly-hints='O=1;waves_per_eu=1;target.triple=bogus-unknown;waves_per_eu=2;O=0' \
// RUN:   --pass-pipeline='builtin.module(gpu-module-to-binary{format=isa})' 2> %t/ir2
// RUN: grep -c '^module @v1_waves_per_eu_1 ' %t/ir2 | FileCheck %s --check-prefix=ONCE
// RUN: grep -c '^module @v3_waves_per_eu_2 ' %t/ir2 | FileCheck %s --check-prefix=ONCE
// RUN: grep -c '^module @v4_O_0 ' %t/ir2 | FileCheck %s --check-prefix=ONCE

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
