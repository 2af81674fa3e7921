//===- fly-tune.cpp - Compile one kernel under many hint sets -------------===//
//
//   fly-tune kernel.mlir --target=rocdl:gfx942 --hints-file=h.json
//
// runs the pipeline's prefix once (or loads it from the compile cache), the
// binary pass once per hint set in parallel, prints a table and writes every
// variant plus manifest.json to --out-dir. With no input it tunes the bundled
// example. A thin shell over fly::SplitCompiler.
//
//===----------------------------------------------------------------------===//

#include "fly/Cache/CacheKey.h"
#include "fly/Compiler/Presets.h"
#include "fly/Compiler/Registration.h"
#include "fly/Compiler/SplitCompiler.h"
#include "fly/Compiler/SweepReport.h"
#include "fly/Compiler/TargetName.h"
#include "fly/Executor/WorkDir.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/TargetChips.h"
#include "fly/Pipeline/TargetPresets.h"
#include "fly/Replay/Manifest.h"
#include "fly/Replay/SweepTable.h"
#include "fly/Support/OutputDirectory.h"
#include "fly/Support/SafeFile.h"
#include "fly/Support/ToolHelp.h"
#include "fly/Support/ToolOptions.h"
#include "fly/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <cmath>

#include "BundledExample.inc"
#include "SlurmOptions.h"

using namespace mlir;
namespace cl = llvm::cl;
using llvm::StringRef;

// fly-tune's own options, shown first by --help; LLVM's and the --mlir-*
// pass-manager flags (which apply to both phases) are behind --help-hidden.
static cl::OptionCategory tuneCategory("Fly-tune options");
static cl::list<std::string>
    inputsOpt(cl::Positional,
              cl::desc("<kernel.mlir>... (default: the bundled example; "
                       "several are one sweep, each kernel's outputs in "
                       "<out-dir>/<its stem>)"),
              cl::cat(tuneCategory));
static cl::opt<std::string> targetOpt(
    "target",
    cl::desc("rocdl:<gfxNNN> or nvvm:<sm_NN> (default: rocdl:gfx942)"),
    cl::value_desc("family:chip"), cl::init("rocdl:gfx942"),
    cl::cat(tuneCategory));
static cl::opt<std::string>
    hintsOpt("hints",
             cl::desc("Hint sets 'k=v,k=v;k=v', or a product 'k=v1,v2 x "
                      "k=v1,v2'; '' = the backend's default alone, as in the "
                      "C API (default: the bundled 8 sets "
                      "on rocdl, maxnreg=128/64/32 on nvvm)"),
             cl::value_desc("sets"), cl::cat(tuneCategory));
static cl::opt<std::string>
    hintsFileOpt("hints-file",
                 cl::desc("JSON list of hint-set objects (an object of lists: "
                          "their product), after --hints "
                          "(default: none)"),
                 cl::value_desc("file.json"), cl::cat(tuneCategory));
static cl::opt<std::string> pipelineOpt(
    "pipeline",
    cl::desc("Full pipeline, gpu-module-to-binary included (default: the "
             "target's lowering preset)"),
    cl::cat(tuneCategory));
static cl::opt<std::string> toolkitOpt(
    "toolkit",
    cl::desc("ROCm-shaped folder or CUDA toolkit for gpu-module-to-binary "
             "(default: found)"),
    cl::value_desc("dir"), cl::cat(tuneCategory));
static cl::opt<std::string>
    formatOpt("format",
              cl::desc("Object format: bin, fatbin, isa, llvm (default: "
                       "fatbin on rocdl, bin on nvvm)"),
              cl::init(""), cl::cat(tuneCategory));
static cl::opt<unsigned>
    jobsOpt("jobs",
            cl::desc("Variants compiled at once (default: 0 = hardware "
                     "threads)"),
            cl::init(0), cl::cat(tuneCategory));
static cl::opt<std::string>
    outDirOpt("out-dir",
              cl::desc("Where the variants and manifest.json go (default: "
                       "fly-tune-out)"),
              cl::value_desc("dir"), cl::init("fly-tune-out"),
              cl::cat(tuneCategory));
