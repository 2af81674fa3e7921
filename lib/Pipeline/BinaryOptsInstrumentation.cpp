//===- BinaryOptsInstrumentation.cpp - opts= flags that deliver -----------===//

#include "Pipeline/BinaryOptsInstrumentation.h"

#include "fly/Hints/BackendOpts.h"
#include "fly/Replay/BinaryPass.h"
#include "fly/Snapshot/Snapshot.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace fly {

void BinaryOptsInstrumentation::runBeforePass(Pass *pass, Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module || pass->getArgument() != "gpu-module-to-binary")
    return;
  FailureOr<BinaryPassOptions> options =
      readBinaryPassOptions(*pass, module.getLoc());
  if (failed(options) || options->cmdOptions.empty())
    return;
  const std::string &opts = options->cmdOptions;
  SmallVector<gpu::GPUModuleOp> gpuModules = getTargetedGpuModules(module);
  diagnoseBinaryOpts(opts, gpuModules, module.getLoc());
  HintSet hints = getBinaryOptsHints(opts, gpuModules);
  if (hints.empty())
    return;
  // A failure here is a diagnostic on the module; the pass then compiles the
  // module as it is, as it would have without fly.
  for (gpu::GPUModuleOp gpuModule : gpuModules)
    (void)applyHints(gpuModule, hints);
}

} // namespace fly
