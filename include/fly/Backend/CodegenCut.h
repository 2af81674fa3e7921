//===- CodegenCut.h - Code generation stopped once, continued per variant -===//
//
// A legacy code generation pipeline cut before one machine pass: a whole
// code generation of a module keeps its machine functions as they are at the
// cut; each continuation copies them (with a MachineFunctionInfo built anew
// from the IR function's attributes as they are then) and runs the passes from
// the cut on, to assembly. Variants whose attributes change what only the
// passes after the cut read (ROCDL's register hints, RocdlSharedCodegen.h)
// then share the work before it.
//
// The pipeline is cut by filtering what TargetPassConfig adds, not with
// LLVM's process-wide -start-before option, so other threads building code
// generation pipelines at the same time are not affected.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_CODEGENCUT_H
#define FLY_BACKEND_CODEGENCUT_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/CodeGen/MachineModuleInfo.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Function;
class MachineFunction;
class MCContext;
class Module;
class TargetMachine;
struct PerTargetMIParsingState;
} // namespace llvm

namespace fly {

/// A copy of `src` in `ctx` for the same IR function, or null where `src`
/// holds what the copy leaves out (stack objects other than plain ones, EH,
/// jump tables, constant pools, call-site info, target pseudo source
/// values). With `freshInfo` (the target's register and class names), its
/// MachineFunctionInfo is built anew from the IR function's attributes and
/// given `src`'s serialisable state (as the MIR parser does), and what
/// finalize-isel derives from the register budget is recomputed for it
/// (TargetLowering::finalizeLowering); else `src`'s is cloned.
std::unique_ptr<llvm::MachineFunction>
copyMachineFunction(const llvm::MachineFunction &src, llvm::MCContext &ctx,
                    llvm::PerTargetMIParsingState *freshInfo);

/// The code generation of one module up to a pass, kept.
class CodegenCut {
public:
  ~CodegenCut();

  /// The whole code generation of `module` on `machine` to assembly, with
  /// the machine functions kept as they are before the first pass named
  /// `cutPass` (its -debug-pass argument name): `cut` is null, with `error`
  /// saying why, where the pipeline has no such pass or a machine function
  /// cannot be copied, or where they would take more than `maxBytes`
  /// (getBytes). `module` and `machine` must outlive the cut.
  struct Whole {
    std::optional<llvm::SmallString<0>> assembly;
    std::unique_ptr<CodegenCut> cut;
    std::string error;
  };
  static Whole compileKeeping(llvm::TargetMachine &machine,
                              llvm::Module &module, llvm::StringRef cutPass,
                              size_t maxBytes);

  /// Why continue() returned nothing.
  enum class Refusal {
    None,
    /// A machine function could not be copied with the attributes of now.
    Copy,
    /// A function with a cycle would see other register pressure limits
    /// than it had before the cut (MachineSink and MachineLICM read them).
    PressureLimits,
    /// The pipeline could not be built.
    Pipeline,
  };

  /// The assembly of the module from the cut on, with the IR functions'
  /// attributes as they are now; nullopt and `refusal` where it could not.
  /// Errors LLVM reports go to the module's context, as in a whole run.
  std::optional<llvm::SmallString<0>> continueToAssembly(Refusal &refusal);

  /// What the kept machine functions take, estimated.
  size_t getBytes() const;
  /// The least getBytes() of a cut of `module` on `machine` can be (its
  /// functions without instructions), before anything compiles.
  static size_t estimateLeastBytes(const llvm::TargetMachine &machine,
                                   const llvm::Module &module);

private:
  struct Kept;
  CodegenCut(llvm::TargetMachine &machine, llvm::Module &module,
             const void *cutPassId);

  llvm::TargetMachine &machine;
  llvm::Module &module;
  const void *cutPassId;
  llvm::MachineModuleInfo keeper;
  std::vector<Kept> kept;
  std::unique_ptr<llvm::PerTargetMIParsingState> names;
  size_t bytes = 0;
};

} // namespace fly

#endif // FLY_BACKEND_CODEGENCUT_H