static cl::opt<bool>
    noCacheOpt("no-cache",
               cl::desc("Do not read or write the compile cache (default: "
                        "off; see FLY_ENABLE_CACHE)"),
               cl::cat(tuneCategory));
static cl::opt<bool> explainCacheOpt(
    "explain-cache",
    cl::desc("Say which key part changed on a cache miss (default: off)"),
    cl::cat(tuneCategory));
static cl::opt<bool> quietOpt("quiet",
                              cl::desc("No progress lines (default: off)"),
                              cl::cat(tuneCategory));
static cl::opt<std::string> benchOpt(
    "bench",
    cl::desc("Then run every variant on the GPU with fly-run and this launch "
             "spec; no value: the bundled example's (default: off)"),
    cl::value_desc("launch.json"), cl::ValueOptional, cl::cat(tuneCategory));
static cl::opt<bool> requireGpuOpt(
    "require-gpu",
    cl::desc("With --bench: no GPU is an error, exit 77 (default: off, the "
             "benchmark is skipped)"),
    cl::cat(tuneCategory));
static cl::opt<bool>
    retuneOpt("retune",
              cl::desc("With --bench: measure again even if a stored winner "
                       "matches (default: off)"),
              cl::cat(tuneCategory));
static cl::opt<std::string> executorOpt(
    "executor",
    cl::desc("Where variants compile: batch (in process), isolated (a crash "
             "fails only its variant), process (child processes) or slurm "
             "(a Slurm job array, see the Slurm options) (default: "
             "isolated)"),
    cl::init("isolated"), cl::cat(tuneCategory));
// Rejected with a pointer: --executor is the one name.
static cl::opt<std::string> isolateOpt("isolate",
                                       cl::desc("Removed: use --executor"),
                                       cl::ValueOptional, cl::Hidden);
static cl::opt<std::string> runPlanOpt(
    "run-plan",
    cl::desc("Child mode: replay --entries of the plan in this work "
             "directory (snapshot.mlirbc, plan.json) into its results/"),
    cl::value_desc("work-dir"), cl::Hidden);
static cl::opt<std::string> writePlanOpt(
    "write-plan",
    cl::desc("Also write the snapshot and the replay plan into this "
             "directory, for `fly-tune --run-plan=<dir> --entries=...` in "
             "another process or on another machine"),
    cl::value_desc("dir"));
static cl::opt<std::string>
    entriesOpt("entries", cl::desc("With --run-plan: e.g. 0-7,12"), cl::Hidden);
static cl::opt<unsigned> variantTimeoutOpt(
    "variant-timeout",
    cl::desc("Seconds one variant may compile before it fails naming the "
             "limit; 0 = none (default: FLY_VARIANT_TIMEOUT, else 600). "
             "Enforced on every variant by --executor=process, on ptxas by "
             "the in-process executors"),
    cl::value_desc("s"), cl::cat(tuneCategory));
static cl::opt<double> timeBudgetOpt(
    "time-budget",
    cl::desc("Seconds of compiling after which no new variant starts; the "
             "rest are listed as skipped (default: 0 = none)"),
    cl::value_desc("s"), cl::init(0), cl::cat(tuneCategory));
static cl::opt<bool> reuseIsaOpt(
    "reuse-isa",
    cl::desc("One ISA compile for hint sets that share it (default: on)"),
    cl::init(true), cl::cat(tuneCategory));

static cl::opt<bool> bestAllowNumericsOpt(
    "best-allow-numerics-changes",
    cl::desc("The best row may be a hint set that can change results, "
             "e.g. fast or unsafe math (default: off; such rows say "
             "'numerics')"),
    cl::cat(tuneCategory));

/// The family whose target a user pipeline attaches, or else the one the
/// input's gpu.modules name (#nvvm.target / #rocdl.target); none if neither
/// or both. Only the defaults depend on it: the pipeline says the rest.
static std::optional<StringRef> pipelineFamily(StringRef pipeline,
                                               StringRef source) {
  auto pick = [](bool nvvm, bool rocdl) -> std::optional<StringRef> {
    if (nvvm == rocdl)
      return std::nullopt;
    return nvvm ? StringRef("nvvm") : StringRef("rocdl");
  };
  if (std::optional<StringRef> family =
          pick(pipeline.contains("nvvm-attach-target") ||
                   pipeline.contains("gpu-lower-to-nvvm-pipeline"),
               pipeline.contains("rocdl-attach-target")))
    return family;
  return pick(source.contains("#nvvm.target"),
              source.contains("#rocdl.target"));
}

