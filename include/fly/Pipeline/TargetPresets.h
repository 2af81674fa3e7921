//===- TargetPresets.h - Lowering pipelines behind --target= ----*- C++ -*-===//
//
// fly-tune's --target=rocdl:<chip> / nvvm:<sm> picks a full pipeline for the
// input as written: kernel-only gpu.modules get the short lowering they have
// always had; inputs with host code (gpu.launch, func.func) get kernel
// outlining and host lowering, as upstream's gpu-lower-to-nvvm-pipeline
// (spelt out, so the binary pass takes --toolkit) and its ROCDL
// counterpart. Targets already on a gpu.module are kept, not added to.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_PIPELINE_TARGETPRESETS_H
#define FLY_PIPELINE_TARGETPRESETS_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace fly {

/// What the preset needs to know about the input.
struct InputShape {
  /// Ops outside gpu.modules (func.func, gpu.launch, ...): host code.
  bool hostCode = false;
  /// gpu.modules with and without target attributes, by name.
  std::vector<std::string> targeted, untargeted;
};
InputShape inspectInput(mlir::ModuleOp input);

/// The attach-target `O` of every preset, kernel-only and host code: 2, the
/// default of upstream's rocdl-/nvvm-attach-target and of
/// gpu-lower-to-nvvm-pipeline (O=3 gives the bundled example the same
/// registers, spills and object sizes).
inline constexpr unsigned kPresetOptLevel = 2;

struct PresetOptions {
  llvm::StringRef family; // rocdl | nvvm
  llvm::StringRef chip;
  llvm::StringRef format; // gpu-module-to-binary format
  llvm::StringRef toolkit;
  /// The attach-target's `features` ("" = none; getPresetFeatures).
  llvm::StringRef features = "";
};

/// The pipeline for `input` under `options`, gpu-module-to-binary included.
std::string buildPresetPipeline(const PresetOptions &options,
                                const InputShape &input);

/// A one-line description of the preset chosen ("host code: outlining and
/// host lowering as gpu-lower-to-nvvm-pipeline", ...).
std::string describePreset(const PresetOptions &options,
                           const InputShape &input);

} // namespace fly

#endif // FLY_PIPELINE_TARGETPRESETS_H
