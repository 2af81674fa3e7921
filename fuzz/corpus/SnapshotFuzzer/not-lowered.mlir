module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    gpu.func @k(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
