//===- BackendOpts.h - What the binary pass's opts= delivers -*- C++ -*-===//
//
// Front ends such as FlyDSL put backend flags into the binary pass's `opts=`
// (`--amdgpu-waves-per-eu=4 --amdgpu-num-vgpr=64`). Upstream ROCDL
// serialization ignores `opts`, so on ROCDL those flags would vanish. This is
// the one place that classifies `opts` tokens: a flag with an IR equivalent
// becomes that hint (written onto the variant like any other hint, a note
// says so); a flag without one gets a warning instead of silence.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_HINTS_BACKENDOPTS_H
#define FLY_HINTS_BACKENDOPTS_H

#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/HintSet.h"

#include "mlir/IR/Location.h"

#include <string>

namespace fly {

/// `opts` split as upstream's TargetOptions::tokenizeCmdOptions splits it.
llvm::SmallVector<std::string> tokenizeBinaryOpts(llvm::StringRef opts);

/// One token of `opts` for a ROCDL target.
struct RocdlOptsToken {
  enum class Kind {
    /// Has an IR equivalent: the hint `hintKey=hintValue`.
    Hint,
    /// Upstream ROCDL serialization drops it and fly knows no IR equivalent.
    NoIREquivalent,
  };
  std::string text;
  Kind kind;
  std::string hintKey, hintValue;
};

/// Classifies every token of `opts` for ROCDL:
///   --amdgpu-waves-per-eu=N     -> waves_per_eu=N (rocdl.waves_per_eu)
///   --amdgpu-waves-per-eu=N,M   -> passthrough.amdgpu-waves-per-eu=N,M
///   --amdgpu-num-vgpr=N         -> maxnreg=N (passthrough amdgpu-num-vgpr)
///   --amdgpu-num-sgpr=N         -> passthrough.amdgpu-num-sgpr=N
///   --amdgpu-flat-work-group-size=A,B / --amdgpu-flat-workgroup-size=A,B
///                               -> passthrough.amdgpu-flat-work-group-size
///   -O0..-O3, --O=N             -> O=N (the target's optimisation level)
///   -mcpu=<chip>, --mcpu=<chip> -> target.chip=<chip>
///   -mattr=<f>, --mattr=<f>     -> target.features=<f>
/// (one or two leading dashes, `=` or a separate value token); anything else
/// is NoIREquivalent. A flag given twice keeps its last value, as a command
/// line would.
llvm::SmallVector<RocdlOptsToken> classifyRocdlOpts(llvm::StringRef opts);

/// The hints `opts` stands for on `gpuModules`: only when every targeted
/// gpu.module is ROCDL-only (NVVM passes `opts` to ptxas itself); empty
/// otherwise or when `opts` has no flag with an IR equivalent.
HintSet getBinaryOptsHints(llvm::StringRef opts,
                           llvm::ArrayRef<mlir::gpu::GPUModuleOp> gpuModules);

/// What `opts` delivers on `gpuModules`, one line per flag: a note for a
/// flag that becomes a hint, a warning for a flag that ROCDL serialization
/// ignores and that has no IR equivalent. Empty on NVVM-only modules.
struct BinaryOptsMessage {
  bool isWarning;
  std::string text;
};
llvm::SmallVector<BinaryOptsMessage>
describeBinaryOpts(llvm::StringRef opts,
                   llvm::ArrayRef<mlir::gpu::GPUModuleOp> gpuModules);

/// Emits describeBinaryOpts at `loc`: warnings as warnings, notes as
/// remarks.
void diagnoseBinaryOpts(llvm::StringRef opts,
                        llvm::ArrayRef<mlir::gpu::GPUModuleOp> gpuModules,
                        mlir::Location loc);

/// `hints` over `base`: every entry of `hints`, plus the entries of `base`
/// whose key `hints` lacks (a hint set's own value wins over a flag's).
HintSet overlayHints(const HintSet &base, const HintSet &hints);

/// What each of `hintSets` compiles with on `gpuModules`: the hint set over
/// getBinaryOptsHints(opts) (the hint sets themselves when that is empty).
std::vector<HintSet>
getCompiledHintSets(llvm::ArrayRef<HintSet> hintSets, llvm::StringRef opts,
                    llvm::ArrayRef<mlir::gpu::GPUModuleOp> gpuModules);

} // namespace fly

#endif // FLY_HINTS_BACKENDOPTS_H
