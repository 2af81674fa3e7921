// REQUIRES: ptxas
// The shape of upstream's vector warp-distribution GPU integration tests:
// -test-vector-warp-distribute (one of upstream's test passes) distributes
// the vector ops of a warp_execute_on_lane_0 region over the lanes (the
// reduction becomes shuffles), rewrites what remains as lane-0 code, then
// gpu-lower-to-nvvm-pipeline compiles it with ptxas. fly-opt runs the same
// pipeline as stock mlir-opt and writes the same bytes; the per-object
// compile times upstream stamps (ISAToBinaryTimeInMs, LLVMIRToISATimeInMs)
// are blanked before the comparison.

// DEFINE: %{opt} = mlir-opt
// DEFINE: %{format} = isa
// DEFINE: %{pipeline} = %{opt} %s \
// DEFINE:     '-test-vector-warp-distribute=hoist-uniform distribute-transfer-write propagate-distribution' \
// DEFINE:     -canonicalize \
// DEFINE:   | %{opt} -test-vector-warp-distribute=rewrite-warp-ops-to-scf-if \
// DEFINE:   | env CUDA_ROOT=%cuda_toolkit %{opt} -lower-affine -convert-vector-to-scf \
// DEFINE:     -convert-scf-to-cf -convert-vector-to-llvm -convert-arith-to-llvm \
// DEFINE:     '-gpu-lower-to-nvvm-pipeline=cubin-chip=sm_80 cubin-features=+ptx70 cubin-format=%{format}' \
// DEFINE:   | sed -E 's/(TimeInMs = )[0-9]+/\1N/g'

// RUN: %{pipeline} > %t.isa.mlir-opt.mlir
// REDEFINE: %{opt} = fly-opt
// RUN: %{pipeline} > %t.isa.fly-opt.mlir
// RUN: cmp %t.isa.mlir-opt.mlir %t.isa.fly-opt.mlir
// RUN: FileCheck %s --check-prefix=ISA < %t.isa.fly-opt.mlir
// ISA: gpu.binary @scale_and_sum_kernel
// ISA-COUNT-5: shfl.sync.bfly.b32

// REDEFINE: %{format} = bin
// REDEFINE: %{opt} = mlir-opt
// RUN: %{pipeline} > %t.bin.mlir-opt.mlir
// REDEFINE: %{opt} = fly-opt
// RUN: %{pipeline} > %t.bin.fly-opt.mlir
// RUN: cmp %t.bin.mlir-opt.mlir %t.bin.fly-opt.mlir
// RUN: FileCheck %s --check-prefix=BIN < %t.bin.fly-opt.mlir
// BIN: gpu.binary @scale_and_sum_kernel [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx70">, properties = {ISAToBinaryTimeInMs = N : i64, LLVMIRToISATimeInMs = N : i64}, bin = "\7FELF

func.func @scale_and_sum(%buf: memref<64xf32>, %sum: memref<1xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    gpu.warp_execute_on_lane_0(%tx)[32] {
      %c0 = arith.constant 0 : index
      %pad = arith.constant 0.0 : f32
      %v = vector.transfer_read %buf[%c0], %pad {in_bounds = [true]}
        : memref<64xf32>, vector<64xf32>
      %two = arith.constant dense<2.0> : vector<64xf32>
      %scaled = arith.mulf %v, %two : vector<64xf32>
      vector.transfer_write %scaled, %buf[%c0] {in_bounds = [true]}
        : vector<64xf32>, memref<64xf32>
      %total = vector.reduction <add>, %scaled : vector<64xf32> into f32
      %t = vector.broadcast %total : f32 to vector<1xf32>
      vector.transfer_write %t, %sum[%c0] {in_bounds = [true]}
        : vector<1xf32>, memref<1xf32>
    }
    gpu.terminator
  }
  return
}
