// Three placement mistakes, three messages that name them: fly-snapshot
// after gpu-module-to-binary, on a module with no GPU code at all, and with
// no hints (a warning: the pass only checked its placement).

// RUN: rm -rf %t && split-file %s %t
// DEFINE: %{opt} = mlir-opt --load-pass-plugin=%fly_plugin -o /dev/null

// RUN: %{opt} -verify-diagnostics %t/after-binary.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"maxnreg=64\"})"
// RUN: not %{opt} %t/after-binary.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"maxnreg=64\"})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=AFTER
// AFTER-LABEL: after-binary.mlir:3:3: error: fly-snapshot runs after gpu-module-to-binary: @kernels is already a gpu.binary; place fly-snapshot immediately before gpu-module-to-binary, not after it
// AFTER-NEXT:  gpu.binary @kernels

// RUN: %{opt} -verify-diagnostics %t/no-gpu.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"maxnreg=64\"})"
// RUN: not %{opt} %t/no-gpu.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"maxnreg=64\"})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOGPU
// NOGPU-LABEL: no-gpu.mlir:2:1: error: fly-snapshot found no gpu.module: this module has no GPU kernel to compile, so there is nothing to replay
// NOGPU-NOT:   target is attached

// RUN: %{opt} -verify-diagnostics %t/no-hints.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot)"
// RUN: %{opt} %t/no-hints.mlir --pass-pipeline="builtin.module(fly-snapshot)" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOHINTS
// NOHINTS-LABEL: no-hints.mlir:2:1: warning: fly-snapshot: no hints given (hints= or hints-file=), so no variant is replayed

//--- after-binary.mlir
module attributes {gpu.container_module} {
  // expected-error@+1 {{fly-snapshot runs after gpu-module-to-binary: @kernels is already a gpu.binary}}
  gpu.binary @kernels [#gpu.object<#rocdl.target<chip = "gfx942">, "">]
}

//--- no-gpu.mlir
// expected-error@+1 {{fly-snapshot found no gpu.module: this module has no GPU kernel to compile}}
module {
  func.func @f() {
    return
  }
}

//--- no-hints.mlir
// expected-warning@+1 {{fly-snapshot: no hints given (hints= or hints-file=), so no variant is replayed}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}
