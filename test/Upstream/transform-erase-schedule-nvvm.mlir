// REQUIRES: ptxas
// The shape of upstream's sm_90 transform-dialect GPU integration tests: a
// transform schedule rewrites the kernel's copies as TMA loads,
// -test-transform-dialect-erase-schedule (one of upstream's test passes)
// drops the schedule, then the NVVM lowering and gpu-module-to-binary.
// fly-opt runs the same three-stage pipeline as stock mlir-opt and writes
// the same bytes. Upstream's NVVM serialisation stamps each object with its
// compile times (ISAToBinaryTimeInMs, LLVMIRToISATimeInMs), which differ
// from run to run; they are blanked before the comparison.

// DEFINE: %{opt} = mlir-opt
// DEFINE: %{pipeline} = %{opt} %s -transform-interpreter \
// DEFINE:     -test-transform-dialect-erase-schedule -convert-nvgpu-to-nvvm \
// DEFINE:     -gpu-kernel-outlining -convert-scf-to-cf -convert-nvvm-to-llvm \
// DEFINE:     -convert-vector-to-llvm -convert-math-to-llvm \
// DEFINE:     -expand-strided-metadata -lower-affine \
// DEFINE:     -convert-index-to-llvm=index-bitwidth=32 -convert-arith-to-llvm \
// DEFINE:     -finalize-memref-to-llvm -convert-func-to-llvm -canonicalize \
// DEFINE:     -expand-strided-metadata \
// DEFINE:     '--nvvm-attach-target=module=load_tiles_kernel features=+ptx80 chip=sm_90 O=3' \
// DEFINE:   | %{opt} '-pass-pipeline=builtin.module(gpu.module(strip-debuginfo,convert-gpu-to-nvvm,convert-index-to-llvm{index-bitwidth=32},canonicalize,cse))' \
// DEFINE:   | %{opt} -gpu-to-llvm '--gpu-module-to-binary=format=bin toolkit=%cuda_toolkit' \
// DEFINE:     -canonicalize -cse -reconcile-unrealized-casts \
// DEFINE:   | sed -E 's/(TimeInMs = )[0-9]+/\1N/g'

// RUN: %{pipeline} > %t.mlir-opt.mlir
// REDEFINE: %{opt} = fly-opt
// RUN: %{pipeline} > %t.fly-opt.mlir
// RUN: cmp %t.mlir-opt.mlir %t.fly-opt.mlir
// RUN: FileCheck %s < %t.fly-opt.mlir

// CHECK: gpu.binary @load_tiles_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {ISAToBinaryTimeInMs = N : i64, LLVMIRToISATimeInMs = N : i64}, bin = "\7FELF
// CHECK-NOT: transform.named_sequence

memref.global "private" @tileA : memref<32x16xf32, 3>
memref.global "private" @tileB : memref<16x64xf32, 3>

func.func @load_tiles(%a: memref<32x16xf32>, %b: memref<16x64xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %ta = memref.get_global @tileA : memref<32x16xf32, 3>
    %tb = memref.get_global @tileB : memref<16x64xf32, 3>
    linalg.copy ins(%a : memref<32x16xf32>) outs(%ta : memref<32x16xf32, 3>)
    linalg.copy ins(%b : memref<16x64xf32>) outs(%tb : memref<16x64xf32, 3>)
    gpu.terminator
  }
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(
      %root: !transform.any_op {transform.readonly}) {
    %copies = transform.structured.match ops{["linalg.copy"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.nvgpu.rewrite_copy_as_tma %copies : (!transform.any_op) -> ()
    transform.yield
  }
}
