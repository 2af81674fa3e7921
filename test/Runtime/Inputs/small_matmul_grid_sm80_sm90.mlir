// small_matmul_grid.mlir with two NVVM targets, sm_80 and sm_90: every
// variant has one cubin per target, and fly-run must load the one whose chip
// is the device's (sm_90 on an H200), not the first.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_80">, #nvvm.target<chip = "sm_90">] {
    gpu.func @tile_matmul_grid(%A: memref<64x64xf32>, %B: memref<64x64xf32>, %C: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cK = arith.constant 64 : index
      %cR = arith.constant 8 : index
      %cV = arith.constant 16 : index
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %dx = gpu.block_dim x
      %dy = gpu.block_dim y
      %gx0 = arith.muli %bx, %dx : index
      %gx = arith.addi %gx0, %tx : index
      %gy0 = arith.muli %by, %dy : index
      %gy = arith.addi %gy0, %ty : index
      %row0 = arith.muli %gy, %cR : index
      %col0 = arith.muli %gx, %cV : index
      %zero = arith.constant dense<0.0> : vector<16xf32>
      %res:8 = scf.for %k = %c0 to %cK step %c1 iter_args(%acc0 = %zero, %acc1 = %zero, %acc2 = %zero, %acc3 = %zero, %acc4 = %zero, %acc5 = %zero, %acc6 = %zero, %acc7 = %zero) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
        %b = vector.load %B[%k, %col0] : memref<64x64xf32>, vector<16xf32>
        %ri0 = arith.constant 0 : index
        %row0x = arith.addi %row0, %ri0 : index
        %a0 = memref.load %A[%row0x, %k] : memref<64x64xf32>
        %ab0 = vector.broadcast %a0 : f32 to vector<16xf32>
        %n0 = vector.fma %ab0, %b, %acc0 : vector<16xf32>
        %ri1 = arith.constant 1 : index
        %row1x = arith.addi %row0, %ri1 : index
        %a1 = memref.load %A[%row1x, %k] : memref<64x64xf32>
        %ab1 = vector.broadcast %a1 : f32 to vector<16xf32>
        %n1 = vector.fma %ab1, %b, %acc1 : vector<16xf32>
        %ri2 = arith.constant 2 : index
        %row2x = arith.addi %row0, %ri2 : index
        %a2 = memref.load %A[%row2x, %k] : memref<64x64xf32>
        %ab2 = vector.broadcast %a2 : f32 to vector<16xf32>
        %n2 = vector.fma %ab2, %b, %acc2 : vector<16xf32>
        %ri3 = arith.constant 3 : index
        %row3x = arith.addi %row0, %ri3 : index
        %a3 = memref.load %A[%row3x, %k] : memref<64x64xf32>
        %ab3 = vector.broadcast %a3 : f32 to vector<16xf32>
        %n3 = vector.fma %ab3, %b, %acc3 : vector<16xf32>
        %ri4 = arith.constant 4 : index
        %row4x = arith.addi %row0, %ri4 : index
        %a4 = memref.load %A[%row4x, %k] : memref<64x64xf32>
        %ab4 = vector.broadcast %a4 : f32 to vector<16xf32>
        %n4 = vector.fma %ab4, %b, %acc4 : vector<16xf32>
        %ri5 = arith.constant 5 : index
        %row5x = arith.addi %row0, %ri5 : index
        %a5 = memref.load %A[%row5x, %k] : memref<64x64xf32>
        %ab5 = vector.broadcast %a5 : f32 to vector<16xf32>
        %n5 = vector.fma %ab5, %b, %acc5 : vector<16xf32>
        %ri6 = arith.constant 6 : index
        %row6x = arith.addi %row0, %ri6 : index
        %a6 = memref.load %A[%row6x, %k] : memref<64x64xf32>
        %ab6 = vector.broadcast %a6 : f32 to vector<16xf32>
        %n6 = vector.fma %ab6, %b, %acc6 : vector<16xf32>
        %ri7 = arith.constant 7 : index
        %row7x = arith.addi %row0, %ri7 : index
        %a7 = memref.load %A[%row7x, %k] : memref<64x64xf32>
        %ab7 = vector.broadcast %a7 : f32 to vector<16xf32>
        %n7 = vector.fma %ab7, %b, %acc7 : vector<16xf32>
        scf.yield %n0, %n1, %n2, %n3, %n4, %n5, %n6, %n7 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
      }
      %ci0 = arith.constant 0 : index
      %crow0 = arith.addi %row0, %ci0 : index
      vector.store %res#0, %C[%crow0, %col0] : memref<64x64xf32>, vector<16xf32>
      %ci1 = arith.constant 1 : index
      %crow1 = arith.addi %row0, %ci1 : index
      vector.store %res#1, %C[%crow1, %col0] : memref<64x64xf32>, vector<16xf32>
      %ci2 = arith.constant 2 : index
      %crow2 = arith.addi %row0, %ci2 : index
      vector.store %res#2, %C[%crow2, %col0] : memref<64x64xf32>, vector<16xf32>
      %ci3 = arith.constant 3 : index
      %crow3 = arith.addi %row0, %ci3 : index
      vector.store %res#3, %C[%crow3, %col0] : memref<64x64xf32>, vector<16xf32>
      %ci4 = arith.constant 4 : index
      %crow4 = arith.addi %row0, %ci4 : index
      vector.store %res#4, %C[%crow4, %col0] : memref<64x64xf32>, vector<16xf32>
      %ci5 = arith.constant 5 : index
      %crow5 = arith.addi %row0, %ci5 : index
      vector.store %res#5, %C[%crow5, %col0] : memref<64x64xf32>, vector<16xf32>
      %ci6 = arith.constant 6 : index
      %crow6 = arith.addi %row0, %ci6 : index
      vector.store %res#6, %C[%crow6, %col0] : memref<64x64xf32>, vector<16xf32>
      %ci7 = arith.constant 7 : index
      %crow7 = arith.addi %row0, %ci7 : index
      vector.store %res#7, %C[%crow7, %col0] : memref<64x64xf32>, vector<16xf32>
      gpu.return
    }
  }
}
