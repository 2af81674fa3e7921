module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxnreg = 64 : i32} {
      %0 = nvvm.read.ptx.sreg.tid.x : i32
      %1 = llvm.getelementptr %arg0[%0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %2 = llvm.load %1 : !llvm.ptr<1> -> f32
      llvm.store %2, %1 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
