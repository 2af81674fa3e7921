//===- CodegenCut.h - Code generation stopped once, continued per variant -===//
//
// A legacy code generation pipeline cut before one machine pass: a whole
// code generation of a module keeps its machine functions as they are at the
// cut, and before the first pass that reads the register pressure limits;
// each continuation copies them (with a MachineFunctionInfo built anew from
// the IR function's attributes as they are then) and runs the passes from
// the cut on, or from that earlier point under other limits, to assembly.
// Variants whose attributes change what only the passes after the cut read
// (ROCDL's register hints, RocdlSharedCodegen.h) then share the work before it.
//
// The pipeline is cut by filtering what TargetPassConfig adds, not with
// LLVM's process-wide -start-before option, so other threads building code
// generation pipelines at the same time are not affected.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_CODEGENCUT_H
#define FLY_BACKEND_CODEGENCUT_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/CodeGen/MachineModuleInfo.h"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Function;
class LLVMContext;
class MachineFunction;
class MCContext;
class Module;
class TargetMachine;
struct PerTargetMIParsingState;
} // namespace llvm

namespace fly {

/// Where a copy of a machine function goes in another module: a copy of the
/// source's module read into another context (CodegenCut::continueElsewhere).
/// The function and machine there, and the IR the source refers to (blocks,
/// values, metadata nodes) as found there, by the source's pointers.
struct IrRemap {
  llvm::Function *function = nullptr;
  const llvm::TargetMachine *machine = nullptr;
  llvm::DenseMap<const void *, void *> found;
  /// The source context's synchronisation scope names, by ID.
  llvm::ArrayRef<std::string> syncScopeNames;
};

/// A copy of `src` in `ctx` for the same IR function (with `remap`: for
/// its function there), or null where `src` holds what the copy leaves out
/// (stack objects other than plain ones, EH, jump tables, constant pools,
/// call-site info, target pseudo source values; with `remap`, IR it does not
/// map). With `freshInfo` (the target's register and class names), its
/// MachineFunctionInfo is built anew from the IR function's attributes and
/// given `src`'s serialisable state (as the MIR parser does), and what
/// finalize-isel derives from the register budget is recomputed for it
/// (TargetLowering::finalizeLowering); else `src`'s is cloned.
std::unique_ptr<llvm::MachineFunction>
copyMachineFunction(const llvm::MachineFunction &src, llvm::MCContext &ctx,
                    llvm::PerTargetMIParsingState *freshInfo,
                    const IrRemap *remap = nullptr);

/// The code generation of one module up to a pass, kept.
class CodegenCut {
public:
  ~CodegenCut();

  /// The whole code generation of `module` on `machine` to assembly, with
  /// the machine functions kept as they are before the first pass named
  /// `cutPass` (its -debug-pass argument name), and before the first pass
  /// that reads the register pressure limits: `cut` is null, with `error`
  /// saying why, where the pipeline has no such pass or a machine function
  /// cannot be copied, or where they would take more than `maxBytes`
  /// (getBytes). `module` and `machine` must outlive the cut.
  struct Whole {
    std::optional<llvm::SmallString<0>> assembly;
    std::unique_ptr<CodegenCut> cut;
    std::string error;
  };
  /// With `toAssembly` false, code generation stops at the cut: no
  /// assembly, the cut alone (continued from then on).
  static Whole compileKeeping(llvm::TargetMachine &machine,
                              llvm::Module &module, llvm::StringRef cutPass,
                              size_t maxBytes, bool toAssembly = true);

  /// What the passes before the cut made of each function with a cycle:
  /// the register pressure limits they saw (the target's, then those
  /// RegisterClassInfo derives with the reserved registers) and a digest of
  /// the function after each pass that reads them (early-machinelicm,
  /// machine-sink) and at the cut.
  struct Trace {
    struct Function {
      std::string name;
      std::vector<unsigned> limits;
      std::vector<std::array<uint8_t, 32>> digests;
    };
    std::vector<Function> functions;
  };
  /// Those passes compare the limits only as thresholds (pressure + cost >=
  /// limit means high): where they made the same function under two limits
  /// L1 <= L2 (every pass's digest equal), they make it under any limits
  /// between. So a kept function's range grows to the limits of a trace
  /// with its digests that lie below or above it.
  enum class Widening {
    /// Some function's range grew.
    Widened,
    /// Every function made as kept; no range could grow.
    Unchanged,
    /// Some function was made otherwise: limits there make a difference.
    Differs,
  };
  Widening widenLimits(const Trace &trace);
  /// This cut's own trace.
  Trace getTrace() const;

