// A kernel with a private array indexed by a thread id: an alloca that
// AMDGPUPromoteAllocaToVector may turn into registers, within a VGPR budget
// that waves_per_eu and maxnreg set.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @private_array(%X: memref<1024xf32>, %Y: memref<1024xf32>)
        private(%buf: memref<16xf32, #gpu.address_space<private>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %tid = gpu.thread_id x
      scf.for %i = %c0 to %c16 step %c1 {
        %j = arith.addi %tid, %i : index
        %x = memref.load %X[%j] : memref<1024xf32>
        memref.store %x, %buf[%i] : memref<16xf32, #gpu.address_space<private>>
      }
      %k = arith.remui %tid, %c16 : index
      %v = memref.load %buf[%k] : memref<16xf32, #gpu.address_space<private>>
      memref.store %v, %Y[%tid] : memref<1024xf32>
      gpu.return
    }
  }
}
