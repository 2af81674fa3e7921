// A gpu.module whose target names a chip no LLVM backend knows.
module attributes {gpu.container_module} {
  gpu.module @typo [#rocdl.target<chip = "gfx9422">] {
    gpu.func @scale(%a: memref<1024xf32>, %s: f32) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %a[%tx] : memref<1024xf32>
      %m = arith.mulf %v, %s : f32
      memref.store %m, %a[%tx] : memref<1024xf32>
      gpu.return
    }
  }
}
