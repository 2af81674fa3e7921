"""A kernel that holds N floats live across a barrier (LDS loads, then
products stored back), for num-vgpr-default.test: KERNEL_ATTRS is replaced
by the kernel's attributes under test."""
import sys

n = int(sys.argv[1])
lds = f"[{2 * n} x float]"
print('target triple = "amdgcn-amd-amdhsa"')
print(f"@lds = internal addrspace(3) global {lds} poison, align 4")
print("define amdgpu_kernel void @k() #0 {")
for j in range(n):
    print(f"  %g{j} = getelementptr {lds}, ptr addrspace(3) @lds, i32 0, i32 {j}")
    print(f"  %v{j} = load volatile float, ptr addrspace(3) %g{j}")
print("  call void @llvm.amdgcn.s.barrier()")
for j in range(n):
    print(f"  %m{j} = fmul float %v{j}, %v{n - 1 - j}")
    print(f"  %h{j} = getelementptr {lds}, ptr addrspace(3) @lds, i32 0, i32 {n + j}")
    print(f"  store volatile float %m{j}, ptr addrspace(3) %h{j}")
print("  ret void\n}")
print("declare void @llvm.amdgcn.s.barrier()")
print('attributes #0 = { "amdgpu-flat-work-group-size"="1,64" KERNEL_ATTRS }')
