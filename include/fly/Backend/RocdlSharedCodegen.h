//===- RocdlSharedCodegen.h - One codegen prefix for ROCDL variants -*- C++ -*-===//
//
// ROCDL variants that share an optimised module (RocdlSharedOpt.h) differ
// only in their register hints, and AMDGPU code generation reads those
// first in amdgpu-prepare-agpr-alloc (bench/ROCDL-SHARE.md, section 3). So
// code generation of the shared module runs once up to that pass
// (CodegenCut.h) and each variant continues from a copy of its machine
// functions with its own hints: the passes before the cut (instruction
// selection, the machine SSA optimisations) run once per kept state instead
// of once per variant. A state is used by one thread at a time; idle ones
// are kept, a few per process, for the next variant of the same module.
//
// The ISA is the one the whole code generation makes, byte for byte, under
// the conditions bench/MIR-CUT-AUDIT.md derives (each checked; any other
// module or variant is compiled whole): a target with architected flat
// scratch (no private-buffer register chosen before the cut); no alloca,
// inline asm, call (but to intrinsics) or preloaded (inreg) kernel argument;
// every machine function copyable; a function with a cycle keeps the
// register pressure limits it had before the cut (MachineSink and
// MachineLICM read them); LLVM reports no warning or error on the way.
// test/Tools/rocdl-shared-codegen.test compares the objects with `cmp`.
// Off with FLY_ROCDL_CODEGEN_CUT=0; FLY_ROCDL_CODEGEN_CUT=verify also
// compiles each continued variant whole and says on stderr whether the two
// ISAs are equal (the whole one is used).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_ROCDLSHAREDCODEGEN_H
#define FLY_BACKEND_ROCDLSHAREDCODEGEN_H

#include "fly/Backend/RocdlSharedOpt.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace fly {

/// What shared code generation did in this process.
struct RocdlSharedCodegenStats {
  /// Code generations run up to the cut and kept.
  uint64_t cuts = 0;
  /// Variants whose ISA came from a kept cut.
  uint64_t continued = 0;
  /// Variants compiled whole: their module or hints are outside the
  /// conditions above.
  uint64_t refused = 0;
};
RocdlSharedCodegenStats getRocdlSharedCodegenStats();

enum class RocdlSharedCodegenMode { Off, On, Verify };
/// FLY_ROCDL_CODEGEN_CUT: 0 (off), verify, anything else or unset: on.
RocdlSharedCodegenMode getRocdlSharedCodegenMode();

/// The ISA of the variant `sharing` describes (RocdlSharedOpt.h), compiled
/// for `triple`, `chip`, `features` at `optLevel` through a kept cut;
/// nullopt where it cannot be (the variant is then compiled whole, which
/// reports whatever LLVM says about it).
std::optional<llvm::SmallString<0>>
codegenSharingRocdl(const RocdlSharing &sharing, llvm::StringRef triple,
                    llvm::StringRef chip, llvm::StringRef features,
                    int optLevel);

} // namespace fly

#endif // FLY_BACKEND_ROCDLSHAREDCODEGEN_H
