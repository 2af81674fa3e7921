# gpu-module-to-binary with #rocdl.target wants a ROCm-shaped toolkit folder:
# <toolkit>/amdgcn/bitcode (device libraries) and <toolkit>/llvm/bin/ld.lld.
# Debian splits them, so the build lays such a folder out of symlinks.
find_path(FLY_ROCM_BITCODE_DIR ockl.bc
  PATHS /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /usr/lib/amdgcn/bitcode
        /opt/rocm/amdgcn/bitcode
  NO_DEFAULT_PATH)
find_program(FLY_LD_LLD ld.lld PATHS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
find_program(FLY_PTXAS ptxas PATHS /usr/local/cuda/bin)
set(FLY_CUDA_TOOLKIT "" CACHE PATH "CUDA toolkit for #nvvm.target")
if(NOT FLY_CUDA_TOOLKIT AND FLY_PTXAS)
  get_filename_component(_fly_cuda_bin ${FLY_PTXAS} DIRECTORY)
  get_filename_component(FLY_CUDA_TOOLKIT ${_fly_cuda_bin} DIRECTORY)
endif()

set(FLY_ROCM_TOOLKIT ${PROJECT_BINARY_DIR}/rocm-toolkit)
if(FLY_ROCM_BITCODE_DIR AND FLY_LD_LLD)
  file(MAKE_DIRECTORY ${FLY_ROCM_TOOLKIT}/amdgcn ${FLY_ROCM_TOOLKIT}/llvm/bin)
  file(CREATE_LINK ${FLY_ROCM_BITCODE_DIR} ${FLY_ROCM_TOOLKIT}/amdgcn/bitcode SYMBOLIC)
  file(CREATE_LINK ${FLY_LD_LLD} ${FLY_ROCM_TOOLKIT}/llvm/bin/ld.lld SYMBOLIC)
  message(STATUS "ROCm toolkit folder: ${FLY_ROCM_TOOLKIT}")
else()
  message(WARNING "ROCm device libraries or ld.lld not found: "
                  "#rocdl.target tests will be skipped")
  set(FLY_ROCM_TOOLKIT "")
endif()
