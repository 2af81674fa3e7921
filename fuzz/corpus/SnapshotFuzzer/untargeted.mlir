module {
  gpu.module @untargeted {
  }
}
