//===- RocdlSharedCodegen.h - Shared ROCDL code generation ------*- C++ -*-===//
//
// ROCDL variants that share an optimised module (RocdlSharedOpt.h) differ
// only in their register hints, and AMDGPU code generation reads those
// first in amdgpu-prepare-agpr-alloc (bench/ROCDL-SHARE.md, section 3).
//
// A variant that finds no idle state of its shared module compiles whole and
// keeps its machine functions as they are before that pass and before the
// first pass that reads the register pressure limits (CodegenCut.h); its
// module, context and machine become the kept state. It keeps only where
// more variants of its sweep are still to start than states of that module
// exist, in a sweep whose variants fill at least FLY_ROCDL_CODEGEN_CUT_ROUNDS
// (3) rounds of the pool that runs them (a sweep that runs in a round or two
// is as fast compiled whole, and lighter: bench/node-rule), or where it
// compiles alone and a later sweep of the process may continue it
// (VariantQueue.h, setRocdlKeepForLaterSweeps). A later variant
// takes an idle state and continues on it with its own hints, from the cut,
// or from before the limits where its limits lie outside those the state is
// known for. A state is used by one thread at a time; states are kept per
// process: 16 or twice the hardware threads, and 64 MiB of machine
// functions, at most.
//
// With FLY_ROCDL_CONTINUE_ELSEWHERE=1, the first variant of a shared module
// to find no state of it makes one instead: a copy of the module without
// register hints, in a context and on a machine of its own, compiled up to
// the cut, made portable (in a sweep as large, one state being enough). Every
// variant, that one too, then continues elsewhere: in its own context, on its
// own machine, from copies of the kept machine functions remapped onto a copy
// of the state's module (CodegenCut::continueElsewhere): from the cut where its
// pressure limits lie in the range the state is known for, else from before the
// limits (so under any limits), which widens that range as above. Such a state
// is only read, so it serves any number of threads at once. While it is made,
// its maker holds its sweep back (VariantQueue.h's HeldBackSweep), so that free
// threads take other sweeps' variants first; a variant that starts meanwhile
// all the same compiles whole rather than waiting. The executor holds the sweep
// back from its first variant's start (rocdlSweepsOpenWithAState), since the
// translation and optimisation before code generation give the free threads
// time to take the rest.
//
// The ISA is the one the whole code generation makes, byte for byte, under the
// conditions bench/MIR-CUT-AUDIT.md derives and what attacking it found (each
// checked; any other module or variant is compiled whole): a target with
// architected flat scratch (no private-buffer register chosen before the cut)
// and without the user-SGPR init bug (instruction selection pads the user
// SGPRs, which a copy does not carry); no alloca, inline asm, call (but to
// intrinsics) or preloaded (inreg) kernel argument; every machine function
// copyable (elsewhere: everything of the IR it refers to found again in the
// copy of the module); a function with a cycle sees register pressure limits
// in the range its kept state is known for (MachineLICM reads the target's,
// MachineSink RegisterClassInfo's: the kept compile's own, widened where a
// run of those passes under other limits made the function alike,
// CodegenCut::widenLimits), or else continues from the machine functions
// kept before the first of them, under its own limits; a kept variant caps no
// waves per EU (a continuation's occupancy is the kept one, only ever lowered
// to its own limit; a state made to continue elsewhere has no hints); LLVM
// said nothing worse than a remark, and nothing watches code generation
// through LLVM's options or limits it (lib/Backend/CompileObserved.h).
//
// And once per target in a process, continuations must be checked: before
// its first continuation from each of the two points, one with the
// kept variant's own hints must give that variant's ISA; where other variants
// run beside it, the variant that claims a check runs it on a thread of its
// own with that state and continues on another itself (waiting for one to be
// given back, the checked one at the latest). Elsewhere, the variant that
// makes the first state of a target is also compiled whole (on a thread of
// its own where other variants run beside it under crash recovery, else
// first), and its continuation from before the limits must give that ISA,
// and so must its continuation from the cut, on that thread, before any
// other continues from there (where its limits lie outside the state's,
// the next state made checks that route); a state kept by a variant
// compiled whole alone keeps its ISA for the check the next variant makes
// (from before the limits only).
// A target where a check says no
// is never continued (a sweep whose variants never meet a kept state pays
// nothing). A variant that continues while the check of its route runs waits
// for the verdict, and its ISA stands on a yes (else, or without a verdict
// within a minute, it compiles whole). A crash in such a continuation fails
// the variant, as in any continuation; a crash in a check says no.
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
  /// Of `continued`, those continued elsewhere: in the variant's own
  /// context, from a state another thread may hold.
  uint64_t continuedElsewhere = 0;
  /// Variants compiled whole because the state their module continues
  /// elsewhere from was being made.
  uint64_t wholeWhileStateMade = 0;
  /// Of `continuedElsewhere`, those from the cut (the others from before the
  /// passes that read the pressure limits).
  uint64_t continuedElsewhereFromCut = 0;
};
RocdlSharedCodegenStats getRocdlSharedCodegenStats();

/// Whether a variant alone in its sweep keeps a state for a later sweep of
/// the process (a caller's loop of one-variant compiles through the C API
/// or Python): on by default. A tool whose process compiles one sweep per
/// module (fly-tune, fly-opt) turns it off, so a one-variant compile there
/// costs what a whole compile does.
void setRocdlKeepForLaterSweeps(bool keep);

/// Whether the first variant of a ROCDL sweep to get to code generation makes
/// the state the others continue from (FLY_ROCDL_CONTINUE_ELSEWHERE=1, code
/// generation shared). An executor had better open such a sweep held back
/// (VariantQueue.h's SweepHold): the others that start before the state is
/// made compile whole. That variant lets go of the opening hold once it holds
/// the sweep back itself, or knows it makes none.
bool rocdlSweepsOpenWithAState();

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
/// (null after). With FLY_ROCDL_CONTINUE_ELSEWHERE=1: continued elsewhere
/// (in `context`, on `machine`) from a state of that shared module, made
/// here where none is. nullopt: none of these applies; the caller compiles
/// whole.
std::optional<RocdlSharedIsa>
codegenSharingRocdl(const RocdlSharing &sharing,
                    std::unique_ptr<llvm::LLVMContext> &context,
                    std::unique_ptr<llvm::Module> &module,
                    std::optional<LentTargetMachine> &machine);

} // namespace fly

#endif // FLY_BACKEND_ROCDLSHAREDCODEGEN_H