static std::string toolDir(const char *argv0) {
  static int anchor;
  return llvm::sys::path::parent_path(
             llvm::sys::fs::getMainExecutable(argv0, &anchor))
      .str();
}

/// fly-run's exit status when it finds no GPU (the automake "skip" code).
static constexpr int kNoDeviceStatus = 77;

/// Hands the variants to fly-run, which sits beside fly-tune and links no
/// LLVM: the GPU step is the same whether it runs here or on another
/// machine. Returns `status`, or fly-run's if worse; no GPU skips the
/// benchmark unless --require-gpu.
static int runBench(const char *argv0, StringRef spec, int status) {
  llvm::SmallString<256> flyRun(toolDir(argv0));
  llvm::sys::path::append(flyRun, "fly-run");
  if (!llvm::sys::fs::can_execute(flyRun)) {
    llvm::WithColor::error(llvm::errs(), "fly-tune")
        << "--bench needs fly-run beside fly-tune (" << flyRun << ")\n";
    return 1;
  }
  llvm::SmallVector<StringRef> args = {flyRun, outDirOpt, spec};
  if (retuneOpt)
    args.push_back("--retune");
  if (quietOpt)
    args.push_back("--quiet");
  llvm::outs().flush();
  std::string error;
  int benchStatus =
      llvm::sys::ExecuteAndWait(flyRun, args, std::nullopt, {}, 0, 0, &error);
  if (benchStatus < 0) {
    llvm::WithColor::error(llvm::errs(), "fly-tune")
        << "cannot run fly-run: " << error << "\n";
    return 1;
  }
  if (benchStatus == kNoDeviceStatus && !requireGpuOpt) {
    llvm::errs() << "fly-tune: benchmark skipped: no GPU (the variants are "
                    "compiled; --require-gpu makes this an error)\n";
    return status;
  }
  return benchStatus != 0 ? benchStatus : status;
}

/// Whether an --mlir-print-ir-* flag was given: they print nothing for
/// passes that a cache hit skips.
static bool irPrintingRequested() {
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (name.starts_with("mlir-print-ir-") && option->getNumOccurrences())
      return true;
  return false;
}

/// "1 variant", "2 variants".
static std::string count(size_t n, StringRef noun) {
  return std::to_string(n) + " " + noun.str() + (n == 1 ? "" : "s");
}

/// Prints `text` with every line indented under a heading.
static void printIndented(llvm::raw_ostream &os, StringRef text) {
  llvm::SmallVector<StringRef> lines;
  text.rtrim().split(lines, '\n');
  for (StringRef line : lines)
    os << "    " << line << "\n";
}

