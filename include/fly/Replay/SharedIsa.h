//===- SharedIsa.h - One ISA compile for variants that share it -*- C++ -*-===//
//
// Much of gpu-module-to-binary does not depend on every hint: on NVVM,
// translation to LLVM IR, libdevice linking, optimisation and PTX code
// generation ignore the kernels' nvvm.maxnreg (NVPTXAsmPrinter only prints
// it as a `.maxnreg N` line in the kernel's entry header) and the target's
// ptxas options (they reach ptxas only). Variants that differ only there
// share one PTX: it is generated once with a per-kernel sentinel value in
// place of maxnreg, and each variant gets it with its own directive line
// written in (or dropped), then runs only ptxas: fly-assemble-isa. On ROCDL
// every hint may change the ISA (code generation reads them), so each
// variant has its own; fly-assemble-isa then assembles it and links it with
// lld in this process, where upstream starts an ld.lld process per variant,
// or takes the object of an equal ISA made before.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_REPLAY_SHAREDISA_H
#define FLY_REPLAY_SHAREDISA_H

#include "fly/Backend/IntermediateCapture.h"
#include "fly/Hints/HintSet.h"
#include "fly/Support/AttrNames.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringMap.h"

#include <map>
#include <mutex>
#include <optional>

namespace fly {

/// What identifies a shared ISA: the binary pass's extra `opts` and the
/// normalised hinted attributes of every gpu.module (context-uniqued,
/// compared exactly).
using SharedIsaKey = std::pair<std::string, llvm::SmallVector<mlir::Attribute>>;

/// The key of the ISA that `hints` need; nothing if they do not apply or a
/// target is neither NVVM nor ROCDL (the whole binary pass runs then).
std::optional<SharedIsaKey>
getSharedIsaKey(llvm::ArrayRef<mlir::gpu::GPUModuleOp> gpuModules,
                const HintSet &hints, llvm::StringRef extraOpts);

/// Rewrites a hinted clone into the module whose ISA every variant with the
/// same key can use: on an all-NVVM gpu.module, kernel k's nvvm.maxnreg
/// becomes a sentinel value and the targets lose their ptxas options.
void normalizeForSharedIsa(mlir::gpu::GPUModuleOp gpuModule);

/// Whether the sentinel directive of each of `kernels` kernels occurs
/// exactly once in each NVVM ISA object of `objects` (else the ISA cannot be
/// instantiated).
bool hasSentinelsOnce(mlir::ArrayAttr objects, size_t kernels);

/// The ISA objects of hinted `gpuModule` made from its shared ISA `objects`:
/// with gpuModule's targets, and on NVVM each kernel's sentinel line turned
/// into its own `.maxnreg N` (or removed when it has none).
mlir::FailureOr<mlir::ArrayAttr>
instantiateSharedIsa(mlir::ArrayAttr objects, mlir::gpu::GPUModuleOp gpuModule);

/// The outcome of one shared ISA compile.
struct SharedIsa {
  /// Index (result label) of the variant whose hints it was compiled with.
  unsigned producer = 0;
  /// Non-empty when that compile failed: its diagnostics.
  std::string error;
  /// False when the sentinels did not survive code generation: those
  /// variants then replay the whole binary pass.
  bool shareable = true;
  /// gpu.module name -> its ISA objects.
  llvm::StringMap<mlir::ArrayAttr> objects;
  /// With a capturing plan: the LLVM IR and ISA of the compile.
  std::vector<TargetIntermediates> intermediates;
  /// Its targets whose ISA continued a kept code generation.
  unsigned codegenContinued = 0;
  /// Wall time of the compile batch it was part of.
  double ms = 0;
};

/// Shared ISAs by ISA group (PlanEntry::isaGroup); shared by concurrent
/// replays of one plan (crash-isolated ones).
class SharedIsaTable {
public:
  std::optional<SharedIsa> lookup(unsigned group) const;
  void insert(unsigned group, SharedIsa isa);

private:
  mutable std::mutex mutex;
  std::map<unsigned, SharedIsa> entries;
};

} // namespace fly

#endif // FLY_REPLAY_SHAREDISA_H
