//===- fly-opt.cpp - mlir-opt with fly-snapshot built in ------------------===//
//
// mlir-opt's main, the fly passes registered, plus --fly-hints /
// --fly-hints-file / --fly-out-dir, which install the replay instrumentation
// on the pass manager: a normal full pipeline run then yields one variant per
// hint set, with every mlir-opt flag (IR printing, timing, reproducers)
// applying to the replays too. FLY_HINT_SETS / FLY_OUT_DIR add a sweep to
// a fixed command line (installed as an LLVM dir's bin/mlir-opt for FlyDSL),
// and gpu-module-to-binary's opts= flags that ROCDL ignores become IR hints
// (BinaryOptsInstrumentation).
//
//===----------------------------------------------------------------------===//

#include "fly/Compiler/Presets.h"
#include "fly/Compiler/Registration.h"
#include "fly/Pipeline/BinaryOptsInstrumentation.h"
#include "fly/Pipeline/ReplayInstrumentation.h"
#include "fly/Pipeline/StageDumper.h"
#include "fly/Replay/Manifest.h"
#include "fly/Replay/Replay.h"
#include "fly/Support/OutputDirectory.h"
#include "fly/Support/ToolHelp.h"
#include "fly/Support/ToolOptions.h"
#include "fly/Transforms/Passes.h"

#include "UpstreamTestRegistration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"

#include <mutex>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

// fly-opt's own options, listed first by --help (categories print in name
// order); LLVM's static options are behind --help-hidden.
static cl::OptionCategory flyCategory("Fly-snapshot options (fly-opt)");
static cl::opt<std::string>
    hintsOpt("fly-hints",
             cl::desc("Hint sets 'k=v,k=v;k=v': the first goes to the "
                      "pipeline's own gpu-module-to-binary, the others are "
                      "replayed (default: none, plain mlir-opt)"),
             cl::cat(flyCategory));
static cl::opt<std::string>
    hintsFileOpt("fly-hints-file",
                 cl::desc("JSON list of hint-set objects, after --fly-hints "
                          "(default: none)"),
                 cl::cat(flyCategory));
static cl::opt<std::string>
    outDirOpt("fly-out-dir",
              cl::desc("Write every variant's objects and manifest.json here "
                       "(default: none)"),
              cl::cat(flyCategory));
static cl::opt<unsigned>
    jobsOpt("jobs",
            cl::desc("Variants replayed at once (default: 0 = threads)"),
            cl::init(0), cl::cat(flyCategory));
static cl::alias jobsAlias("fly-jobs", cl::desc("Old name of --jobs"),
                           cl::aliasopt(jobsOpt), cl::cat(flyCategory));
