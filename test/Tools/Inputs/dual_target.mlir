// Two kernels in one gpu.module that names two ROCDL targets.
module attributes {gpu.container_module} {
  gpu.module @dual [#rocdl.target<chip = "gfx90a">, #rocdl.target<chip = "gfx942">] {
    gpu.func @scale(%a: memref<1024xf32>, %s: f32) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %a[%tx] : memref<1024xf32>
      %m = arith.mulf %v, %s : f32
      memref.store %m, %a[%tx] : memref<1024xf32>
      gpu.return
    }
    gpu.func @axpy(%x: memref<1024xf32>, %y: memref<1024xf32>, %s: f32) kernel {
      %tx = gpu.thread_id x
      %bx = gpu.block_id x
      %c256 = arith.constant 256 : index
      %o = arith.muli %bx, %c256 : index
      %i = arith.addi %o, %tx : index
      %a = memref.load %x[%i] : memref<1024xf32>
      %b = memref.load %y[%i] : memref<1024xf32>
      %m = arith.mulf %a, %s : f32
      %r = arith.addf %m, %b : f32
      memref.store %r, %y[%i] : memref<1024xf32>
      gpu.return
    }
  }
}
