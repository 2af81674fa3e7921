//===- ApplyHints.h - Write hints onto a gpu.module clone -------*- C++ -*-===//
//
// Upstream ROCDL serialization ignores gpu-module-to-binary's `opts=`, so
// hints that must reach a backend are written into the IR it compiles: onto
// the kernels' llvm.func (rocdl.waves_per_eu, passthrough, nvvm.maxnreg) and
// onto the gpu.module's target attribute (O, flags, chip, ...). What each
// hint writes, and where it applies, is its HintSpec (HintRegistry.h); this
// file checks and runs them.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_HINTS_APPLYHINTS_H
#define FLY_HINTS_APPLYHINTS_H

#include "fly/Hints/HintSet.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace fly {

/// The family of a gpu.module target attribute.
TargetFamily getTargetFamily(mlir::Attribute target);
/// The families of `gpuModule`'s targets, in order (empty without targets).
llvm::SmallVector<TargetFamily>
getTargetFamilies(mlir::gpu::GPUModuleOp gpuModule);
/// Whether some target of `gpuModules` is of `family`.
bool anyTargetOf(llvm::ArrayRef<mlir::gpu::GPUModuleOp> gpuModules,
                 TargetFamily family);
/// Whether `families` is non-empty and all NVVM.
bool isNvvmOnly(llvm::ArrayRef<TargetFamily> families);
/// Whether `families` is non-empty and all ROCDL.
bool isRocdlOnly(llvm::ArrayRef<TargetFamily> families);

/// Whether a hint selector (`rocdl`, `nvvm` or a chip, see splitHintName)
/// picks `target`; the empty selector picks every target.
bool targetMatchesSelector(mlir::Attribute target, llvm::StringRef selector);

/// The kernels of `gpuModule`, in order: the llvm.funcs the GPU-to-LLVM
/// lowering marked as such (kernel hints go onto these).
llvm::SmallVector<mlir::LLVM::LLVMFuncOp>
getKernels(mlir::gpu::GPUModuleOp gpuModule);

/// Where a kernel hint is written (HintSpec::applyToKernels): the kernels
/// of one gpu.module and the families of its targets.
struct KernelHintSite {
  llvm::ArrayRef<mlir::LLVM::LLVMFuncOp> kernels;
  bool rocdl = false, nvvm = false;
  /// The value of an attribute hint, parsed once for all kernels.
  mlir::Attribute attribute;

  void setAttr(llvm::StringRef name, mlir::Attribute value) const;
  void setI32(llvm::StringRef name, int64_t value) const;
  void removeAttr(llvm::StringRef name) const;
  /// Sets one passthrough entry (with an empty value, a bare key),
  /// replacing an earlier entry of the same key.
  void setPassthrough(llvm::StringRef key, llvm::StringRef value) const;
};

/// The fields of one #rocdl.target / #nvvm.target that target hints rewrite
/// (HintSpec::applyToTarget).
struct TargetFields {
  mlir::MLIRContext *context;
  TargetFamily family;
  int optLevel;
  std::string triple, chip, features, abi;
  mlir::DictionaryAttr flags;
  /// The `opts` hint goes into flags["ptxas-cmd-options"] (see
  /// getBinaryOptsHint).
  bool optsIntoTarget;

  void setFlag(llvm::StringRef name, bool on);
  /// Appends the tokens of `opts` to flags["ptxas-cmd-options"].
  void appendPtxasOptions(llvm::StringRef opts);
};

/// Checks that every hint of `hints` is well formed and applies to the
/// targets of `gpuModule`, without changing it. Emits a located error naming
/// the hint otherwise.
mlir::LogicalResult verifyHintsApply(mlir::gpu::GPUModuleOp gpuModule,
                                     const HintSet &hints);

/// How many times verifyHintsApply ran in this process: a replay plan
/// checks each hint set once per gpu.module (tests hold it to that).
uint64_t getHintCheckCount();

/// Writes `hints` onto `gpuModule` (a per-variant clone) after checking them
/// with verifyHintsApply. The `opts` hint becomes IR only on NVVM-only
/// modules: see getBinaryOptsHint.
mlir::LogicalResult applyHints(mlir::gpu::GPUModuleOp gpuModule,
                               const HintSet &hints);
/// applyHints for hints that verifyHintsApply already accepted for this
/// gpu.module (a replay plan checks each once, before anything compiles).
void applyVerifiedHints(mlir::gpu::GPUModuleOp gpuModule, const HintSet &hints);

/// Erases the kernel attributes whose value the backend reads exactly as if
/// they were absent, so that variants differing only in them compare equal
/// (findDuplicateVariants) and compile once. On gpu.modules whose targets
/// are all #rocdl.target: `rocdl.waves_per_eu = 1` on a kernel without a
/// passthrough "amdgpu-waves-per-eu". It becomes "amdgpu-waves-per-eu"="1",
/// which AMDGPUSubtarget::getWavesPerEU, the attribute's reader in code
/// generation, merges with its default (1, the most the chip runs) into that
/// same default, and which AMDGPUAttributorPass takes for the default. And,
/// where every target's chip has at most 256 VGPRs a kernel (512 on gfx90a
/// and later CDNA, where a request counts twice), a passthrough
/// "amdgpu-num-vgpr" of 256 or more (`maxnreg`): GCNSubtarget clamps it to
/// the budget the kernel has without it.
void dropBackendDefaults(mlir::gpu::GPUModuleOp gpuModule);

/// The extra `opts=` a hint set asks of the binary pass for `gpuModules`
/// ("" for none). On modules whose targets are all #nvvm.target, applyHints
/// writes the `opts` hint into the target's flags["ptxas-cmd-options"]
/// (upstream appends them to ptxas's command line right after `opts`), so
/// this is "" there unless it holds `-32`, which upstream reads from `opts`
/// only. ROCDL ignores `opts`; it stays a pass option there.
std::string
getBinaryOptsHint(const HintSet &hints,
                  llvm::ArrayRef<mlir::gpu::GPUModuleOp> gpuModules);

/// The warning for `opts` flags given to a gpu.module with a #rocdl.target:
/// upstream ROCDL serialization ignores the binary pass's `opts`, so they
/// change nothing in the object. "" when `rocdlOpts` is empty. Callers that
/// turn some flags into IR hints pass only the flags left over.
std::string getIgnoredRocdlOptsWarning(llvm::StringRef rocdlOpts);

} // namespace fly

#endif // FLY_HINTS_APPLYHINTS_H
