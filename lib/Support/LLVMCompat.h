//===- LLVMCompat.h - The LLVM/MLIR versions fly builds with ----*- C++ -*-===//
//
// The one place that knows which LLVM/MLIR APIs fly relies on that changed
// between releases. Every file using one includes this header, so building
// against an LLVM outside the supported range fails here, with the reason,
// instead of deep inside a template. Tested: LLVM/MLIR 22.1.8 (Debian's
// llvm-22). Newer releases are untested (CMake warns).
//
// Version-dependent uses (add new ones here, with the release that needs
// them):
//   - `OpTy::create(builder, loc, ...)` (LLVM 21; `builder.create<OpTy>` is
//     deprecated in 22): fly::compat::createOp.
//   - `StringSwitch::Cases({a, b}, v)` taking an initializer list (LLVM 22;
//     the 2..10-argument form is deprecated in 22).
//   - `llvm::xxh3_128bits` (LLVM 20), the cache keys (Cache/CacheKey.cpp).
//   - `llvm::scope_exit` as a class template (LLVM 22; `make_scope_exit`
//     before, deprecated in 22), across lib/.
//   - upstream's `GpuModuleToBinaryPassOptions` fields (toolkitPath,
//     cmdOptions, compilationTarget...) read by Replay/BinaryPass.cpp.
//   - lld's `lld::lldMain` with `LLD_HAS_DRIVER` registration (LLVM 17) and
//     `llvm::cl::ResetAllOptionOccurrences` called per link, which fly wraps
//     by its mangled name (Backend/AmdgpuLinker.cpp, lib/CMakeLists.txt).
//   - The gpu.object `kernels` table (#gpu.kernel_table, LLVM 20) whose ROCDL
//     metadata fly reads registers from (Replay/ObjectMetadata.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_LLVMCOMPAT_H
#define FLY_SUPPORT_LLVMCOMPAT_H

#include "llvm/Config/llvm-config.h"

#include "mlir/IR/Builders.h"

#include <utility>

/// The oldest LLVM major version fly builds with.
#define FLY_LLVM_MIN_MAJOR 22
/// The newest LLVM major version fly was tested with.
#define FLY_LLVM_TESTED_MAJOR 22

#if LLVM_VERSION_MAJOR < FLY_LLVM_MIN_MAJOR
#error "fly-snapshot needs LLVM/MLIR 22 or newer (StringSwitch::Cases with \
an initializer list, OpTy::create(builder, ...)); see lib/Support/LLVMCompat.h"
#endif

namespace fly::compat {

/// Creates an op the way the LLVM release in use spells it.
template <typename OpTy, typename... Args>
OpTy createOp(mlir::OpBuilder &builder, mlir::Location loc, Args &&...args) {
  return OpTy::create(builder, loc, std::forward<Args>(args)...);
}

} // namespace fly::compat

#endif // FLY_SUPPORT_LLVMCOMPAT_H
