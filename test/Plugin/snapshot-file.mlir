// snapshot-file writes the checkpoint (the module as gpu-module-to-binary
// would see it), by default as bytecode, atomically: it reads back to the
// same module, and a truncated copy does not read at all.

// RUN: rm -rf %t && mkdir -p %t
// RUN: mlir-opt %s -o %t/ref.mlir
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o %t/out.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{snapshot-file=%t/snap.mlirbc})"
// RUN: diff %t/ref.mlir %t/out.mlir

// Bytecode: the magic number, then a module that reads back unchanged.
// RUN: %python -c "import sys; print(open(sys.argv[1], 'rb').read(4))" %t/snap.mlirbc \
// RUN:   | FileCheck %s --check-prefix=MAGIC
// MAGIC: b'ML\xefR'
// RUN: mlir-opt %t/snap.mlirbc -o %t/back.mlir
// RUN: diff %t/ref.mlir %t/back.mlir
// RUN: FileCheck %s --check-prefix=BACK --input-file=%t/back.mlir
// BACK-LABEL: module attributes {gpu.container_module}
// BACK:         gpu.module @kernels [#rocdl.target<chip = "gfx942">]
// BACK:           llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel}
// BACK:             rocdl.workitem.id.x

// Locations are kept in bytecode.
// RUN: mlir-opt %t/snap.mlirbc -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// LOC: loc("{{.*}}snapshot-file.mlir":[[#]]:[[#]])

// The snapshot can be replayed later: it is a valid checkpoint input.
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %t/snap.mlirbc -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2\" binary-pass=\"gpu-module-to-binary{format=isa}\" out-dir=%t/replay})"
// RUN: ls %t/replay | FileCheck %s --check-prefix=REPLAY
// REPLAY: v0_waves_per_eu_2.kernels.gfx942.s

// Text on request.
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{snapshot-file=%t/snap.mlir snapshot-format=text})"
// RUN: FileCheck %s --check-prefix=TEXT --input-file=%t/snap.mlir
// TEXT-LABEL: module attributes {gpu.container_module} {
// TEXT-NEXT:    gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
// TEXT-NEXT:      llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
// TEXT-NEXT:        %0 = rocdl.workitem.id.x : i32
// RUN: mlir-opt %t/snap.mlir -o %t/back-text.mlir
// RUN: diff %t/ref.mlir %t/back-text.mlir

// With hints the snapshot is the same checkpoint, not a hinted variant.
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=4\" binary-pass=\"gpu-module-to-binary{format=isa}\" snapshot-file=%t/hinted.mlir snapshot-format=text})"
// RUN: diff %t/snap.mlir %t/hinted.mlir

// Nothing but the snapshots is left in the directory (no temporaries).
// RUN: ls %t | env LC_ALL=C sort | FileCheck %s --check-prefix=FILES
// FILES:      back-text.mlir
// FILES-NEXT: back.mlir
// FILES-NEXT: hinted.mlir
// FILES-NEXT: out.mlir
// FILES-NEXT: ref.mlir
// FILES-NEXT: replay
// FILES-NEXT: snap.mlir
// FILES-NEXT: snap.mlirbc
// FILES-EMPTY:

// A truncated snapshot is rejected.
// RUN: head -c 100 %t/snap.mlirbc > %t/truncated.mlirbc
// RUN: not mlir-opt %t/truncated.mlirbc -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: truncated.mlirbc:0:0: error:

// An unwritable path is an error at the module, and fails the run.
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{snapshot-file=%t/no/such/dir/snap.mlirbc})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNWRITABLE
// UNWRITABLE: snapshot-file.mlir:[[# @LINE + 3]]:1: error: cannot write snapshot '{{.*}}no/such/dir/snap.mlirbc'
// UNWRITABLE-NOT: error:

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
