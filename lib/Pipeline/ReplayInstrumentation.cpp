//===- ReplayInstrumentation.cpp - Replays inside a client's PM -----------===//

#include "fly/Pipeline/ReplayInstrumentation.h"

#include "fly/Hints/ApplyHints.h"
#include "fly/Replay/Replay.h"
#include "fly/Snapshot/Snapshot.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace fly {

static constexpr llvm::StringLiteral kBinaryPass = "gpu-module-to-binary";

ReplayInstrumentation::ReplayInstrumentation(std::vector<HintSet> hintSets,
                                             Sink sink, Options options)
    : hintSets(std::move(hintSets)), sink(std::move(sink)),
      options(std::move(options)) {}

void ReplayInstrumentation::runBeforePass(Pass *pass, Operation *op) {
  if (pass->getArgument() != kBinaryPass || hintSets.empty())
    return;
  auto module = dyn_cast<ModuleOp>(op);
  if (!module) {
    emitError(op->getLoc())
        << "fly: gpu-module-to-binary runs on '" << op->getName()
        << "'; hint replay needs it on a builtin.module";
    ok = false;
    return;
  }
  if (failed(verifyCheckpointPosition(module, "fly hint replay"))) {
    ok = false;
    return;
  }
  // Every hint set is checked before anything compiles.
  for (const HintSet &hints : hintSets)
    for (gpu::GPUModuleOp gpuModule : getTargetedGpuModules(module))
      if (failed(verifyHintsApply(gpuModule, hints))) {
        ok = false;
        return;
      }
  // The replays copy the binary pass exactly as configured here.
  std::string binaryPass;
  llvm::raw_string_ostream os(binaryPass);
  pass->printAsTextualPipeline(os);

  std::vector<HintSet> extra(hintSets.begin() + 1, hintSets.end());
  ReplayConfig config;
  config.binaryPass = binaryPass;
  config.maxParallel = options.jobs;
  config.reuseIsa = options.reuseIsa;
  for (unsigned i = 1; i < hintSets.size(); ++i)
    config.variantIndices.push_back(i);
  FailureOr<std::vector<VariantResult>> replayed = replayVariants(
      module, extra, config, /*nestInSource=*/false,
      [&](OpPassManager &pipeline, ModuleOp container) {
        PassManager pm(module.getContext(), pipeline.getOpAnchorName());
        static_cast<OpPassManager &>(pm) = pipeline;
        if (options.configurePassManager &&
            failed(options.configurePassManager(pm)))
          return failure();
        return pm.run(container);
      });
  if (failed(replayed)) {
    ok = false;
    return;
  }

  // The primary run compiles hint set 1 in place.
  const HintSet &primary = hintSets.front();
  for (gpu::GPUModuleOp gpuModule : getTargetedGpuModules(module))
    if (failed(applyHints(gpuModule, primary)))
      ok = false;
  primaryBinaryPass = binaryPass;
  if (std::string opts =
          getBinaryOptsHint(primary, getTargetedGpuModules(module));
      !opts.empty()) {
    FailureOr<BinaryPassOptions> parsed =
        parseBinaryPass(binaryPass, module.getLoc());
    if (failed(parsed)) {
      ok = false;
      return;
    }
    std::string combined = withExtraOpts(*parsed, opts).cmdOptions;
    if (failed(pass->initializeOptions(
            "opts={" + combined + "}",
            [](const llvm::Twine &) { return failure(); })))
      ok = false;
    primaryBinaryPass.clear();
    llvm::raw_string_ostream primaryOs(primaryBinaryPass);
    pass->printAsTextualPipeline(primaryOs);
  }
  for (VariantResult &variant : *replayed)
    sink(std::move(variant));
}

VariantResult ReplayInstrumentation::makePrimaryResult() const {
  VariantResult primary;
  primary.index = 0;
  primary.hints = hintSets.front();
  primary.id = getVariantId(0, primary.hints);
  primary.binaryPass = primaryBinaryPass;
  return primary;
}

void ReplayInstrumentation::runAfterPass(Pass *pass, Operation *op) {
  if (pass->getArgument() != kBinaryPass || hintSets.empty())
    return;
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return;
  VariantResult primary = makePrimaryResult();
  recordBinaries(primary, module);
  sink(std::move(primary));
}

void ReplayInstrumentation::runAfterPassFailed(Pass *pass, Operation *op) {
  if (pass->getArgument() != kBinaryPass || hintSets.empty())
    return;
  VariantResult primary = makePrimaryResult();
  primary.error = "the pipeline's own gpu-module-to-binary failed";
  sink(std::move(primary));
}

} // namespace fly