static cl::opt<bool>
    reuseIsaOpt("fly-reuse-isa",
                cl::desc("One ISA compile for hint sets that share it, then "
                         "fly-assemble-isa per variant (default: on)"),
                cl::init(true), cl::cat(flyCategory));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // LLVM's static options behind --help-hidden; mlir-opt's, registered by
  // registerAndParseCLIOptions below, stay listed.
  fly::hideUnrelatedOptions({&flyCategory});
  fly::addVersionPrinter();
  registerAllPasses();
  fly::registerUpstreamTestPasses();
  fly::registerFlySnapshotPasses();
  DialectRegistry registry;
  fly::registerCompilerDialects(registry);
  fly::registerUpstreamTestDialects(registry);

  auto [inputFile, outputFile] =
      registerAndParseCLIOptions(argc, argv, "fly-opt", registry);

  // Run as a prefix's bin/mlir-opt, fly-opt gets pipelines without
  // toolkit=; upstream ROCDL serialization then reads ROCM_PATH (default
  // /opt/rocm). Where that is unset, point it at the toolkit fly found.
  if (!llvm::sys::Process::GetEnv("ROCM_PATH")) {
    static int anchor;
    std::string exe = llvm::sys::fs::getMainExecutable(argv[0], &anchor);
    std::string toolkit =
        fly::findToolkit("rocdl", llvm::sys::path::parent_path(exe));
    if (!toolkit.empty())
      ::setenv("ROCM_PATH", toolkit.c_str(), /*overwrite=*/0);
  }

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
  bool envSweep = false;
  // A front end that runs fly-opt as its mlir-opt with a fixed command line
  // (FlyDSL's FLYDSL_COMPILE_LLVM_DIR) can still sweep: FLY_HINT_SETS holds
  // extra hint sets (a JSON list or `k=v,k=v;k=v`), FLY_OUT_DIR where they go.
  // The pipeline's own output stays the compile without extra hints.
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("FLY_HINT_SETS");
      env && !StringRef(*env).trim().empty()) {
    auto parsed = StringRef(*env).ltrim().starts_with("[")
                      ? fly::parseHintSetsJSON(*env)
                      : fly::parseHintSets(*env);
    if (!parsed) {
      llvm::errs() << "fly-opt: error: FLY_HINT_SETS: "
                   << llvm::toString(parsed.takeError()) << "\n";
      return 1;
    }
    if (hintSets.empty())
      hintSets.emplace_back();
    llvm::append_range(hintSets, *parsed);
    envSweep = true;
    if (outDirOpt.empty()) {
      std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("FLY_OUT_DIR");
      if (!dir || dir->empty()) {
        llvm::errs() << "fly-opt: error: FLY_HINT_SETS needs FLY_OUT_DIR (or "
                        "--fly-out-dir): where the variants go\n";
        return 1;
      }
      outDirOpt = *dir;
    }
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

  // FLY_DUMP_IR: every top-level stage, then each variant's gpu.binary.
  std::optional<fly::StageDumper> dumper;
  if (std::optional<std::string> dir =
          fly::StageDumper::directoryFromEnvironment())
    dumper.emplace(*dir);

  std::mutex variantsMutex;
  std::vector<fly::VariantResult> variants;
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  MlirOptMainConfig base = config;
  config.setPassPipelineSetupFn([&](PassManager &pm) -> LogicalResult {
    if (failed(base.setupPassPipeline(pm)))
      return failure();
    // opts= flags that ROCDL serialization ignores become IR hints.
    pm.addInstrumentation(std::make_unique<fly::BinaryOptsInstrumentation>());
    if (hintSets.empty())
      return success();
    if (dumper)
      pm.addInstrumentation(dumper->instrument(nullptr));
    fly::ReplayInstrumentation::Options options;
    std::string jobsNote;
    options.jobs = fly::clampJobs(jobsOpt, &jobsNote);
    if (!jobsNote.empty())
      llvm::errs() << "fly-opt: note: " << jobsNote << "\n";
    options.reuseIsa = reuseIsaOpt;
    // An environment sweep rides along a front end's compile: a hint set
    // that crashes the backend must not take that compile with it.
    options.isolate = envSweep;
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
    if (succeeded(status) && variants.size() != hintSets.size()) {
      llvm::errs() << "fly-opt: error: " << variants.size() << " of "
                   << hintSets.size()
                   << " variants were produced; does the pipeline run "
                      "gpu-module-to-binary?\n";
      status = failure();
    }
    if (dumper)
      for (const fly::VariantResult &variant : variants)
        if (variant.succeeded())
          dumper->write(variant.id + "_gpu-module-to-binary", variant.binaryIR);
    // Nothing is written for a run that produced no variants (a parse or
    // pipeline error): an empty manifest would read as "0 variants, fine".
    if (!outDirOpt.empty() && !variants.empty()) {
      fly::SweepHeader header;
      header.tool = "fly-opt";
      header.input = inputFile;
      header.binaryPass = variants.front().binaryPass;
      if (llvm::Error err =
              fly::writeSweepOutputs(outDirOpt, variants, header)) {
        llvm::errs() << "fly-opt: error: " << llvm::toString(std::move(err))
                     << "\n";
        status = failure();
      }
    }
    // In an environment sweep a failed extra variant is reported, but the
    // output the front end asked for (variant 0) decides the exit status.
    for (const fly::VariantResult &variant : variants)
      if (!variant.succeeded()) {
        bool fatal = !envSweep || variant.index == 0;
        llvm::errs() << "fly-opt: " << (fatal ? "error" : "warning")
                     << ": variant " << variant.id << " failed:\n";
        llvm::SmallVector<llvm::StringRef> lines;
        llvm::StringRef(variant.error).rtrim().split(lines, '\n');
        for (llvm::StringRef line : lines)
          llvm::errs() << "    " << line << "\n";
        if (fatal)
          status = failure();
      }
  }
  return asMainReturnCode(status);
}
