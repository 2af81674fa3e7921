// A softmax-like row kernel whose math lowers to device-library calls
// (__ocml_exp_f32, __ocml_log_f32, __ocml_sin_f32, __ocml_erf_f32): the
// ROCDL serializer links ocml.bc and optimizeModule inlines it.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @softmax_row(%X: memref<1024x1024xf32>, %Y: memref<1024x1024xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cN = arith.constant 1024 : index
      %zero = arith.constant 0.0 : f32
      %row = gpu.block_id x
      %sum = scf.for %j = %c0 to %cN step %c1 iter_args(%acc = %zero) -> (f32) {
        %x = memref.load %X[%row, %j] : memref<1024x1024xf32>
        %e = math.exp %x : f32
        %s = math.sin %e : f32
        %n = arith.addf %acc, %s : f32
        scf.yield %n : f32
      }
      %l = math.log %sum : f32
      scf.for %j = %c0 to %cN step %c1 {
        %x = memref.load %X[%row, %j] : memref<1024x1024xf32>
        %d = arith.subf %x, %l : f32
        %e = math.exp %d : f32
        %g = math.erf %e : f32
        memref.store %g, %Y[%row, %j] : memref<1024x1024xf32>
      }
      gpu.return
    }
  }
}
