//===- TargetChips.h - Is this chip one LLVM can compile for? ---*- C++ -*-===//
//
// A misspelt chip (`gfx9422`, `sm_9O`) otherwise reaches the backend, which
// warns "not a recognized processor" per compile and then aborts in
// instruction selection. LLVM's own AMDGPU and NVPTX processor tables decide.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_HINTS_TARGETCHIPS_H
#define FLY_HINTS_TARGETCHIPS_H

#include "fly/Hints/ApplyHints.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace fly {

/// Whether LLVM's processor table for `family` (ROCDL: AMDGPU, NVVM: NVPTX)
/// lists `chip`. Other families: true (nothing to check against).
bool isKnownChip(TargetFamily family, llvm::StringRef chip);

/// "did you mean 'gfx942'?" (the nearest known chips), or a few examples
/// when nothing is near.
std::string suggestChips(TargetFamily family, llvm::StringRef chip);

/// The chip and family of a #rocdl.target / #nvvm.target ("" otherwise).
llvm::StringRef getTargetChip(mlir::Attribute target);

/// "rocdl:gfx942" for #rocdl.target<chip = "gfx942"> ("" for others).
std::string getTargetLabel(mlir::Attribute target);

/// The distinct labels of the targets of `module`'s gpu.modules, in order:
/// what a sweep really compiles for, whatever option attached them.
std::vector<std::string> getTargetLabels(mlir::ModuleOp module);

/// One line per gpu.module that compiles a chip more than once: identical
/// targets (upstream compiles both, into identical objects) or targets of
/// one chip that differ in options (e.g. a #rocdl.target on the gpu.module
/// plus rocdl-attach-target{fast=true}): every variant compiles each.
std::vector<std::string> describeRepeatedTargets(mlir::ModuleOp module);

/// Emits a located error at `gpuModule` for every target whose chip LLVM does
/// not know.
mlir::LogicalResult verifyTargetChips(mlir::gpu::GPUModuleOp gpuModule);

} // namespace fly

#endif // FLY_HINTS_TARGETCHIPS_H
