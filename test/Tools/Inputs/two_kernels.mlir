// Two kernels of different register pressure in one gpu.module, no target:
// fly-tune's --target preset attaches one.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%a: memref<1024xf32>, %s: f32) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %a[%tx] : memref<1024xf32>
      %m = arith.mulf %v, %s : f32
      memref.store %m, %a[%tx] : memref<1024xf32>
      gpu.return
    }
    gpu.func @dot8(%x: memref<1024xf32>, %y: memref<1024xf32>, %out: memref<1024xf32>) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c1024 = arith.constant 1024 : index
      %tx = gpu.thread_id x
      %zero = arith.constant dense<0.0> : vector<8xf32>
      %acc = scf.for %k = %c0 to %c1024 step %c8 iter_args(%a = %zero) -> (vector<8xf32>) {
        %xv = vector.load %x[%k] : memref<1024xf32>, vector<8xf32>
        %yv = vector.load %y[%k] : memref<1024xf32>, vector<8xf32>
        %n = vector.fma %xv, %yv, %a : vector<8xf32>
        scf.yield %n : vector<8xf32>
      }
      %r = vector.reduction <add>, %acc : vector<8xf32> into f32
      memref.store %r, %out[%tx] : memref<1024xf32>
      gpu.return
    }
  }
}