  /// Why continue() returned nothing.
  enum class Refusal {
    None,
    /// A machine function could not be copied with the attributes of now.
    Copy,
    /// A function with a cycle would see register pressure limits outside
    /// those its kept machine function is known for (MachineSink and
    /// MachineLICM read them before the cut).
    PressureLimits,
    /// The pipeline could not be built.
    Pipeline,
  };

  /// The assembly of the module from the cut on, with the IR functions'
  /// attributes as they are now; nullopt and `refusal` where it could not.
  /// Errors LLVM reports go to the module's context, as in a whole run.
  std::optional<llvm::SmallString<0>> continueToAssembly(Refusal &refusal);
  /// As continueToAssembly, from the machine functions kept before the first
  /// pass that reads the register pressure limits, so under the limits of
  /// now, whatever they are; `trace` gets what the passes up to the cut made
  /// of them.
  std::optional<llvm::SmallString<0>> continueFromEarly(Refusal &refusal,
                                                        Trace &trace);
  /// Code generation from there up to the cut only, traced.
  std::optional<Trace> traceFromEarly();

  /// Where a run of the pipeline may start and stop: its start, the first
  /// pass that reads the register pressure limits (early-machinelicm; the
  /// cut where none comes before it), the cut, its end.
  enum class Point { Start, Early, Cut, End };

  /// Makes the cut continuable elsewhere (continueElsewhere): keeps the
  /// module as it is now, in bitcode, and where in it lies each IR block,
  /// value and metadata node the kept machine functions refer to. False
  /// where one lies nowhere it can be found again (an operand no copy into
  /// another module maps, a block address say, is refused later, by
  /// continueElsewhere, as Copy). Call while nothing else uses the cut or its
  /// module.
  bool makePortable();
  bool isPortable() const { return portable != nullptr; }
  /// As continueToAssembly (`from` the cut) or continueFromEarly (`from`
  /// Early, traced into `trace`), but on a copy of the module read into
  /// `context`, first given `setAttributes` (false: refused as Copy), and
  /// compiled by `machine`, one for the same target. Reads only what
  /// makePortable kept and the kept machine functions, so any number of
  /// threads may continue elsewhere at once, beside one continuing the cut
  /// itself.
  std::optional<llvm::SmallString<0>>
  continueElsewhere(llvm::TargetMachine &machine, llvm::LLVMContext &context,
                    llvm::function_ref<bool(llvm::Module &)> setAttributes,
                    Point from, Refusal &refusal, Trace *trace) const;

  /// What the kept machine functions take, estimated.
  size_t getBytes() const;
  /// The least getBytes() of a cut of `module` on `machine` can be (its
  /// functions without instructions), before anything compiles.
  static size_t estimateLeastBytes(const llvm::TargetMachine &machine,
                                   const llvm::Module &module);

private:
  struct Kept;
  struct Portable;
  /// Where the passes from `from` to `to` run: a module, its machine, the
  /// kept machine function of each of its functions, and how one is copied.
  struct Destination;
  std::optional<llvm::SmallString<0>> run(Point from, Point to,
                                          Refusal &refusal, Trace *trace);
  std::optional<llvm::SmallString<0>> runOn(const Destination &destination,
                                            Point from, Point to,
                                            Refusal &refusal,
                                            Trace *trace) const;
  CodegenCut(llvm::TargetMachine &machine, llvm::Module &module,
             const void *cutPassId);

  llvm::TargetMachine &machine;
  llvm::Module &module;
  const void *cutPassId;
  llvm::MachineModuleInfo keeper;
  std::vector<Kept> kept;
  std::unique_ptr<llvm::PerTargetMIParsingState> names;
  std::unique_ptr<Portable> portable;
  /// Guards the kept functions' limits, which widenLimits changes while
  /// other threads continue elsewhere.
  mutable std::mutex limitsMutex;
  size_t bytes = 0;
};

} // namespace fly

#endif // FLY_BACKEND_CODEGENCUT_H
