//===- fly-opt.cpp - mlir-opt with fly-snapshot built in ------------------===//
//
// mlir-opt's main, the fly passes registered, plus --fly-hints /
// --fly-hints-file / --fly-out-dir, which install the replay instrumentation
// on the pass manager: a normal full pipeline run then yields one variant per
// hint set, with every mlir-opt flag (IR printing, timing, reproducers)
// applying to the replays too.
//
//===----------------------------------------------------------------------===//

#include "fly/Compiler/Registration.h"
#include "fly/Pipeline/ReplayInstrumentation.h"
#include "fly/Replay/Manifest.h"
#include "fly/Replay/Replay.h"
#include "fly/Support/OutputDirectory.h"
#include "fly/Support/ToolOptions.h"
#include "fly/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <mutex>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory flyCategory("fly-snapshot options");
static cl::opt<std::string>
    hintsOpt("fly-hints",
             cl::desc("Hint sets to compile, 'k=v,k=v;k=v': the first goes "
                      "to the pipeline's own gpu-module-to-binary, the others "
                      "are replayed"),
             cl::cat(flyCategory));
static cl::opt<std::string>
    hintsFileOpt("fly-hints-file",
                 cl::desc("JSON list of hint-set objects (after --fly-hints)"),
                 cl::cat(flyCategory));
static cl::opt<std::string>
    outDirOpt("fly-out-dir",
              cl::desc("Write every variant's objects and manifest.json here"),
              cl::cat(flyCategory));
static cl::opt<unsigned>
    jobsOpt("fly-jobs", cl::desc("Variants replayed at once (0: threads)"),
            cl::init(0), cl::cat(flyCategory));
static cl::opt<bool> reuseIsaOpt(
    "fly-reuse-isa",
    cl::desc("One ISA compile for hint sets that share it, then "
             "fly-assemble-isa per variant (byte-identical objects)"),
    cl::init(false));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  fly::registerFlySnapshotPasses();
  DialectRegistry registry;
  fly::registerCompilerDialects(registry);

  auto [inputFile, outputFile] =
      registerAndParseCLIOptions(argc, argv, "fly-opt", registry);

  std::vector<fly::HintSet> hintSets;
  if (!hintsOpt.empty()) {
    auto parsed = fly::parseHintSets(hintsOpt);
    if (!parsed) {
      llvm::errs() << "fly-opt: error: --fly-hints: "
                   << llvm::toString(parsed.takeError()) << "\n";
      return 1;
    }
    hintSets = std::move(*parsed);
  }
  if (!hintsFileOpt.empty()) {
    auto parsed = fly::readHintSetsFile(hintsFileOpt);
    if (!parsed) {
      llvm::errs() << "fly-opt: error: " << llvm::toString(parsed.takeError())
                   << "\n";
      return 1;
    }
    llvm::append_range(hintSets, *parsed);
  }
  if (!outDirOpt.empty() && hintSets.empty()) {
    llvm::errs() << "fly-opt: error: --fly-out-dir needs --fly-hints or "
                    "--fly-hints-file\n";
    return 1;
  }
  if (!outDirOpt.empty())
    if (llvm::Error err = fly::OutputDirectory::check(outDirOpt)) {
      llvm::errs() << "fly-opt: error: --fly-out-dir: "
                   << llvm::toString(std::move(err)) << "\n";
      return 1;
    }

  std::mutex variantsMutex;
  std::vector<fly::VariantResult> variants;
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  MlirOptMainConfig base = config;
  config.setPassPipelineSetupFn([&](PassManager &pm) -> LogicalResult {
    if (failed(base.setupPassPipeline(pm)))
      return failure();
    if (hintSets.empty())
      return success();
    fly::ReplayInstrumentation::Options options;
    std::string jobsNote;
    options.jobs = fly::clampJobs(jobsOpt, &jobsNote);
    if (!jobsNote.empty())
      llvm::errs() << "fly-opt: note: " << jobsNote << "\n";
    options.reuseIsa = reuseIsaOpt;
    // The replays get the same debugging aids as the main pipeline.
    options.configurePassManager = [](PassManager &replayPM) {
      if (failed(applyPassManagerCLOptions(replayPM)))
        return failure();
      applyDefaultTimingPassManagerCLOptions(replayPM);
      return success();
    };
    pm.addInstrumentation(std::make_unique<fly::ReplayInstrumentation>(
        hintSets,
        [&](fly::VariantResult variant) {
          std::lock_guard<std::mutex> lock(variantsMutex);
          variants.push_back(std::move(variant));
        },
        std::move(options)));
    return success();
  });

  std::string errorMessage;
  auto input = openInputFile(inputFile, &errorMessage);
  if (!input) {
    llvm::errs() << "fly-opt: error: " << errorMessage << "\n";
    return 1;
  }
  auto output = openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << "fly-opt: error: " << errorMessage << "\n";
    return 1;
  }
  LogicalResult status =
      MlirOptMain(output->os(), std::move(input), registry, config);
  if (succeeded(status))
    output->keep();

  if (!hintSets.empty()) {
    std::sort(variants.begin(), variants.end(),
              [](const auto &a, const auto &b) { return a.index < b.index; });
    fly::markDuplicates(variants);
    if (variants.size() != hintSets.size()) {
      llvm::errs() << "fly-opt: error: " << variants.size() << " of "
                   << hintSets.size()
                   << " variants were produced; does the pipeline run "
                      "gpu-module-to-binary?\n";
      status = failure();
    }
    if (!outDirOpt.empty()) {
      llvm::json::Object sweep{{"tool", "fly-opt"},
                               {"variant_count",
                                static_cast<int64_t>(variants.size())}};
      if (llvm::Error err =
              fly::writeSweepOutputs(outDirOpt, variants, std::move(sweep))) {
        llvm::errs() << "fly-opt: error: " << llvm::toString(std::move(err))
                     << "\n";
        status = failure();
      }
    }
    for (const fly::VariantResult &variant : variants)
      if (!variant.succeeded()) {
        llvm::errs() << "fly-opt: error: variant " << variant.id
                     << " failed: " << variant.error << "\n";
        status = failure();
      }
  }
  return asMainReturnCode(status);
}
