// Many live vector values: tight register budgets spill (rocdl-shared-codegen.test).
module attributes {gpu.container_module} {
  gpu.module @nl {
    gpu.func @big(%A: memref<65536xf32>, %B: memref<65536xf32>) kernel {
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %c64 = arith.constant 64 : index
      %base = arith.muli %bid, %c64 : index
      %v = vector.load %A[%base] : memref<65536xf32>, vector<64xf32>
      %w = arith.mulf %v, %v : vector<64xf32>
      %c4096 = arith.constant 4096 : index
      %b2 = arith.addi %base, %c4096 : index
      %u = vector.load %A[%b2] : memref<65536xf32>, vector<64xf32>
      %x = arith.addf %w, %u : vector<64xf32>
      %y = arith.mulf %x, %u : vector<64xf32>
      %z = arith.divf %y, %w : vector<64xf32>
      %o = arith.addi %base, %tid : index
      vector.store %z, %B[%o] : memref<65536xf32>, vector<64xf32>
      gpu.return
    }
  }
}
