// Two gpu.modules whose names sanitise to one file name: @"a/b" becomes
// a_b-75860604, which the second one is called already.
module attributes {gpu.container_module} {
  gpu.module @"a/b" [#rocdl.target<chip = "gfx942">] {
    gpu.func @k(%a: memref<16xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @"a_b-75860604" [#rocdl.target<chip = "gfx942">] {
    gpu.func @k(%a: memref<16xf32>) kernel {
      gpu.return
    }
  }
}
