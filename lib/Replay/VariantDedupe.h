//===- VariantDedupe.h - Compile identical hinted variants once -*- C++ -*-===//
//
// The replay plan finds the hint sets whose hinted variants are identical
// (PlanEntry::sameAs); executePlan compiles one of each and copies the
// outcome to the others.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_REPLAY_VARIANTDEDUPE_H
#define FLY_REPLAY_VARIANTDEDUPE_H

#include "fly/Hints/HintSet.h"
#include "fly/Replay/VariantResult.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace fly {

/// What a fingerprint of a hinted variant leaves out.
enum class HintedFingerprint {
  /// Nothing: equal fingerprints, identical variant modules.
  Exact,
  /// Kernel attributes the backend reads as absent (dropBackendDefaults):
  /// equal fingerprints, identical objects.
  SameObjects,
  /// What assembly finishes from a shared ISA (normalizeForSharedIsa).
  SharedIsa,
};

/// The attributes a hint set gives the gpu.modules and their llvm.funcs
/// (applied to region-less copies), normalised as `kind` says; nothing if
/// the hints do not apply.
std::optional<llvm::SmallVector<mlir::Attribute>>
fingerprintHinted(llvm::ArrayRef<mlir::gpu::GPUModuleOp> gpuModules,
                  const HintSet &hints, HintedFingerprint kind);

/// For each hint set, the position of the first earlier hint set whose
/// hinted variant of `source` compiles to the same objects (same `opts`,
/// same fingerprint of kind `kind`: Exact or SameObjects), or nullopt.
/// Attributes compare by identity: no hash collisions.
llvm::SmallVector<std::optional<unsigned>>
findDuplicateVariants(mlir::ModuleOp source, llvm::ArrayRef<HintSet> hintSets,
                      HintedFingerprint kind);

/// Gives `copy` the outcome of `from` (objects or error) without compiling:
/// replayMs 0, duplicateOf = from.index. Keeps copy's index, id and hints.
void copyVariantOutcome(VariantResult &copy, const VariantResult &from);

} // namespace fly

#endif // FLY_REPLAY_VARIANTDEDUPE_H
