// The replays run through the parent pass manager (Pass::runPipeline), so its
// IR printing covers them: one dump per hint set, each of the variant module
// `@v<index>_<label>` carrying `fly.hints`, before the main module's dump.

// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2;O=0\" binary-pass=\"gpu-module-to-binary{format=isa}\"})" \
// RUN:   --mlir-print-ir-after-all --mlir-disable-threading 2>&1 | FileCheck %s

// CHECK-LABEL: // -----// IR Dump After GpuModuleToBinaryPass (gpu-module-to-binary) //----- //
// CHECK-NEXT:  module @v0_waves_per_eu_2 attributes {fly.hints = "waves_per_eu=2"} {
// CHECK-NEXT:    gpu.binary @kernels  [#gpu.object<#rocdl.target<chip = "gfx942">, assembly = "{{.*}}amdgcn-amd-amdhsa--gfx942
// CHECK-NEXT:  }
// CHECK-LABEL: // -----// IR Dump After GpuModuleToBinaryPass (gpu-module-to-binary) //----- //
// CHECK-NEXT:  module @v1_O_0 attributes {fly.hints = "O=0"} {
// CHECK-NEXT:    gpu.binary @kernels  [#gpu.object<#rocdl.target<O = 0, chip = "gfx942">, assembly = "
// CHECK-NEXT:  }
// CHECK-NOT:   IR Dump After GpuModuleToBinaryPass
// CHECK-LABEL: // -----// IR Dump After FlySnapshot (fly-snapshot) //----- //
// CHECK-NEXT:  module attributes {gpu.container_module} {
// CHECK-NEXT:    gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
// CHECK-NOT:   IR Dump

// The hinted clones as the binary pass receives them.
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2;O=0\" binary-pass=\"gpu-module-to-binary{format=isa}\"})" \
// RUN:   --mlir-print-ir-before=gpu-module-to-binary --mlir-disable-threading 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BEFORE

// BEFORE-LABEL: // -----// IR Dump Before GpuModuleToBinaryPass (gpu-module-to-binary) //----- //
// BEFORE-NEXT:  module @v0_waves_per_eu_2 attributes {fly.hints = "waves_per_eu=2"} {
// BEFORE-NEXT:    gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
// BEFORE-NEXT:      llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel, rocdl.waves_per_eu = 2 : i32} {
// BEFORE-LABEL: // -----// IR Dump Before GpuModuleToBinaryPass (gpu-module-to-binary) //----- //
// BEFORE-NEXT:  module @v1_O_0 attributes {fly.hints = "O=0"} {
// BEFORE-NEXT:    gpu.module @kernels [#rocdl.target<O = 0, chip = "gfx942">] {
// BEFORE-NEXT:      llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
// BEFORE-NOT:   IR Dump

// The tree dump writes one file per variant, nested under the container.
// RUN: rm -rf %t.tree
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2;O=0\" binary-pass=\"gpu-module-to-binary{format=isa}\"})" \
// RUN:   --mlir-print-ir-after-all --mlir-print-ir-tree-dir=%t.tree
// RUN: find %t.tree -type f | FileCheck %s --check-prefix=TREE
// RUN: find %t.tree -type f | count 3
// RUN: cat %t.tree/*/*/builtin_module_v1_O_0/*gpu-module-to-binary.mlir \
// RUN:   | FileCheck %s --check-prefix=TREE-V1

// TREE-DAG: builtin_module_no-symbol-name/{{[0-9_]+}}fly-snapshot.mlir
// TREE-DAG: builtin_module_no-symbol-name/builtin_module_fly.replay/builtin_module_v0_waves_per_eu_2/{{[0-9_]+}}gpu-module-to-binary.mlir
// TREE-DAG: builtin_module_no-symbol-name/builtin_module_fly.replay/builtin_module_v1_O_0/{{[0-9_]+}}gpu-module-to-binary.mlir

// TREE-V1:      module @v1_O_0 attributes {fly.hints = "O=0"} {
// TREE-V1-NEXT:   gpu.binary @kernels  [#gpu.object<#rocdl.target<O = 0, chip = "gfx942">

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
