// A block reduction through 256 x f32 of shared memory with gpu.barrier:
// ptxas records the barrier count as a one-byte .nv.info value, and the
// records after it (maxntid, the parameter bank) must still be read.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @block_sum(%in: memref<1024xf32>, %out: memref<4xf32>)
        workgroup(%buf: memref<256xf32, #gpu.address_space<workgroup>>) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %tx = gpu.thread_id x
      %bx = gpu.block_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %bx, %c256 : index
      %i = arith.addi %base, %tx : index
      %v = memref.load %in[%i] : memref<1024xf32>
      memref.store %v, %buf[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %first = memref.load %buf[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %first, %v : f32
      memref.store %s, %out[%bx] : memref<4xf32>
      gpu.return
    }
  }
}
