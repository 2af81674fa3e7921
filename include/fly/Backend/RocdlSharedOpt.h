//===- RocdlSharedOpt.h - One optimizeModule for ROCDL variants -*- C++ -*-===//
//
// ROCDL variants that differ only in the register hints on their kernels
// (waves_per_eu, maxnreg: the LLVM function attributes amdgpu-waves-per-eu,
// amdgpu-num-vgpr, amdgpu-num-sgpr) translate to one LLVM module plus those
// attributes. optimizeModule (O3) reads them only to size alloca promotion
// (AMDGPUPromoteAlloca) and to propagate them to callees (AMDGPUAttributor);
// where the linked module has no alloca and O3 leaves no function but
// kernels, its output is that of the module without them, with them. So the
// module without them is optimised once per process (content-addressed: its
// bitcode and the target are the key; a variant that finds it being
// optimised by another thread waits for that) and each variant gets a copy
// with its own attributes; anything else, or a module outside those conditions,
// is optimised as upstream does. The objects are byte-identical to the plain
// replay's (test/Tools/rocdl-shared-opt.test compares them). Off with
// FLY_ROCDL_SHARE_OPT=0.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_ROCDLSHAREDOPT_H
#define FLY_BACKEND_ROCDLSHAREDOPT_H

#include "mlir/Support/LLVM.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace fly {

/// What happened to the modules offered to optimizeSharingRocdl in this
/// process.
struct RocdlSharedOptStats {
  /// Optimised and kept for others (each distinct key once).
  uint64_t produced = 0;
  /// Took a kept optimised module instead of optimising.
  uint64_t reused = 0;
  /// Optimised on their own: outside the conditions above.
  uint64_t fallbacks = 0;
};
RocdlSharedOptStats getRocdlSharedOptStats();

/// A module optimised without its register hints, as the variants that
/// share it find it; `eligible` false: its optimisation is not that of the
/// hinted modules (see above), so nobody shares it.
struct RocdlOptimizedModule {
  bool eligible = false;
  llvm::SmallVector<char, 0> bitcode;
};

/// The function attributes the register hints become (amdgpu-waves-per-eu,
/// amdgpu-num-vgpr, amdgpu-num-sgpr).
llvm::ArrayRef<llvm::StringRef> getRocdlRegisterHintAttributes();

/// A register hint of a module: `attribute` = `value` on `function`.
struct RocdlRegisterHint {
  std::string function;
  llvm::StringRef attribute;
  std::string value;
  bool operator==(const RocdlRegisterHint &other) const {
    return function == other.function && attribute == other.attribute &&
           value == other.value;
  }
};

/// What a variant's optimised module is when it is a shared optimisation
/// plus its own register hints; `optimized` null: it is not.
struct RocdlSharing {
  std::shared_ptr<const RocdlOptimizedModule> optimized;
  std::vector<RocdlRegisterHint> hints;
};

/// Whether optimizeSharingRocdl shares at all (FLY_ROCDL_SHARE_OPT, default
/// on).
bool isRocdlSharedOptEnabled();

/// Optimises `module` (linked, for AMDGPU; `targetKey` names everything of
/// the target that optimisation and code generation read: triple, chip,
/// features, opt level) as `optimize` does, or replaces it by a copy (in its
/// context) of an earlier optimisation of the same module without the
/// register hints, with `module`'s hints. Returns what `optimize` returned;
/// on failure `module` is in whatever state `optimize` left it.
/// Where `sharing` is given, it says whether the result is a shared
/// optimisation plus `module`'s hints, and which.
mlir::LogicalResult optimizeSharingRocdl(
    std::unique_ptr<llvm::Module> &module, llvm::StringRef targetKey,
    llvm::function_ref<mlir::LogicalResult(llvm::Module &)> optimize,
    RocdlSharing *sharing = nullptr);

} // namespace fly

#endif // FLY_BACKEND_ROCDLSHAREDOPT_H
