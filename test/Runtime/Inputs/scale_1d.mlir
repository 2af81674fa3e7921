// A kernel on dynamically shaped memrefs: y[i] = 2 x[i] + 1 for i < dim(x).
// Each memref<?xf32> is 5 kernel parameters (allocated, aligned, offset,
// size, stride): the launch spec says {"kind": "memref", "shape": [n]}.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale_1d(%x: memref<?xf32>, %y: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %tx = gpu.thread_id x
      %bx = gpu.block_id x
      %dx = gpu.block_dim x
      %b0 = arith.muli %bx, %dx : index
      %i = arith.addi %b0, %tx : index
      %n = memref.dim %x, %c0 : memref<?xf32>
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %two = arith.constant 2.0 : f32
        %one = arith.constant 1.0 : f32
        %v = memref.load %x[%i] : memref<?xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