/// The job for `input` ("" = the bundled example) with `hintSets`: its
/// source (in `sourceMgr` for diagnostics) and pipeline (the target's
/// preset, fitted to the input, or --pipeline). Nullopt after an error was
/// reported.
static std::optional<fly::CompileJob>
buildJob(StringRef input, std::vector<fly::HintSet> hintSets,
         const fly::TargetSpec &target, bool familyFromPipeline,
         const std::string &toolkit, MLIRContext &context,
         llvm::SourceMgr &sourceMgr, std::string &presetNote) {
  auto fail = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "fly-tune") << msg << "\n";
    return std::nullopt;
  };
  StringRef family = target.family;
  fly::CompileJob job;
  job.hintSets = std::move(hintSets);
  // Only a preset's label: the source and pipeline, which the key hashes,
  // say what a --pipeline targets.
  job.chip = pipelineOpt.empty() ? std::string(targetOpt) : "";
  if (input.empty()) {
    job.source = kBundledKernel;
    job.sourceName = "<bundled tile_matmul.mlir>";
  } else {
    // A regular file only: a FIFO or device would hang or never end.
    auto buffer = fly::readRegularFile(input, /*maxBytes=*/1ull << 30);
    if (!buffer)
      return fail(llvm::toString(buffer.takeError()));
    job.source = (*buffer)->getBuffer().str();
    job.sourceName = input.str();
  }
  // Diagnostics in a file read it again themselves (SourceMgrDiagnostic-
  // Handler loads a location's file on demand): a second copy of a big input
  // is not held for the whole sweep.
  if (input.empty())
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(job.source, job.sourceName),
        llvm::SMLoc());

  presetNote = "--pipeline";
  if (!pipelineOpt.empty()) {
    job.pipeline = pipelineOpt;
    // --toolkit reaches a binary pass without toolkit=, and so does the one
    // found when the pipeline's family is known (--target given, the
    // pipeline's own, or $FLY_ROCM_TOOLKIT, which names a ROCm toolkit).
    if (!toolkitOpt.empty() || targetOpt.getNumOccurrences() ||
        familyFromPipeline ||
        (family == "rocdl" && llvm::sys::Process::GetEnv("FLY_ROCM_TOOLKIT")))
      job.defaultToolkit = toolkit;
    return job;
  }
  // The preset fits the input: host code or not, targets or not.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      job.source, ParserConfig(&context), job.sourceName);
  if (!module)
    return std::nullopt;
  // A target the input names for itself wins over the preset's lowering:
  // --target's family must be its family, or every variant fails in the
  // wrong backend.
  WalkResult mismatch = module->walk([&](gpu::GPUModuleOp gpuModule) {
    for (Attribute attr : gpuModule.getTargetsAttr()
                              ? gpuModule.getTargetsAttr().getValue()
                              : ArrayRef<Attribute>()) {
      StringRef own = fly::stringifyTargetFamily(fly::getTargetFamily(attr));
      if (own == family)
        continue;
      InFlightDiagnostic diag = emitError(gpuModule.getLoc())
                                << "gpu.module @" << gpuModule.getName()
                                << " targets " << attr << " (" << own
                                << "), but --target=" << targetOpt
                                << " lowers for " << family;
      diag.attachNote() << "pass --target=" << own
                        << ":<chip> (the chip of the attribute) or drop "
                           "the target attribute and let --target attach "
                           "one";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (mismatch.wasInterrupted())
    return std::nullopt;
  fly::InputShape shape = fly::inspectInput(*module);
  std::string format = formatOpt;
  if (format.empty())
    format = family == "rocdl" ? "fatbin" : "bin";
  std::string features = fly::getPresetFeatures(target, toolkit);
  fly::PresetOptions preset{family, target.chip, format, toolkit, features};
  job.pipeline = fly::buildPresetPipeline(preset, shape);
  presetNote =
      "preset " + targetOpt + ": " + fly::describePreset(preset, shape);
  return job;
}

/// Prints the table of one kernel's sweep and writes its variants and
/// manifest.json into `outDir`. Returns the exit status: 1 if every variant
/// failed, 2 if some did, else 0.
static int reportKernel(const fly::CompileJob &job, fly::CompileResult &result,
                        StringRef outDir) {
  auto fail = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "fly-tune") << msg << "\n";
    return 1;
  };
  for (const std::string &warning : result.warnings)
    llvm::WithColor::warning(llvm::errs(), "fly-tune") << warning << "\n";
  if (result.prefixFromCache && irPrintingRequested())
    llvm::WithColor::warning(llvm::errs(), "fly-tune")
        << "phase 1 came from the compile cache, so no prefix passes ran and "
           "--mlir-print-ir-* printed nothing for them (cached variants "
           "neither); --no-cache or FLY_ALWAYS_COMPILE=1 runs them\n";

  // Table.
  llvm::outs() << llvm::formatv(
      "\nphase 1: {0} ({1:f1} ms); phase 2: {2:f1} ms; total {3:f1} ms\n",
      result.prefixFromCache ? "from cache" : "compiled", result.prefixMs,
      result.replayMs, result.totalMs);
  if (explainCacheOpt && !result.prefixFromCache)
    llvm::outs() << "cache miss: "
                 << (result.cacheExplanation.empty()
                         ? std::string("cache disabled")
                         : result.cacheExplanation)
                 << "\n";
  fly::printSweepTable(llvm::outs(), result.variants, result.variantFromCache,
                       bestAllowNumericsOpt);

  fly::SweepHeader header = fly::getSweepHeader("fly-tune", job, result);
  header.target = llvm::join(result.targets, ",");
  header.targets = result.targets;
  header.bestAllowsNumericsChanges = bestAllowNumericsOpt;
  if (pipelineOpt.empty())
    header.preset = std::string(targetOpt);
  // The host module with the default variant's binaries, after the suffix:
  // written when there is host code (a kernel-only module is just the
  // gpu.binary ops of <id>.mlir).
  std::vector<std::pair<std::string, std::string>> extraFiles;
  if (result.mainModule &&
      llvm::any_of(result.mainModule->getBody()->getOperations(),
                   [](Operation &op) { return !isa<gpu::BinaryOp>(op); })) {
    std::string text;
    llvm::raw_string_ostream os(text);
    result.mainModule->print(os);
    os << "\n";
    extraFiles.push_back({"main.mlir", std::move(text)});
    header.mainModule = "main.mlir";
  }
  if (llvm::Error err =
          fly::writeSweepOutputs(outDir, result.variants, header, extraFiles))
    return fail(llvm::toString(std::move(err)));
  std::vector<std::string> skipped;
  for (const fly::VariantResult &v : result.variants)
    if (v.skipped)
      skipped.push_back(v.id);
  if (!skipped.empty())
    llvm::errs()
        << "fly-tune: the time budget of "
        << (timeBudgetOpt == std::floor(timeBudgetOpt)
                ? std::to_string(static_cast<long long>(timeBudgetOpt))
                : llvm::formatv("{0:f2}", timeBudgetOpt.getValue()).str())
        << " s was spent: skipped " << count(skipped.size(), "variant") << ": "
        << llvm::join(skipped, ", ") << "\n";
  // The whole cause (a ptxas log, say), under the variant it belongs to;
  // when all failed, the first one's (the others are in the manifest).
  auto printFailures = [&](bool firstOnly) {
    llvm::outs().flush();
    for (const fly::VariantResult &v : result.variants) {
      if (v.succeeded() || v.skipped)
        continue;
      llvm::errs() << "fly-tune: variant " << v.id << " failed:\n";
      printIndented(llvm::errs(), v.error);
      if (firstOnly)
        return;
    }
  };
  if (result.numFailed() == result.variants.size()) {
    printFailures(/*firstOnly=*/true);
    llvm::errs() << "fly-tune: error: all "
                 << count(result.variants.size(), "variant") << " failed; "
                 << outDir << "/manifest.json lists their errors\n";
    return 1;
  }
  // Only what compiled was written: a failed variant has no objects.
  size_t written = result.variants.size() - result.numFailed();
  llvm::outs() << "\nwrote " << count(written, "variant");
  if (result.numFailed())
    llvm::outs() << " (" << result.numFailed() << " failed)";
  llvm::outs() << " and " << outDir << "/manifest.json\n";
  if (unsigned failed = result.numFailed()) {
    printFailures(/*firstOnly=*/false);
    llvm::errs() << "fly-tune: partial: " << failed << " of "
                 << count(result.variants.size(), "variant") << " failed\n";
    return 2;
  }
  return 0;
}

