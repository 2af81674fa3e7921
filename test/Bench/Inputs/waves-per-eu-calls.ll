; A kernel with LDS, a barrier, an internal non-inlined helper and an external
; function, for waves-per-eu-default.test: KERNEL_ATTRS is replaced by the
; kernel's attributes under test.
target triple = "amdgcn-amd-amdhsa"
@lds = internal addrspace(3) global [4096 x float] poison, align 4

define internal float @helper(ptr addrspace(1) %p, i32 %i) #1 {
  %g = getelementptr float, ptr addrspace(1) %p, i32 %i
  %v = load float, ptr addrspace(1) %g
  %l = getelementptr [4096 x float], ptr addrspace(3) @lds, i32 0, i32 %i
  store float %v, ptr addrspace(3) %l
  call void @llvm.amdgcn.s.barrier()
  %j = xor i32 %i, 7
  %m = getelementptr [4096 x float], ptr addrspace(3) @lds, i32 0, i32 %j
  %w = load float, ptr addrspace(3) %m
  %r = fmul float %v, %w
  ret float %r
}

define external float @ext_helper(float %x) #1 {
  %y = fadd float %x, 1.0
  ret float %y
}

define amdgpu_kernel void @k(ptr addrspace(1) %p) #0 {
  %i = call i32 @llvm.amdgcn.workitem.id.x()
  %a = call float @helper(ptr addrspace(1) %p, i32 %i)
  %b = call float @ext_helper(float %a)
  %g = getelementptr float, ptr addrspace(1) %p, i32 %i
  store float %b, ptr addrspace(1) %g
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
attributes #0 = { "uniform-work-group-size"="true" KERNEL_ATTRS }
attributes #1 = { noinline }
