// --mlir-timing and the crash reproducer cover the replays: they run through
// Pass::runPipeline, under the parent pass manager's instrumentation.

// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s --mlir-timing --mlir-timing-display=tree \
// RUN:   --pass-pipeline='builtin.module(fly-snapshot{hints="O=1;O=2" binary-pass="gpu-module-to-binary{format=isa}"})' \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMING
// The replays are timed as a dynamic pipeline of two variant modules; the
// manifest's replay_ms is their wall time.
// TIMING: Execution time report
// TIMING: FlySnapshot
// TIMING: 'builtin.module' Pipeline
// TIMING-NEXT: 'builtin.module' Pipeline
// TIMING-NEXT: GpuModuleToBinaryPass

// A failing replay fails the pass, so the crash reproducer captures the run.
// RUN: rm -f %t.repro.mlir
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s --mlir-pass-pipeline-crash-reproducer=%t.repro.mlir \
// RUN:   --pass-pipeline='builtin.module(fly-snapshot{hints="O=1;target.triple=bogus-x-y" binary-pass="gpu-module-to-binary{format=isa}"})' \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: FileCheck %s --check-prefix=REPRO < %t.repro.mlir
// FAIL: error: fly-snapshot: replay of variant 'v1_target_triple_bogus_x_y' (hints 'target.triple=bogus-x-y') failed:
// FAIL-NEXT: {{^    .*}}Failed to lookup target for triple 'bogus-x-y'
// FAIL-NOT: see current operation
// REPRO: mlir_reproducer
// REPRO: pipeline: "builtin.module(fly-snapshot{

module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k(%arg0: !llvm.ptr) attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}
