// Host code with a gpu.launch, as most MLIR GPU integration tests are
// written: the --target presets outline the kernel and lower the host side.
module {
  func.func @saxpy(%x: memref<256xf32>, %y: memref<256xf32>, %a: f32) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %xv = memref.load %x[%tx] : memref<256xf32>
      %yv = memref.load %y[%tx] : memref<256xf32>
      %m = arith.mulf %xv, %a : f32
      %s = arith.addf %m, %yv : f32
      memref.store %s, %y[%tx] : memref<256xf32>
      gpu.terminator
    }
    return
  }
}
