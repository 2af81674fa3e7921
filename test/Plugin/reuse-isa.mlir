// reuse-isa on NVVM: hint sets that differ only in maxnreg or ptxas options
// share one PTX compile (translation, libdevice, optimisation, PTX code
// generation); each variant gets that PTX with its own `.maxnreg` lines and
// runs only ptxas (fly-assemble-isa). The objects must be byte-identical to
// a plain replay's: here two kernels, one with a maxnreg of its own (48)
// that the unhinted variant keeps, format fatbin (cubin + PTX inside).

// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{mode} =
// DEFINE: %{reuse} =
// DEFINE: %{sweep} = mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null \
// DEFINE:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"maxnreg=32;;maxnreg=64,opts=-O1;O=1\" binary-pass=\"gpu-module-to-binary{format=fatbin toolkit=%cuda_toolkit}\" out-dir=%t/%{mode} reuse-isa=%{reuse}})"
// REDEFINE: %{mode} = plain
// REDEFINE: %{reuse} = false
// RUN: %{sweep}
// REDEFINE: %{mode} = reuse
// REDEFINE: %{reuse} = true
// RUN: %{sweep} --mlir-print-ir-after-all 2> %t/ir.txt

// RUN: cmp %t/plain/v0_maxnreg_32.kernels.sm_90.fatbin %t/reuse/v0_maxnreg_32.kernels.sm_90.fatbin
// RUN: cmp %t/plain/v1_default.kernels.sm_90.fatbin %t/reuse/v1_default.kernels.sm_90.fatbin
// RUN: cmp %t/plain/v2_maxnreg_64.opts__O1.kernels.sm_90.fatbin %t/reuse/v2_maxnreg_64.opts__O1.kernels.sm_90.fatbin
// RUN: cmp %t/plain/v3_O_1.kernels.sm_90.fatbin %t/reuse/v3_O_1.kernels.sm_90.fatbin

// Three variants took the PTX compiled for v0; O=1 changes the PTX itself.
// RUN: %python -c "import json; m = json.load(open('%t/reuse/manifest.json')); \
// RUN:   [print(v['id'], 'isa_from', v.get('isa_from')) for v in m['variants']]" \
// RUN:   | FileCheck %s --check-prefix=SHARED
// SHARED:      v0_maxnreg_32 isa_from 0
// SHARED-NEXT: v1_default isa_from 0
// SHARED-NEXT: v2_maxnreg_64.opts__O1 isa_from 0
// SHARED-NEXT: v3_O_1 isa_from 3

// The debugging aids see both steps: two ISA compiles, four assemblies.
// RUN: FileCheck %s --check-prefix=IR --input-file=%t/ir.txt
// IR-COUNT-2: IR Dump After GpuModuleToBinaryPass (gpu-module-to-binary)
// IR-NOT:     IR Dump After GpuModuleToBinaryPass
// IR-COUNT-4: IR Dump After FlyAssembleIsa (fly-assemble-isa)

// Without the option, nothing is shared.
// RUN: not grep -q isa_from %t/plain/manifest.json

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90">] {
    llvm.func @scale(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %ptr = llvm.getelementptr %p[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %v = llvm.load %ptr : !llvm.ptr<1> -> f32
      %c = llvm.mlir.constant(2.0 : f32) : f32
      %r = llvm.fmul %v, %c : f32
      llvm.store %r, %ptr : f32, !llvm.ptr<1>
      llvm.return
    }
    llvm.func @shift(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxnreg = 48 : i32} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %ptr = llvm.getelementptr %p[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %v = llvm.load %ptr : !llvm.ptr<1> -> f32
      %c = llvm.mlir.constant(1.0 : f32) : f32
      %r = llvm.fadd %v, %c : f32
      llvm.store %r, %ptr : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
