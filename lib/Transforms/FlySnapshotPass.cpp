//===- FlySnapshotPass.cpp - The fly-snapshot pass ------------------------===//

#include "fly/Transforms/Passes.h"

#include "Hints/HintSetLimit.h"
#include "fly/Executor/Executor.h"
#include "fly/Hints/BackendOpts.h"
#include "fly/Hints/HintSet.h"
#include "fly/Hints/HintSetSources.h"
#include "fly/Pipeline/StageDumper.h"
#include "fly/Replay/BinaryPass.h"
#include "fly/Replay/Manifest.h"
#include "fly/Replay/Replay.h"
#include "fly/Snapshot/Snapshot.h"
#include "fly/Support/OutputDirectory.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/CommandLine.h"
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
  FailureOr<fly::BinaryPassOptions> resolveBinaryPass();
};
} // namespace

/// The options of the pass after fly-snapshot in mlir-opt's
/// --pass-pipeline, if that is a gpu-module-to-binary; nullopt when it
/// cannot be known (no --pass-pipeline, e.g. a reproducer or per-pass
/// flags). A pass cannot see the pipeline it runs in: the registered
/// --pass-pipeline option is the only place a plugin finds its next pass.
static std::optional<FailureOr<fly::BinaryPassOptions>>
findNextBinaryPass(Location loc) {
  auto &options = cl::getRegisteredOptions();
  auto it = options.find("pass-pipeline");
  if (it == options.end() || !it->second->getNumOccurrences())
    return std::nullopt;
  // mlir-opt registers it as a cl::opt<std::string> (PassPipelineCLParser).
  const std::string &text =
      static_cast<cl::opt<std::string> *>(it->second)->getValue();
  std::string ignored;
  raw_string_ostream os(ignored);
  FailureOr<OpPassManager> pipeline = parsePassPipeline(text, os);
  if (failed(pipeline))
    return std::nullopt;
  bool afterUs = false;
  for (Pass &pass : pipeline->getPasses()) {
    if (afterUs) {
      if (pass.getArgument() != "gpu-module-to-binary")
        return std::nullopt;
      return fly::readBinaryPassOptions(pass, loc);
    }
    afterUs = pass.getArgument() == "fly-snapshot";
  }
  return std::nullopt;
}

/// The binary pass to replay: `binary-pass` if given, else the pipeline's
/// own next pass (so its toolkit and format are not forgotten). A given
/// `binary-pass` that differs from the next pass is said.
FailureOr<fly::BinaryPassOptions> FlySnapshotPass::resolveBinaryPass() {
  Location loc = getOperation().getLoc();
  if (!binaryPass.hasValue()) {
    if (std::optional<FailureOr<fly::BinaryPassOptions>> next =
            findNextBinaryPass(loc))
      return *next;
    return fly::parseBinaryPass(binaryPass, loc);
  }
  FailureOr<fly::BinaryPassOptions> given =
      fly::parseBinaryPass(binaryPass, loc);
  if (failed(given))
    return failure();
  std::optional<FailureOr<fly::BinaryPassOptions>> next;
  {
    // A next pass that does not read fails in the pipeline's own run.
    ScopedDiagnosticHandler quiet(&getContext(),
                                  [](Diagnostic &) { return success(); });
    next = findNextBinaryPass(loc);
  }
  if (next && succeeded(*next) && !fly::isSameBinaryPass(*given, **next))
    emitWarning(loc) << "fly-snapshot: binary-pass '"
                     << fly::printBinaryPass(*given)
                     << "' differs from the pipeline's next pass '"
                     << fly::printBinaryPass(**next)
                     << "': the variants are not compiled as the pipeline's "
                        "own gpu-module-to-binary (leave binary-pass out to "
                        "use the next pass's options)";
  return given;
}

/// `text` with every line indented, to sit under the message it explains.
static std::string indentLines(StringRef text) {
  std::string out;
  SmallVector<StringRef> lines;
  text.rtrim().split(lines, '\n');
  for (StringRef line : lines)
    out += ("    " + line + "\n").str();
  return StringRef(out).rtrim().str();
}

FailureOr<std::vector<fly::HintSet>> FlySnapshotPass::collectHintSets() {
  Location loc = getOperation().getLoc();
  fly::HintSetSources sources;
  if (!hints.empty())
    sources.text = hints;
  sources.textName = "invalid hints";
  sources.file = hintsFile;
  sources.fileName = "invalid hints file";
  Expected<std::vector<fly::HintSet>> collected = fly::collectHintSets(sources);
  if (!collected)
    return emitError(loc) << "fly-snapshot: "
                          << toString(collected.takeError());
  std::vector<fly::HintSet> sets = std::move(*collected);
  if (Error err = fly::checkHintSetCount(sets.size()))
    return emitError(loc) << "fly-snapshot: " << toString(std::move(err));
  return sets;
}

