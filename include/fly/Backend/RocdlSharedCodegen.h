//===- RocdlSharedCodegen.h - Shared ROCDL code generation ------*- C++ -*-===//
//
// ROCDL variants that share an optimised module (RocdlSharedOpt.h) differ
// only in their register hints, and AMDGPU code generation reads those
// first in amdgpu-prepare-agpr-alloc (bench/ROCDL-SHARE.md, section 3). So a
// variant that finds no kept state of its shared module compiles whole and
// keeps its machine functions as they are before that pass (CodegenCut.h);
// its module, context and machine become the kept state. It keeps only where
// more variants of its sweep are still to start than states of that module
// exist, or where it compiles alone and none exists (VariantQueue.h): a sweep
// of no more variants than threads keeps nothing. A later variant
// takes an idle state and continues from copies of those machine functions
// with its own hints: instruction selection and the machine SSA
// optimisations run once per state instead of once per variant. A state is
// used by one thread at a time; idle ones are kept, 16 or twice the
// hardware threads per process and 64 MiB of machine functions at most.
//
// The ISA is the one the whole code generation makes, byte for byte, under the
// conditions bench/MIR-CUT-AUDIT.md derives and what attacking it found (each
// checked; any other module or variant is compiled whole): a target with
// architected flat scratch (no private-buffer register chosen before the cut)
// and without the user-SGPR init bug (instruction selection pads the user
// SGPRs, which a copy does not carry); no alloca, inline asm, call (but to
// intrinsics) or preloaded (inreg) kernel argument; every machine function
// copyable; a function with a cycle sees register pressure limits in the range
// its kept state is known for (MachineLICM reads the target's, MachineSink
// RegisterClassInfo's: the kept compile's own, widened where a run of those
// passes under other limits made the function alike, CodegenCut::widenLimits),
// or else continues from the machine functions kept before the first of them,
// under its own limits; a kept variant caps no waves per EU (a continuation's
// occupancy is the kept one, only ever lowered to its own limit); LLVM said
// nothing worse than a remark, and nothing watches code generation through
// LLVM's options or limits it (lib/Backend/CompileObserved.h). And once per
// target in a process, before its first continuation from each of the two
// points, one with the kept variant's own hints must give that variant's ISA; a
// target where it does not is never continued from there (a sweep whose
// variants never meet a kept state pays nothing). Where other variants run
// beside it under crash recovery, the variant that claims a check runs it on
// a thread of its own with that state and continues on another itself
// (waiting for one to be given back, the checked one at the latest); else it
// checks first, then continues. A variant that takes another
// state while that check runs continues too, and its ISA stands once the check
// says yes (else, or without a verdict within a minute, it compiles whole). A
// crash in such a continuation fails the variant, as in any continuation; a
// crash in a check says no.
// test/Tools/rocdl-shared-codegen.test compares the objects with `cmp`.
// Off with FLY_ROCDL_CODEGEN_CUT=0; FLY_ROCDL_CODEGEN_CUT=verify also
// compiles each continued variant whole and says on stderr whether the two
// ISAs are equal (the whole one is used).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_ROCDLSHAREDCODEGEN_H
#define FLY_BACKEND_ROCDLSHAREDCODEGEN_H

#include "fly/Backend/RocdlSharedOpt.h"
#include "fly/Backend/TargetMachinePool.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace fly {

/// What shared code generation did in this process.
struct RocdlSharedCodegenStats {
  /// Whole compiles whose cut was kept.
  uint64_t cuts = 0;
  /// Variants whose ISA came from a kept cut.
  uint64_t continued = 0;
  /// Variants compiled whole because their shared module cannot be cut.
  uint64_t refusedModules = 0;
  /// Variants compiled whole because a continuation would not be exact for
  /// their hints (or LLVM said something during it).
  uint64_t refusedVariants = 0;
  /// Runs from before the first pass that reads the register pressure
  /// limits up to the cut that probed other limits for a kept state, and
  /// those that widened its limits.
  uint64_t probes = 0;
  uint64_t widenedProbes = 0;
  /// Of `continued`, those continued from before the first pass that reads
  /// the pressure limits (the state served other limits).
  uint64_t continuedEarly = 0;
  /// Whole compiles that kept nothing: no later variant of their sweep
  /// needed another state (VariantQueue.h).
  uint64_t notKept = 0;
  /// Waits for another thread's check of a target (from the cut, or from
  /// before the passes that read the limits) by a continuation made while it
  /// ran: at most one per route and variant.
  uint64_t awaitedChecks = 0;
  /// Checks of a target run on a thread of their own beside the variant
  /// that claimed them.
  uint64_t checksBeside = 0;
};
RocdlSharedCodegenStats getRocdlSharedCodegenStats();

enum class RocdlSharedCodegenMode { Off, On, Verify };
/// FLY_ROCDL_CODEGEN_CUT: 0 (off), verify, anything else or unset: on.
RocdlSharedCodegenMode getRocdlSharedCodegenMode();

/// The ISA codegenSharingRocdl made, and how.
struct RocdlSharedIsa {
  llvm::SmallString<0> isa;
  /// From a kept cut; else compiled whole on the caller's module.
  bool continued = false;
};

/// The ISA of a variant whose optimised module `module` (in `context`, to
/// compile on `machine`) is `sharing`'s shared module plus its hints:
/// continued from an idle kept state of that shared module, or else
/// compiled whole on `machine` (LLVM's words reach `context`'s handler as
/// usual) and kept, `context`, `module` and `machine` moving into the state
/// (null after). nullopt: neither applies, nothing compiled; the caller
/// compiles whole.
std::optional<RocdlSharedIsa>
codegenSharingRocdl(const RocdlSharing &sharing,
                    std::unique_ptr<llvm::LLVMContext> &context,
                    std::unique_ptr<llvm::Module> &module,
                    std::optional<LentTargetMachine> &machine);

} // namespace fly

#endif // FLY_BACKEND_ROCDLSHAREDCODEGEN_H
