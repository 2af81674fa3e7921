// One block loads a 16x32 f32 tile into shared memory with a TMA copy that
// completes on an mbarrier, waits on it and writes one element back: the
// instructions of upstream's sm_90 TMA integration tests, which need PTX 8.0.
!barrier = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!tile_map = !nvgpu.tensormap.descriptor<tensor = memref<16x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>

module {
  memref.global "private" @tile : memref<16x32xf32, 3>

  func.func @load_tile(%src: memref<16x32xf32>, %out: memref<1xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %unranked = memref.cast %src : memref<16x32xf32> to memref<*xf32>
    %map = nvgpu.tma.create.descriptor %unranked box[%c16, %c32] : memref<*xf32> -> !tile_map
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
      %bytes = arith.constant 2048 : index
      %ticks = arith.constant 1000000 : index
      %parity = arith.constant false
      %smem = memref.get_global @tile : memref<16x32xf32, 3>
      %bar = nvgpu.mbarrier.create -> !barrier
      nvgpu.mbarrier.init %bar[%c0], %c32 : !barrier
      gpu.barrier
      %first = arith.cmpi eq, %tx, %c0 : index
      scf.if %first {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : !barrier
        nvgpu.tma.async.load %map[%c0, %c0], %bar[%c0] to %smem : !tile_map, !barrier -> memref<16x32xf32, 3>
      } else {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %c0 : !barrier
      }
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %parity, %ticks : !barrier
      scf.if %first {
        %v = memref.load %smem[%c1, %c0] : memref<16x32xf32, 3>
        memref.store %v, %out[%c0] : memref<1xf32>
      }
      gpu.terminator
    }
    return
  }
}