void FlySnapshotPass::runOnOperation() {
  ModuleOp module = getOperation();
  // The variants are built and removed again: nothing of the module changes.
  markAllAnalysesPreserved();

  std::optional<fly::SnapshotFormat> format =
      fly::parseSnapshotFormat(snapshotFormat);
  if (!format) {
    emitError(module.getLoc())
        << "fly-snapshot: snapshot-format must be 'bytecode' "
           "or 'text', got '"
        << snapshotFormat << "'";
    return signalPassFailure();
  }
  // The options are checked before the module: a bad hints file is the
  // error whatever the module is.
  std::optional<fly::ExecutorKind> executorKind =
      fly::parseExecutorKind(executor);
  if (!executorKind || (*executorKind != fly::ExecutorKind::Batch &&
                        *executorKind != fly::ExecutorKind::Isolated)) {
    emitError(module.getLoc())
        << "fly-snapshot: executor must be batch or isolated inside a pass, "
           "got '"
        << executor << "' (process: fly-tune --executor=process, or the C "
        << "API / Python \"executor\")";
    return signalPassFailure();
  }
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
  if (failed(fly::verifyCheckpointPosition(module, "fly-snapshot")))
    return signalPassFailure();

  if (!snapshotFile.empty() &&
      failed(fly::writeSnapshot(module, snapshotFile, *format)))
    return signalPassFailure();
  if (hintSets->empty()) {
    emitWarning(module.getLoc())
        << "fly-snapshot: no hints given (hints= or hints-file=), so no "
           "variant is replayed"
        << (snapshotFile.empty() ? "" : "; the snapshot-file is written");
    return;
  }

  // FLY_DUMP_IR: the checkpoint, then each variant's gpu.binary.
  std::optional<fly::StageDumper> dumper;
  if (std::optional<std::string> dir =
          fly::StageDumper::directoryFromEnvironment()) {
    dumper.emplace(*dir);
    if (dumper->select(module))
      dumper->write("fly-snapshot_checkpoint", module);
  }

  FailureOr<fly::BinaryPassOptions> binaryPassOptions = resolveBinaryPass();
  if (failed(binaryPassOptions))
    return signalPassFailure();
  fly::ReplayPlanOptions planOptions;
  planOptions.reuseIsa = reuseIsa;
  planOptions.variantTimeoutSeconds = variantTimeout;
  // runPipeline hands the replays this pass manager's instrumentation.
  planOptions.replaysInstrumented =
      getAnalysisManager().getPassInstrumentor() != nullptr;
  fly::diagnoseBinaryOpts(binaryPassOptions->cmdOptions,
                          fly::getTargetedGpuModules(module), module.getLoc());
  FailureOr<fly::ReplayPlan> plan =
      fly::buildReplayPlan(module, *binaryPassOptions, *hintSets, planOptions);
  if (failed(plan))
    return signalPassFailure();
  // Without out-dir= (or FLY_DUMP_IR's dumps) the variants are compiled and
  // only their errors and duplicates reported: say so before the work.
  if (outDir.empty() && !dumper)
    emitWarning(module.getLoc())
        << "fly-snapshot: no out-dir= given: " << hintSets->size() << " variant"
        << (hintSets->size() == 1 ? "" : "s")
        << " will be compiled and discarded (give out-dir=<dir> to keep "
           "them)";
  fly::ExecutorOptions executorOptions;
  executorOptions.jobs = jobs;
  std::unique_ptr<fly::ReplayExecutor> replayExecutor =
      fly::createReplayExecutor(*executorKind, executorOptions);
  auto runner = [&](OpPassManager &pipeline, ModuleOp container) {
    return runPipeline(pipeline, container);
  };
  fly::ReplayWork work{module, *plan, runner, /*nestInSource=*/true};
  FailureOr<std::vector<fly::VariantResult>> results =
      fly::executePlan(*replayExecutor, work, plan->all());
  if (failed(results))
    return signalPassFailure();

  // Write what succeeded before reporting what failed: nothing finished is
  // lost to one bad hint set.
  if (dumper)
    for (const fly::VariantResult &result : *results)
      if (result.succeeded())
        dumper->write(result.id + "_gpu-module-to-binary",
                      fly::printBinaryIR(result));
  if (!outDir.empty()) {
    fly::SweepHeader header;
    header.tool = "fly-snapshot";
    if (auto file = dyn_cast<FileLineColLoc>(module.getLoc()))
      header.input = file.getFilename().str();
    header.binaryPass = fly::printBinaryPass(*binaryPassOptions);
    if (Error err = fly::writeSweepOutputs(outDir, *results, header)) {
      emitError(module.getLoc())
          << "fly-snapshot: " << toString(std::move(err));
      return signalPassFailure();
    }
  }
  bool anyFailed = false;
  for (const fly::VariantResult &result : *results) {
    if (!result.succeeded()) {
      anyFailed = true;
      emitError(module.getLoc())
          << "fly-snapshot: replay of variant '" << result.id << "' (hints '"
          << result.hints.canonical() << "') failed:\n"
          << indentLines(result.error);
    } else if (result.duplicateOf) {
      // A copy (replay time 0) was never compiled.
      emitRemark(module.getLoc())
          << "fly-snapshot: variant '" << result.id
          << "' makes the same objects as variant " << *result.duplicateOf
          << (result.replayMs == 0 ? " (copied, not compiled)" : "")
          << ": this hint set had no effect";
    }
  }
  if (anyFailed)
    signalPassFailure();
}
