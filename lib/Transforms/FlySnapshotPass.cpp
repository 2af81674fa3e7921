//===- FlySnapshotPass.cpp - The fly-snapshot pass ------------------------===//

#include "fly/Transforms/Passes.h"

#include "fly/Executor/Executor.h"
#include "fly/Hints/HintSet.h"
#include "fly/Replay/Manifest.h"
#include "fly/Replay/Replay.h"
#include "fly/Snapshot/Snapshot.h"
#include "fly/Support/OutputDirectory.h"

#include "llvm/Support/FormatVariadic.h"

namespace fly {
#define GEN_PASS_DEF_FLYSNAPSHOT
#include "fly/Transforms/Passes.h.inc"
} // namespace fly

using namespace mlir;
using namespace llvm;

namespace {
struct FlySnapshotPass : fly::impl::FlySnapshotBase<FlySnapshotPass> {
  using FlySnapshotBase::FlySnapshotBase;

  void runOnOperation() override;

private:
  FailureOr<std::vector<fly::HintSet>> collectHintSets();
};
} // namespace

FailureOr<std::vector<fly::HintSet>> FlySnapshotPass::collectHintSets() {
  std::vector<fly::HintSet> sets;
  Location loc = getOperation().getLoc();
  if (!hints.empty()) {
    Expected<std::vector<fly::HintSet>> parsed = fly::parseHintSets(hints);
    if (!parsed)
      return emitError(loc) << "fly-snapshot: invalid hints: "
                            << toString(parsed.takeError());
    sets = std::move(*parsed);
  }
  if (!hintsFile.empty()) {
    Expected<std::vector<fly::HintSet>> parsed =
        fly::readHintSetsFile(hintsFile);
    if (!parsed)
      return emitError(loc) << "fly-snapshot: invalid hints file: "
                            << toString(parsed.takeError());
    llvm::append_range(sets, *parsed);
  }
  return sets;
}

void FlySnapshotPass::runOnOperation() {
  ModuleOp module = getOperation();
  // The variants are built and removed again: nothing of the module changes.
  markAllAnalysesPreserved();

  std::optional<fly::SnapshotFormat> format =
      fly::parseSnapshotFormat(snapshotFormat);
  if (!format) {
    emitError(module.getLoc()) << "fly-snapshot: snapshot-format must be 'bytecode' "
                          "or 'text', got '"
                       << snapshotFormat << "'";
    return signalPassFailure();
  }
  if (failed(fly::verifyCheckpointPosition(module, "fly-snapshot")))
    return signalPassFailure();
  FailureOr<std::vector<fly::HintSet>> hintSets = collectHintSets();
  if (failed(hintSets))
    return signalPassFailure();

  // An unusable out-dir is reported before anything compiles.
  if (!outDir.empty())
    if (Error err = fly::OutputDirectory::check(outDir)) {
      emitError(module.getLoc())
          << "fly-snapshot: out-dir: " << toString(std::move(err));
      return signalPassFailure();
    }

  if (!snapshotFile.empty() &&
      failed(fly::writeSnapshot(module, snapshotFile, *format)))
    return signalPassFailure();
  if (hintSets->empty())
    return;

  fly::ReplayPlanOptions planOptions;
  planOptions.reuseIsa = reuseIsa;
  FailureOr<fly::BinaryPassOptions> binaryPassOptions =
      fly::parseBinaryPass(binaryPass, module.getLoc());
  if (failed(binaryPassOptions))
    return signalPassFailure();
  FailureOr<fly::ReplayPlan> plan = fly::buildReplayPlan(
      module, *binaryPassOptions, *hintSets, planOptions);
  if (failed(plan))
    return signalPassFailure();
  fly::ExecutorOptions executorOptions;
  executorOptions.jobs = maxParallel;
  std::unique_ptr<fly::ReplayExecutor> executor = fly::createReplayExecutor(
      isolate ? fly::ExecutorKind::Isolated : fly::ExecutorKind::Batch,
      executorOptions);
  auto runner = [&](OpPassManager &pipeline, ModuleOp container) {
    return runPipeline(pipeline, container);
  };
  fly::ReplayWork work{module, *plan, runner, /*nestInSource=*/true};
  FailureOr<std::vector<fly::VariantResult>> results =
      fly::executePlan(*executor, work, plan->all());
  if (failed(results))
    return signalPassFailure();

  // Write what succeeded before reporting what failed: nothing finished is
  // lost to one bad hint set.
  if (!outDir.empty()) {
    json::Object sweep{{"tool", "fly-snapshot"},
                       {"binary_pass", binaryPass},
                       {"variant_count", static_cast<int64_t>(results->size())}};
    if (Error err = fly::writeSweepOutputs(outDir, *results, std::move(sweep))) {
      emitError(module.getLoc()) << "fly-snapshot: " << toString(std::move(err));
      return signalPassFailure();
    }
  }
  bool anyFailed = false;
  for (const fly::VariantResult &result : *results) {
    if (!result.succeeded()) {
      anyFailed = true;
      emitError(module.getLoc()) << "fly-snapshot: replay of variant '" << result.id
                         << "' (hints '" << result.hints.canonical()
                         << "') failed: " << result.error;
    } else if (result.duplicateOf) {
      emitRemark(module.getLoc()) << "fly-snapshot: variant '" << result.id
                          << "' compiled to the same objects as variant "
                          << *result.duplicateOf
                          << ": this hint set had no effect";
    }
  }
  if (anyFailed)
    signalPassFailure();
}