/// <outDir>/sweep.json: per kernel of a local sweep, its input, folder and
/// each variant's id, hint set and status; results are keyed by (kernel,
/// hint set).
static llvm::Error
writeSweepIndex(StringRef outDir, llvm::ArrayRef<fly::SweepKernel> kernels,
                llvm::ArrayRef<mlir::FailureOr<fly::CompileResult>> results) {
  llvm::json::Array list;
  for (auto [kernel, result] : llvm::zip(kernels, results)) {
    llvm::json::Object entry{{"kernel", kernel.input}, {"dir", kernel.stem}};
    if (failed(result)) {
      entry["status"] = "failed";
      list.push_back(std::move(entry));
      continue;
    }
    llvm::json::Array variants;
    for (const fly::VariantResult &v : result->variants)
      variants.push_back(
          llvm::json::Object{{"id", v.id},
                             {"hints", v.hints.toJSON()},
                             {"status", v.succeeded() ? "ok"
                                        : v.skipped   ? "skipped"
                                                      : "failed"}});
    entry["status"] = "ok";
    entry["variants"] = std::move(variants);
    list.push_back(std::move(entry));
  }
  llvm::SmallString<256> path(outDir);
  llvm::sys::path::append(path, "sweep.json");
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"kernels", std::move(list)}}))
       << "\n";
    return llvm::Error::success();
  });
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Before anything else registers options: these are LLVM's and the
  // linked libraries' static ones, shown by --help-hidden only.
  fly::hideUnrelatedOptions({&tuneCategory, &fly::getSlurmOptionCategory()});
  // They reach the compile as typed inputs, if at all (-o, -j do not).
  fly::excludeFromCacheKey(tuneCategory);
  fly::addVersionPrinter();
  registerAllPasses();
  // fly's own passes too: replays run fly-assemble-isa, which
  // --mlir-print-ir-after= and crash reproducers name.
  fly::registerFlySnapshotPasses();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // The --mlir-* flags just registered apply to both phases; --help lists
  // fly-tune's own and the Slurm executor's.
  fly::hideUnrelatedOptions({&tuneCategory, &fly::getSlurmOptionCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "fly-tune: compile one GPU kernel under many backend hint sets, "
      "running everything before gpu-module-to-binary once.\n"
      "  The --mlir-* pass-manager flags apply to both phases "
      "(--help-hidden lists them).\n"
      "  Environment: FLY_CACHE_DIR, FLY_ENABLE_CACHE, FLY_DUMP_IR, ... "
      "(README.md).\n");
  auto fail = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "fly-tune") << msg << "\n";
    return 1;
  };

  if (!runPlanOpt.empty()) {
    // The process executor's child: no table, no out-dir, results into the
    // work directory.
    DialectRegistry registry;
    fly::registerCompilerDialects(registry);
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    if (jobsOpt <= 1)
      context.disableMultithreading();
    return failed(fly::replayWorkDirEntries(
               runPlanOpt, entriesOpt, context, jobsOpt,
               [&](OpPassManager &pipeline, ModuleOp container) {
                 PassManager pm(&context, pipeline.getOpAnchorName());
                 static_cast<OpPassManager &>(pm) = pipeline;
                 return pm.run(container);
               }))
               ? 1
               : 0;
  }
  // slurm: the process executor's children as a Slurm job array
  // (SlurmOptions.h); several inputs go into one array.
  if (isolateOpt.getNumOccurrences())
    return fail("--isolate was removed: --executor=batch runs in this process, "
                "--executor=isolated (the default) under crash recovery");
  bool slurm = executorOpt == "slurm";
  std::optional<fly::ExecutorKind> executor =
      slurm ? fly::ExecutorKind::Process : fly::parseExecutorKind(executorOpt);
  if (!executor)
    return fail("--executor must be batch, isolated, process or slurm, got '" +
                executorOpt + "'");
  auto progress = [](StringRef line) {
    if (!quietOpt)
      llvm::errs() << "fly-tune: " << line << "\n";
  };
  bool several = inputsOpt.size() > 1 || fly::slurmSweepFileGiven();
  if (several && slurm) {
    fly::CacheConfig cache = fly::CacheConfig::fromEnvironment();
    return fly::runSlurmSweepCommand(
        argc, argv, inputsOpt, outDirOpt,
        cache.enabled && !noCacheOpt ? cache.directory : "", progress);
  }
  // The kernels: one input (or the bundled example), or several inputs and
  // the sweep file's, each checked before anything compiles.
  std::vector<fly::SweepKernel> kernels;
  if (several) {
    auto read = fly::readSweepKernels(inputsOpt);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    kernels = std::move(*read);
    if (benchOpt.getNumOccurrences())
      return fail("--bench runs one kernel's variants; run fly-run on each "
                  "kernel's folder of a sweep");
  } else {
    kernels.push_back(
        {inputsOpt.empty() ? "" : inputsOpt.front(), "", std::nullopt});
  }
  const std::string inputOpt = kernels.front().input;

  if (llvm::Error err = fly::checkTargetName(targetOpt))
    return fail("--target=" + targetOpt + ": " +
                llvm::toString(std::move(err)));
  llvm::Expected<fly::TargetSpec> target = fly::parseTargetSpec(targetOpt);
  if (!target)
    return fail("--" + llvm::toString(target.takeError()));
  // A --pipeline without --target: the defaults (hint sets, toolkit) follow
  // the pipeline's family (or the first input's), not --target's default
  // (rocdl's waves_per_eu sets fail on NVVM).
  bool familyFromPipeline = false;
  if (!pipelineOpt.empty() && !targetOpt.getNumOccurrences()) {
    std::string firstSource = kBundledKernel;
    if (!inputOpt.empty()) {
      auto buffer = fly::readRegularFile(inputOpt, /*maxBytes=*/1ull << 30);
      if (!buffer)
        return fail(llvm::toString(buffer.takeError()));
      firstSource = (*buffer)->getBuffer().str();
    }
    if (std::optional<StringRef> own =
            pipelineFamily(pipelineOpt, firstSource)) {
      target->family = own->str();
      familyFromPipeline = true;
    }
  }
  StringRef family = target->family;
  // Checked before anything compiles: a bad format or out-dir used to be
  // found after the whole sweep (or never).
  if (!formatOpt.empty())
    if (llvm::Error err = fly::checkObjectFormat(formatOpt))
      return fail("--format: " + llvm::toString(std::move(err)));
  if (llvm::Error err = fly::OutputDirectory::check(outDirOpt))
    return fail("--out-dir: " + llvm::toString(std::move(err)));

  bool bundled = inputOpt.empty();
  // --bench with no value: the bundled example's launch spec, written into
  // --out-dir beside the variants once they are.
  std::string benchSpec = benchOpt;
  if (benchOpt.getNumOccurrences() && benchSpec.empty() && !bundled)
    return fail("--bench needs a launch spec for '" + inputOpt +
                "' (--bench=<launch.json>, like examples/*.launch.json); "
                "only the bundled example has one built in");

  std::vector<fly::HintSet> hintSets;
  // An explicitly empty --hints is the C API's "": one variant, the
  // backend's default, not the bundled sets.
  if (hintsOpt.getNumOccurrences() && hintsOpt.empty())
    hintSets.emplace_back();
  if (!hintsOpt.empty()) {
    auto parsed = fly::parseHintSets(hintsOpt);
    if (!parsed)
      return fail("--hints: " + llvm::toString(parsed.takeError()));
    hintSets = std::move(*parsed);
  }
  if (!hintsFileOpt.empty()) {
    auto parsed = fly::readHintSetsFile(hintsFileOpt);
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    llvm::append_range(hintSets, *parsed);
  }
  if (hintSets.empty()) {
    auto parsed = fly::parseHintSetsJSON(
        family == "rocdl" ? StringRef(kBundledHints)
                          : StringRef("[{}, {\"maxnreg\": 128}, "
                                      "{\"maxnreg\": 64}, {\"maxnreg\": 32}]"));
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    hintSets = std::move(*parsed);
  }

  fly::FoundToolkit toolkitFound{toolkitOpt, "--toolkit"};
  if (toolkitFound.dir.empty())
    toolkitFound = fly::locateToolkit(family, toolDir(argv[0]));
  const std::string &toolkit = toolkitFound.dir;
  if (pipelineOpt.empty() && toolkit.empty())
    return fail("no toolkit found for " + family +
                (family == "rocdl"
                     ? ": pass --toolkit=<dir> (a folder with amdgcn/bitcode, "
                       "the ROCm device libraries) or set FLY_ROCM_TOOLKIT"
                     : ": pass --toolkit=<CUDA toolkit>, set CUDA_HOME or "
                       "CUDA_PATH, or put ptxas on PATH"));

  DialectRegistry registry;
  fly::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics as mlir-opt prints them: file:line:col and the source line.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::vector<fly::CompileJob> jobs;
  std::vector<std::string> presetNotes;
  for (fly::SweepKernel &kernel : kernels) {
    std::optional<fly::CompileJob> job =
        buildJob(kernel.input, kernel.hintSets ? *kernel.hintSets : hintSets,
                 *target, familyFromPipeline, toolkit, context, sourceMgr,
                 presetNotes.emplace_back());
    if (!job)
      return 1;
    jobs.push_back(std::move(*job));
  }

  fly::SplitCompilerOptions options =
      fly::SplitCompilerOptions::fromEnvironment();
  std::string jobsNote;
  options.jobs = fly::clampJobs(jobsOpt, &jobsNote);
  if (!jobsNote.empty())
    llvm::WithColor::note(llvm::errs(), "fly-tune") << jobsNote << "\n";
  options.executor = *executor;
  options.planDir = writePlanOpt;
  options.reuseIsa = reuseIsaOpt;
  if (variantTimeoutOpt.getNumOccurrences())
    options.variantTimeoutSeconds = variantTimeoutOpt;
  options.timeBudgetSeconds = timeBudgetOpt;
  if (noCacheOpt)
    options.cache.enabled = false;
  if (slurm) {
    auto slurmOptions = fly::getSlurmExecutorOptions(
        options.cache.enabled ? options.cache.directory : "", progress);
    if (!slurmOptions)
      return fail(llvm::toString(slurmOptions.takeError()));
    options.makeExecutor = [slurmOptions = *slurmOptions] {
      return fly::createSlurmExecutor(slurmOptions);
    };
  }
  options.configurePassManager = [](PassManager &pm) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
    return success();
  };
  if (!quietOpt)
    options.progress = [](StringRef line) {
      llvm::errs() << "fly-tune: " << line << "\n";
    };
  if (several && !writePlanOpt.empty())
    return fail("--write-plan writes one kernel's plan; give one input");
  fly::SplitCompiler compiler(context, options);
  if (!quietOpt)
    for (auto [job, note] : llvm::zip(jobs, presetNotes))
      llvm::errs() << "fly-tune: " << job.sourceName << ", "
                   << count(job.hintSets.size(), "hint set") << ", " << note
                   << "\n";
  // Which toolkit (and so which ptxas) compiles, and why that one.
  if (!quietOpt && pipelineOpt.empty())
    llvm::errs() << "fly-tune: toolkit " << toolkit << " ("
                 << toolkitFound.origin << ")\n";
  if (several) {
    // One sweep: each kernel's outputs in <out-dir>/<its stem>, as a
    // single-kernel run writes them, and sweep.json over all.
    std::vector<FailureOr<fly::CompileResult>> results =
        compiler.compileMany(jobs);
    int status = 0;
    for (auto [kernel, job, result] : llvm::zip(kernels, jobs, results)) {
      llvm::outs() << "\n== kernel " << kernel.input << " -> " << outDirOpt
                   << "/" << kernel.stem << "\n";
      llvm::SmallString<256> dir(outDirOpt);
      llvm::sys::path::append(dir, kernel.stem);
      int kernelStatus = failed(result) ? 1 : reportKernel(job, *result, dir);
      // 1 when a kernel failed as a whole, else 2 when a variant did.
      if (kernelStatus == 1 || (kernelStatus == 2 && status == 0))
        status = kernelStatus;
    }
    if (llvm::Error err = writeSweepIndex(outDirOpt, kernels, results))
      return fail(llvm::toString(std::move(err)));
    return status;
  }
  FailureOr<fly::CompileResult> result = compiler.compile(jobs.front());
  if (failed(result))
    return 1;
  int status = reportKernel(jobs.front(), *result, outDirOpt);
  if (status == 1 || !benchOpt.getNumOccurrences())
    return status;
  if (benchSpec.empty()) {
    llvm::SmallString<256> path(outDirOpt);
    llvm::sys::path::append(path, "bundled.launch.json");
    if (llvm::Error err = llvm::writeToOutput(path, [](llvm::raw_ostream &os) {
          os << kBundledLaunchSpec;
          return llvm::Error::success();
        }))
      return fail(llvm::toString(std::move(err)));
    benchSpec = std::string(path);
  }
  return runBench(argv[0], benchSpec, status);
}
