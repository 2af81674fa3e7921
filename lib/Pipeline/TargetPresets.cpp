//===- TargetPresets.cpp - Lowering pipelines behind --target= ------------===//

#include "fly/Pipeline/TargetPresets.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using llvm::StringRef;

namespace fly {

InputShape inspectInput(ModuleOp input) {
  InputShape shape;
  for (Operation &op : input.getBody()->getOperations()) {
    if (auto gpuModule = dyn_cast<gpu::GPUModuleOp>(op)) {
      ArrayAttr targets = gpuModule.getTargetsAttr();
      (targets && !targets.empty() ? shape.targeted : shape.untargeted)
          .push_back(gpuModule.getName().str());
      continue;
    }
    if (!isa<gpu::BinaryOp>(op))
      shape.hostCode = true;
  }
  return shape;
}

/// The attach-target pass for `family`, limited to the gpu.modules that have
/// no target yet ("" when every gpu.module has one: nothing to attach).
static std::string attachTarget(const PresetOptions &options,
                                const InputShape &input) {
  std::string filter;
  if (!input.targeted.empty() && !input.hostCode) {
    if (input.untargeted.empty())
      return "";
    SmallVector<std::string> names;
    for (const std::string &name : input.untargeted)
      names.push_back(llvm::Regex::escape(name));
    filter = " module=^(" + llvm::join(names, "|") + ")$";
  }
  std::string features =
      options.features.empty() ? "" : " features=" + options.features.str();
  return llvm::formatv("{0}-attach-target{{chip={1} O={2}{3}{4}},",
                       options.family, options.chip, kPresetOptLevel, features,
                       filter)
      .str();
}

std::string buildPresetPipeline(const PresetOptions &options,
                                const InputShape &input) {
  bool rocdl = options.family == "rocdl";
  std::string binary =
      llvm::formatv("gpu-module-to-binary{{format={0} toolkit={1}}",
                    options.format, options.toolkit);
  if (!input.hostCode) {
    std::string lower =
        rocdl
            ? llvm::formatv("convert-gpu-to-rocdl{{chipset={0}}", options.chip)
                  .str()
            : std::string("convert-gpu-to-nvvm");
    return llvm::formatv("builtin.module(canonicalize,cse,{0}"
                         "gpu.module(convert-scf-to-cf,{1}),"
                         "reconcile-unrealized-casts,{2})",
                         attachTarget(options, input), lower, binary);
  }
  // gpu-lower-to-nvvm-pipeline's passes (mlir/lib/Dialect/GPU/Pipelines/
  // GPUToNVVMPipeline.cpp, defaults: index-bitwidth 64) with the
  // binary pass's toolkit; ROCDL the same with its own attach and lowering.
  std::string device =
      rocdl ? llvm::formatv("convert-gpu-to-rocdl{{chipset={0} "
                            "index-bitwidth=64}",
                            options.chip)
                  .str()
            : std::string("convert-gpu-to-nvvm{index-bitwidth=64}");
  return llvm::formatv(
      "builtin.module({0}gpu-kernel-outlining,convert-vector-to-scf,"
      "convert-scf-to-cf,{1}convert-func-to-llvm,expand-strided-metadata,{2}"
      "lower-affine,convert-arith-to-llvm,"
      "convert-index-to-llvm{{index-bitwidth=64},canonicalize,cse,"
      "gpu.module({3}),gpu.module(canonicalize),gpu.module(cse),"
      "gpu.module(reconcile-unrealized-casts),gpu-to-llvm,{4},"
      "convert-math-to-llvm,canonicalize,cse,reconcile-unrealized-casts)",
      rocdl ? "" : "convert-nvgpu-to-nvvm,",
      rocdl ? "" : "convert-nvvm-to-llvm,", attachTarget(options, input),
      device, binary);
}

std::string describePreset(const PresetOptions &options,
                           const InputShape &input) {
  std::string text =
      input.hostCode
          ? llvm::formatv("host code: kernel outlining and host lowering as "
                          "{0}",
                          options.family == "rocdl"
                              ? "gpu-lower-to-nvvm-pipeline, for ROCDL"
                              : "gpu-lower-to-nvvm-pipeline")
                .str()
          : std::string("kernel-only gpu.modules");
  if (!input.targeted.empty())
    text += input.hostCode ? "; gpu.modules with targets get this one too, "
                             "as upstream's pipeline does"
            : input.untargeted.empty()
                ? "; every gpu.module names its targets: none attached"
                : "; gpu.modules with targets keep only theirs";
  return text;
}

} // namespace fly
