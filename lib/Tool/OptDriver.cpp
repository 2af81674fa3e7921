//===- OptDriver.cpp - fly-opt's steps around MlirOptMain -----------------===//

#include "fly/Tool/OptDriver.h"
#include "fly/Backend/RocdlSharedCodegen.h"

#include "Pipeline/BinaryOptsInstrumentation.h"
#include "fly/Compiler/Presets.h"
#include "fly/Hints/HintSetSources.h"
#include "fly/Pipeline/ReplayInstrumentation.h"
#include "fly/Replay/Manifest.h"
#include "fly/Support/InstallLocation.h"
#include "fly/Support/OutputDirectory.h"
#include "fly/Support/ToolOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using llvm::StringRef;

namespace fly {

static llvm::Error withContext(StringRef context, llvm::Error err) {
  return llvm::createStringError(context + ": " +
                                 llvm::toString(std::move(err)));
}

llvm::Expected<std::unique_ptr<OptSweep>>
OptSweep::create(OptSweepOptions options) {
  std::unique_ptr<OptSweep> sweep(new OptSweep());
  std::vector<HintSet> &hintSets = sweep->hintSets;
  HintSetSources flags;
  if (!options.hints.empty())
    flags.text = options.hints;
  flags.textName = "--fly-hints";
  flags.file = options.hintsFile;
  auto collected = collectHintSets(flags);
  if (!collected)
    return collected.takeError();
  hintSets = std::move(*collected);
  // A front end that runs fly-opt as its mlir-opt with a fixed command line
  // (FlyDSL's FLYDSL_COMPILE_LLVM_DIR) can still sweep: FLY_HINT_SETS holds
  // extra hint sets (a JSON list or `k=v,k=v;k=v`), FLY_OUT_DIR where they go.
  // The pipeline's own output stays the compile without extra hints.
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("FLY_HINT_SETS");
      env && !StringRef(*env).trim().empty()) {
    HintSetSources variable;
    (StringRef(*env).ltrim().starts_with("[") ? variable.json
                                              : variable.text.emplace()) = *env;
    variable.textName = variable.jsonName = "FLY_HINT_SETS";
    auto parsed = collectHintSets(variable);
    if (!parsed)
      return parsed.takeError();
    if (hintSets.empty())
      hintSets.emplace_back();
    llvm::append_range(hintSets, *parsed);
    sweep->environmentSweep = true;
    if (options.outDir.empty()) {
      std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("FLY_OUT_DIR");
      if (!dir || dir->empty())
        return llvm::createStringError(
            "FLY_HINT_SETS needs FLY_OUT_DIR (or --fly-out-dir): where the "
            "variants go");
      options.outDir = *dir;
    }
  }
  if (!options.outDir.empty() && hintSets.empty())
    return llvm::createStringError(
        "--fly-out-dir needs --fly-hints or --fly-hints-file");
  if (!options.outDir.empty())
    if (llvm::Error err = OutputDirectory::check(options.outDir))
      return withContext("--fly-out-dir", std::move(err));
  if (std::optional<std::string> dir = StageDumper::directoryFromEnvironment())
    sweep->dumper.emplace(*dir);
  sweep->options = std::move(options);
  return std::move(sweep);
}

void OptSweep::install(MlirOptMainConfig &config) {
  baseConfig = config;
  config.setPassPipelineSetupFn(
      [this](PassManager &pm) { return setupPassManager(pm); });
}

