//===- ReplayInstrumentation.cpp - Replays inside a client's PM -----------===//

#include "fly/Pipeline/ReplayInstrumentation.h"

#include "fly/Executor/Executor.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Replay/BinaryPass.h"
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
  plan.reset();
  preBinary = nullptr;
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
  // The replays copy the binary pass exactly as configured here.
  FailureOr<BinaryPassOptions> passOptions =
      readBinaryPassOptions(*pass, module.getLoc());
  if (failed(passOptions)) {
    ok = false;
    return;
  }
  // One plan of every hint set, the primary's included: each is checked
  // once, before anything compiles.
  ReplayPlanOptions planOptions;
  planOptions.reuseIsa = options.reuseIsa;
  planOptions.replaysInstrumented = options.replaysInstrumented;
  FailureOr<ReplayPlan> planned =
      buildReplayPlan(module, *passOptions, hintSets, planOptions);
  if (failed(planned)) {
    ok = false;
    return;
  }
  // The replays start from the module as it is now: the pass consumes the
  // gpu.modules, and hint set 1 is applied to them first.
  preBinary = module.clone();
  plan = std::move(*planned);

  // The primary run compiles hint set 1 in place, as its plan entry says
  // (the entry's binary pass is this pass with the entry's opts).
  const PlanEntry &primaryEntry = plan->entries.front();
  for (gpu::GPUModuleOp gpuModule : getTargetedGpuModules(module))
    applyVerifiedHints(gpuModule, primaryEntry.hints);
  if (const std::string &opts = primaryEntry.extraOpts; !opts.empty()) {
    std::string combined = withExtraOpts(*passOptions, opts).cmdOptions;
    if (failed(pass->initializeOptions(
            "opts={" + combined + "}",
            [](const llvm::Twine &) { return failure(); })))
      ok = false;
  }
}

void ReplayInstrumentation::replayBeside(VariantResult primary) {
  ModuleOp module = *preBinary;
  auto runner = [&](OpPassManager &pipeline, ModuleOp container) {
    PassManager pm(module.getContext(), pipeline.getOpAnchorName());
    static_cast<OpPassManager &>(pm) = pipeline;
    if (options.configurePassManager &&
        failed(options.configurePassManager(pm)))
      return failure();
    return pm.run(container);
  };
  ExecutorOptions executorOptions;
  executorOptions.jobs = options.jobs;
  std::unique_ptr<ReplayExecutor> executor =
      createReplayExecutor(options.executor, executorOptions);
  ReplayWork work{module, *plan, runner, /*nestInSource=*/false};
  ExecutePlanOptions executeOptions;
  executeOptions.compiledElsewhere.emplace(0, std::move(primary));
  FailureOr<std::vector<VariantResult>> results =
      executePlan(*executor, work, plan->all(), executeOptions);
  plan.reset();
  preBinary = nullptr;
  if (failed(results)) {
    ok = false;
    return;
  }
  for (VariantResult &variant : *results)
    sink(std::move(variant));
}

void ReplayInstrumentation::runAfterPass(Pass *pass, Operation *op) {
  if (pass->getArgument() != kBinaryPass || !plan)
    return;
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return;
  VariantResult primary;
  recordBinaries(primary, module);
  replayBeside(std::move(primary));
}

void ReplayInstrumentation::runAfterPassFailed(Pass *pass, Operation *op) {
  if (pass->getArgument() != kBinaryPass || !plan)
    return;
  VariantResult primary;
  primary.error = "the pipeline's own gpu-module-to-binary failed";
  replayBeside(std::move(primary));
}

} // namespace fly
