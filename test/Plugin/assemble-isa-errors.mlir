// fly-assemble-isa refuses gpu.modules it cannot finish, at their location,
// and fails the run.

// RUN: mlir-opt --load-pass-plugin=%fly_plugin -split-input-file -verify-diagnostics %s \
// RUN:   --pass-pipeline="builtin.module(fly-assemble-isa{format=bin})" -o /dev/null
// RUN: grep -v "expected-" %s > %t.mlir
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin -split-input-file %t.mlir -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-assemble-isa{format=bin})" 2>&1 | FileCheck %s
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %t.mlir -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-assemble-isa{format=isa})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FORMAT

// CHECK: error: fly-assemble-isa: this gpu.module has no precompiled ISA (attribute 'fly.isa'); compile it with gpu-module-to-binary instead
// CHECK: error: fly-assemble-isa: 'fly.isa' holds 2 object(s) for 1 target(s)
// CHECK: error: fly-assemble-isa: 'fly.isa' must hold #gpu.object<..., assembly> attributes
// FORMAT: error: fly-assemble-isa: format must be bin or fatbin, got 'isa'

// expected-error @below {{has no precompiled ISA}}
gpu.module @no_isa [#nvvm.target<chip = "sm_90">] {
  llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
    llvm.return
  }
}

// -----

// expected-error @below {{holds 2 object(s) for 1 target(s)}}
gpu.module @two_for_one [#nvvm.target<chip = "sm_90">] attributes {
    fly.isa = [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "">,
               #gpu.object<#nvvm.target<chip = "sm_90">, assembly = "">]} {
}

// -----

// expected-error @below {{must hold #gpu.object<..., assembly> attributes}}
gpu.module @not_isa [#nvvm.target<chip = "sm_90">] attributes {
    fly.isa = [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "">]} {
}