LogicalResult OptSweep::setupPassManager(PassManager &pm) {
  if (failed(baseConfig.setupPassPipeline(pm)))
    return failure();
  // opts= flags that ROCDL serialization ignores become IR hints.
  pm.addInstrumentation(std::make_unique<BinaryOptsInstrumentation>());
  if (hintSets.empty())
    return success();
  if (dumper)
    pm.addInstrumentation(dumper->instrument(nullptr));
  ReplayInstrumentation::Options replayOptions;
  std::string jobsNote;
  replayOptions.jobs = clampJobs(options.jobs, &jobsNote);
  if (!jobsNote.empty())
    llvm::errs() << "fly-opt: note: " << jobsNote << "\n";
  replayOptions.reuseIsa = options.reuseIsa;
  // An environment sweep rides along a front end's compile: a hint set
  // that crashes the backend must not take that compile with it.
  replayOptions.executor =
      environmentSweep ? ExecutorKind::Isolated : ExecutorKind::Batch;
  // The replays get the same debugging aids as the main pipeline.
  replayOptions.configurePassManager = [](PassManager &replayPM) {
    if (failed(applyPassManagerCLOptions(replayPM)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(replayPM);
    return success();
  };
  replayOptions.replaysInstrumented = isPassInstrumentationRequested();
  pm.addInstrumentation(std::make_unique<ReplayInstrumentation>(
      hintSets,
      [this](VariantResult variant) {
        // Written after MlirOptMain, once its context is gone.
        keepBinaryIR(variant);
        std::lock_guard<std::mutex> lock(variantsMutex);
        variants.push_back(std::move(variant));
      },
      std::move(replayOptions)));
  return success();
}

LogicalResult OptSweep::finish(LogicalResult status, StringRef inputFile) {
  if (hintSets.empty())
    return status;
  std::sort(variants.begin(), variants.end(),
            [](const auto &a, const auto &b) { return a.index < b.index; });
  if (succeeded(status) && variants.size() != hintSets.size()) {
    llvm::errs() << "fly-opt: error: " << variants.size() << " of "
                 << hintSets.size()
                 << " variants were produced; does the pipeline run "
                    "gpu-module-to-binary?\n";
    status = failure();
  }
  if (dumper)
    for (const VariantResult &variant : variants)
      if (variant.succeeded())
        dumper->write(variant.id + "_gpu-module-to-binary", variant.binaryIR);
  // Nothing is written for a run that produced no variants (a parse or
  // pipeline error): an empty manifest would read as "0 variants, fine".
  if (!options.outDir.empty() && !variants.empty()) {
    SweepHeader header;
    header.tool = "fly-opt";
    header.input = inputFile.str();
    header.binaryPass = variants.front().binaryPass;
    if (llvm::Error err = writeSweepOutputs(options.outDir, variants, header)) {
      llvm::errs() << "fly-opt: error: " << llvm::toString(std::move(err))
                   << "\n";
      status = failure();
    }
  }
  // In an environment sweep a failed extra variant is reported, but the
  // output the front end asked for (variant 0) decides the exit status.
  for (const VariantResult &variant : variants)
    if (!variant.succeeded()) {
      bool fatal = !environmentSweep || variant.index == 0;
      llvm::errs() << "fly-opt: " << (fatal ? "error" : "warning")
                   << ": variant " << variant.id << " failed:\n";
      llvm::SmallVector<StringRef> lines;
      StringRef(variant.error).rtrim().split(lines, '\n');
      for (StringRef line : lines)
        llvm::errs() << "    " << line << "\n";
      if (fatal)
        status = failure();
    }
  return status;
}

void setRocmPathFromToolkit() {
  if (llvm::sys::Process::GetEnv("ROCM_PATH"))
    return;
  std::string toolkit = findToolkit("rocdl", getProgramDir());
  if (!toolkit.empty())
    ::setenv("ROCM_PATH", toolkit.c_str(), /*overwrite=*/0);
}

LogicalResult runMlirOptMain(StringRef tool, StringRef inputFile,
                             StringRef outputFile, DialectRegistry &registry,
                             const MlirOptMainConfig &config) {
  // One compile per process: no later sweep continues a kept state.
  setRocdlKeepForLaterSweeps(false);
  std::string errorMessage;
  auto input = openInputFile(inputFile, &errorMessage);
  if (!input) {
    llvm::errs() << tool << ": error: " << errorMessage << "\n";
    return failure();
  }
  auto output = openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << tool << ": error: " << errorMessage << "\n";
    return failure();
  }
  LogicalResult status =
      MlirOptMain(output->os(), std::move(input), registry, config);
  if (succeeded(status))
    output->keep();
  return status;
}

} // namespace fly
