//===- TuneDriver.cpp - fly-tune's steps over SplitCompiler ---------------===//

#include "fly/Tool/TuneDriver.h"
#include "fly/Backend/RocdlSharedCodegen.h"

#include "Compiler/SweepReport.h"
#include "Replay/SweepTable.h"
#include "fly/Compiler/Presets.h"
#include "fly/Compiler/Registration.h"
#include "fly/Compiler/SplitCompiler.h"
#include "fly/Compiler/TargetName.h"
#include "fly/Executor/WorkDir.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/HintRegistry.h"
#include "fly/Hints/HintSetSources.h"
#include "fly/Pipeline/TargetPresets.h"
#include "fly/Replay/Manifest.h"
#include "fly/Support/BoundedJSON.h"
#include "fly/Support/OutputDirectory.h"
#include "fly/Support/SafeFile.h"
#include "fly/Support/ToolOptions.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <cmath>

using namespace mlir;
using llvm::StringRef;

namespace fly {

namespace {

/// fly-run's exit status when it finds no GPU (the automake "skip" code).
constexpr int kNoDeviceStatus = 77;

int fail(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "fly-tune") << msg << "\n";
  return 1;
}

/// fail() for the steps that return whether to go on.
bool reportError(const llvm::Twine &msg) {
  fail(msg);
  return false;
}

/// "1 variant", "2 variants".
std::string count(size_t n, StringRef noun) {
  return std::to_string(n) + " " + noun.str() + (n == 1 ? "" : "s");
}

/// Prints `text` with every line indented under a heading.
void printIndented(llvm::raw_ostream &os, StringRef text) {
  llvm::SmallVector<StringRef> lines;
  text.rtrim().split(lines, '\n');
  for (StringRef line : lines)
    os << "    " << line << "\n";
}

/// The family whose target a user pipeline attaches, or else the one the
/// input's gpu.modules name (#nvvm.target / #rocdl.target); none if neither
/// or both. Only the defaults depend on it: the pipeline says the rest.
std::optional<StringRef> pipelineFamily(StringRef pipeline, StringRef source) {
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

/// One fly-tune run: the options, and what the steps derive from them.
class TuneRun {
public:
  TuneRun(const TuneOptions &options, llvm::ArrayRef<SweepKernel> kernels)
      : options(options), kernels(kernels) {}
  int run();

private:
  /// Target, family, format, out-dir and --bench, checked before anything
  /// compiles: a bad format or out-dir used to be found after the whole
  /// sweep (or never).
  bool checkOptions();
  bool getHintSets();
  bool resolveToolkit();
  std::optional<CompileJob> buildJob(const SweepKernel &kernel,
                                     std::string &presetNote);
  SplitCompilerOptions getCompilerOptions(bool &ok);
  /// Prints and writes one kernel's variants; `writeError`, if given,
  /// receives why its out-dir could not be written.
  int reportKernel(const CompileJob &job, CompileResult &result,
                   StringRef outDir, SweepOutputWriter &writer,
                   std::string *writeError = nullptr);
  /// Each kernel's out-dir, staged as its variants finish.
  bool createWriters(SplitCompilerOptions &compilerOptions);
  /// The out-dir, or in a sweep the kernel's folder in it: each replaced as
  /// a whole (a sweep's out-dir holds them and sweep.json, so running the
  /// sweep again replaces them).
  std::string getKernelOutDir(const SweepKernel &kernel) const;
  int runSweep(SplitCompiler &compiler);
  int runBench(int status);

  const TuneOptions &options;
  llvm::ArrayRef<SweepKernel> kernels;
  bool several = false;
  TargetSpec target;
  bool familyFromPipeline = false;
  std::vector<HintSet> hintSets;
  FoundToolkit toolkit;
  std::string benchSpec;
  std::optional<MLIRContext> context;
  llvm::SourceMgr sourceMgr;
  std::vector<CompileJob> jobs;
  std::vector<std::unique_ptr<SweepOutputWriter>> writers;
};

/// <outDir>/sweep.json, where a sweep writes its index.
static std::string getSweepIndexPath(StringRef outDir) {
  llvm::SmallString<256> path(outDir);
  llvm::sys::path::append(path, "sweep.json");
  return std::string(path);
}

/// Refuses a sweep.json in `outDir` that is not fly's index, which a
/// sweep would overwrite.
static llvm::Error checkSweepIndex(StringRef outDir) {
  std::string path = getSweepIndexPath(outDir);
  if (!llvm::sys::fs::exists(path) && !llvm::sys::fs::is_symlink_file(path))
    return llvm::Error::success();
  // Fly's index is an object listing "kernels"; a sweep file (--sweep) is
  // a list.
  bool written = false;
  if (llvm::Expected<std::string> text =
          readRegularFileText(path, 64 << 20, FinalSymlink::Refuse)) {
    if (llvm::Expected<llvm::json::Value> value =
            parseJSONBounded(*text, path)) {
      const llvm::json::Object *object = value->getAsObject();
      written = object && object->getArray("kernels");
    } else {
      llvm::consumeError(value.takeError());
    }
  } else {
    llvm::consumeError(text.takeError());
  }
  if (written)
    return llvm::Error::success();
  return llvm::createStringError(
      "out-dir '" + outDir +
      "' holds a sweep.json that fly did not write, where a sweep writes its "
      "index; move it or choose another out-dir");
}

bool TuneRun::checkOptions() {
  const std::string &firstInput = kernels.front().input;
  llvm::Expected<TargetSpec> spec = parseTargetSpec(options.target);
  if (!spec)
    return reportError("--target=" + options.target + ": " +
                       llvm::toString(spec.takeError()));
  target = std::move(*spec);
  // A --pipeline without --target: the defaults (hint sets, toolkit) follow
  // the pipeline's family (or the first input's), not --target's default
  // (rocdl's waves_per_eu sets fail on NVVM).
  if (!options.pipeline.empty() && !options.targetGiven) {
    std::string firstSource = options.bundled.kernel.str();
    if (!firstInput.empty()) {
      auto buffer = readRegularFile(firstInput, /*maxBytes=*/1ull << 30);
      if (!buffer)
        return reportError(llvm::toString(buffer.takeError()));
      firstSource = (*buffer)->getBuffer().str();
    }
    if (std::optional<StringRef> own =
            pipelineFamily(options.pipeline, firstSource)) {
      target.family = own->str();
      familyFromPipeline = true;
    }
  }
  if (!options.format.empty())
    if (llvm::Error err = checkObjectFormat(options.format))
      return reportError("--format: " + llvm::toString(std::move(err)));
  for (const SweepKernel &kernel : kernels)
    if (llvm::Error err = OutputDirectory::check(getKernelOutDir(kernel)))
      return reportError("--out-dir: " + llvm::toString(std::move(err)));
  if (several)
    if (llvm::Error err = checkSweepIndex(options.outDir))
      return reportError("--out-dir: " + llvm::toString(std::move(err)));
  if (!options.timeTrace.empty()) {
    if (llvm::Error err = checkTimeTracePath(options.timeTrace))
      return reportError("--time-trace: " + llvm::toString(std::move(err)));
    if (StringRef refusal = getTimeTraceRefusal(options.executor);
        !refusal.empty())
      return reportError(refusal);
  }
  // --bench with no value: the bundled example's launch spec, written into
  // --out-dir beside the variants once they are.
  if (options.bench)
    benchSpec = *options.bench;
  if (options.bench && benchSpec.empty() && !firstInput.empty())
    return reportError(
        "--bench needs a launch spec for '" + firstInput +
        "' (--bench=<launch.json>, like examples/*.launch.json); "
        "only the bundled example has one built in");
  return true;
}

bool TuneRun::getHintSets() {
  // An explicitly empty --hints is the C API's "": one variant, the
  // backend's default, not the bundled sets.
  HintSetSources sources;
  sources.text = options.hints;
  sources.textName = "--hints";
  sources.file = options.hintsFile;
  auto collected = fly::collectHintSets(sources);
  if (!collected)
    return reportError(llvm::toString(collected.takeError()));
  hintSets = std::move(*collected);
  if (hintSets.empty()) {
    auto parsed = parseHintSetsJSON(
        target.family == "rocdl"
            ? options.bundled.hints
            : StringRef("[{}, {\"maxnreg\": 128}, "
                        "{\"maxnreg\": 64}, {\"maxnreg\": 32}]"));
    if (!parsed)
      return reportError(llvm::toString(parsed.takeError()));
    hintSets = std::move(*parsed);
  }
  return true;
}

bool TuneRun::resolveToolkit() {
  toolkit = {options.toolkit, "--toolkit"};
  if (toolkit.dir.empty())
    toolkit = locateToolkit(target.family, options.toolDir);
  if (!options.pipeline.empty() || !toolkit.dir.empty())
    return true;
  return reportError(
      "no toolkit found for " + target.family +
      (target.family == "rocdl"
           ? ": pass --toolkit=<dir> (a folder with amdgcn/bitcode, "
             "the ROCm device libraries) or set FLY_ROCM_TOOLKIT"
           : ": pass --toolkit=<CUDA toolkit>, set CUDA_HOME or "
             "CUDA_PATH, or put ptxas on PATH"));
}

/// The job for `kernel` ("" = the bundled example): its source (in
/// `sourceMgr` for diagnostics) and pipeline (the target's preset, fitted to
/// the input, or --pipeline). Nullopt after an error was reported.
std::optional<CompileJob> TuneRun::buildJob(const SweepKernel &kernel,
                                            std::string &presetNote) {
  StringRef family = target.family;
  StringRef input = kernel.input;
  CompileJob job;
  job.hintSets = kernel.hintSets ? *kernel.hintSets : hintSets;
  // Only a preset's label: the source and pipeline, which the key hashes,
  // say what a --pipeline targets.
  job.chip = options.pipeline.empty() ? options.target : "";
  if (input.empty()) {
    job.source = options.bundled.kernel.str();
    job.sourceName = "<bundled tile_matmul.mlir>";
  } else {
    // A regular file only: a FIFO or device would hang or never end.
    auto buffer = readRegularFile(input, /*maxBytes=*/1ull << 30);
    if (!buffer) {
      reportError(llvm::toString(buffer.takeError()));
      return std::nullopt;
    }
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
  if (!options.pipeline.empty()) {
    job.pipeline = options.pipeline;
    // --toolkit reaches a binary pass without toolkit=, and so does the one
    // found when the pipeline's family is known (--target given, the
    // pipeline's own, or $FLY_ROCM_TOOLKIT, which names a ROCm toolkit).
    if (!options.toolkit.empty() || options.targetGiven || familyFromPipeline ||
        (family == "rocdl" && llvm::sys::Process::GetEnv("FLY_ROCM_TOOLKIT")))
      job.defaultToolkit = toolkit.dir;
    return job;
  }
  // The preset fits the input: host code or not, targets or not.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      job.source, ParserConfig(&*context), job.sourceName);
  if (!module)
    return std::nullopt;
  // A target the input names for itself wins over the preset's lowering:
  // --target's family must be its family, or every variant fails in the
  // wrong backend.
  WalkResult mismatch = module->walk([&](gpu::GPUModuleOp gpuModule) {
    for (Attribute attr : gpuModule.getTargetsAttr()
                              ? gpuModule.getTargetsAttr().getValue()
                              : ArrayRef<Attribute>()) {
      StringRef own = stringifyTargetFamily(getTargetFamily(attr));
      if (own == family)
        continue;
      InFlightDiagnostic diag = emitError(gpuModule.getLoc())
                                << "gpu.module @" << gpuModule.getName()
                                << " targets " << attr << " (" << own
                                << "), but --target=" << options.target
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
  InputShape shape = inspectInput(*module);
  std::string format = options.format.empty()
                           ? getDefaultObjectFormat(family).str()
                           : options.format;
  std::string features = getPresetFeatures(target, toolkit.dir);
  PresetOptions preset{family, target.chip, format, toolkit.dir, features};
  job.pipeline = buildPresetPipeline(preset, shape);
  presetNote =
      "preset " + options.target + ": " + describePreset(preset, shape);
  return job;
}

SplitCompilerOptions TuneRun::getCompilerOptions(bool &ok) {
  SplitCompilerOptions compilerOptions =
      SplitCompilerOptions::fromEnvironment();
  std::string jobsNote;
  compilerOptions.jobs = clampJobs(options.jobs, &jobsNote);
  if (!jobsNote.empty())
    llvm::WithColor::note(llvm::errs(), "fly-tune") << jobsNote << "\n";
  switch (options.executor) {
  case TuneExecutor::Batch:
    compilerOptions.executor = ExecutorKind::Batch;
    break;
  case TuneExecutor::Isolated:
    compilerOptions.executor = ExecutorKind::Isolated;
    break;
  case TuneExecutor::Process:
  case TuneExecutor::Slurm:
    compilerOptions.executor = ExecutorKind::Process;
    break;
  }
  compilerOptions.planDir = options.writePlan;
  compilerOptions.reuseIsa = options.reuseIsa;
  if (options.variantTimeout)
    compilerOptions.variantTimeoutSeconds = *options.variantTimeout;
  compilerOptions.timeBudgetSeconds = options.timeBudget;
  if (options.noCache)
    compilerOptions.cache.enabled = false;
  if (options.executor == TuneExecutor::Slurm) {
    auto makeExecutor = options.makeSlurmExecutor(
        compilerOptions.cache.enabled ? compilerOptions.cache.directory : "");
    if (!makeExecutor) {
      ok = false;
      fail(llvm::toString(makeExecutor.takeError()));
      return compilerOptions;
    }
    compilerOptions.makeExecutor = std::move(*makeExecutor);
  }
  compilerOptions.configurePassManager = options.configurePassManager;
  compilerOptions.replaysInstrumented = options.replaysInstrumented;
  if (!options.quiet)
    compilerOptions.progress = [](StringRef line) {
      llvm::errs() << "fly-tune: " << line << "\n";
    };
  ok = true;
  return compilerOptions;
}

/// Prints the table of one kernel's sweep and writes its variants and
/// manifest.json into `outDir`. Returns the exit status: 1 if every variant
/// failed, 2 if some did, else 0.
int TuneRun::reportKernel(const CompileJob &job, CompileResult &result,
                          StringRef outDir, SweepOutputWriter &writer,
                          std::string *writeError) {
  for (const std::string &warning : result.warnings)
    llvm::WithColor::warning(llvm::errs(), "fly-tune") << warning << "\n";
  if (result.prefixFromCache && options.irPrinting)
    llvm::WithColor::warning(llvm::errs(), "fly-tune")
        << "phase 1 came from the compile cache, so no prefix passes ran and "
           "--mlir-print-ir-* printed nothing for them (cached variants "
           "neither); --no-cache or FLY_ALWAYS_COMPILE=1 runs them\n";

  // Table.
  llvm::outs() << llvm::formatv(
      "\nphase 1: {0} ({1:f1} ms); phase 2: {2:f1} ms; total {3:f1} ms\n",
      result.prefixFromCache ? "from cache" : "compiled", result.prefixMs,
      result.replayMs, result.totalMs);
  if (options.explainCache && !result.prefixFromCache)
    llvm::outs() << "cache miss: "
                 << (result.cacheExplanation.empty()
                         ? std::string("cache disabled")
                         : result.cacheExplanation)
                 << "\n";
  printSweepTable(llvm::outs(), result.variants, result.variantFromCache,
                  options.bestAllowNumericsChanges);

  SweepHeader header = getSweepHeader("fly-tune", job, result);
  header.target = llvm::join(result.targets, ",");
  header.targets = result.targets;
  header.bestAllowsNumericsChanges = options.bestAllowNumericsChanges;
  if (options.pipeline.empty())
    header.preset = options.target;
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
  if (llvm::Error err = writer.finish(result.variants, header, extraFiles)) {
    std::string message = llvm::toString(std::move(err));
    if (writeError)
      *writeError = message;
    return fail(message);
  }
  std::vector<std::string> skipped;
  for (const VariantResult &v : result.variants)
    if (v.skipped)
      skipped.push_back(v.id);
  double budget = options.timeBudget;
  if (!skipped.empty())
    llvm::errs() << "fly-tune: the time budget of "
                 << (budget == std::floor(budget)
                         ? std::to_string(static_cast<long long>(budget))
                         : llvm::formatv("{0:f2}", budget).str())
                 << " s was spent: skipped " << count(skipped.size(), "variant")
                 << ": " << llvm::join(skipped, ", ") << "\n";
  // The whole cause (a ptxas log, say), under the variant it belongs to;
  // when all failed, the first one's (the others are in the manifest).
  auto printFailures = [&](bool firstOnly) {
    llvm::outs().flush();
    for (const VariantResult &v : result.variants) {
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
/// hint set). A kernel whose folder could not be written is failed, with
/// `writeErrors`' message.
llvm::Error writeSweepIndex(StringRef outDir,
                            llvm::ArrayRef<SweepKernel> kernels,
                            llvm::ArrayRef<FailureOr<CompileResult>> results,
                            llvm::ArrayRef<std::string> writeErrors) {
  llvm::json::Array list;
  for (auto [kernel, result, writeError] :
       llvm::zip(kernels, results, writeErrors)) {
    llvm::json::Object entry{{"kernel", kernel.input}, {"dir", kernel.stem}};
    if (failed(result) || !writeError.empty()) {
      entry["status"] = "failed";
      if (!writeError.empty())
        entry["error"] = writeError;
      list.push_back(std::move(entry));
      continue;
    }
    llvm::json::Array variants;
    for (const VariantResult &v : result->variants)
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
  return llvm::writeToOutput(
      getSweepIndexPath(outDir), [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                         {"kernels", std::move(list)}}))
           << "\n";
        return llvm::Error::success();
      });
}

std::string TuneRun::getKernelOutDir(const SweepKernel &kernel) const {
  llvm::SmallString<256> dir(options.outDir);
  if (several)
    llvm::sys::path::append(dir, kernel.stem);
  return std::string(dir);
}

bool TuneRun::createWriters(SplitCompilerOptions &compilerOptions) {
  for (const SweepKernel &kernel : kernels) {
    llvm::Expected<std::unique_ptr<SweepOutputWriter>> writer =
        SweepOutputWriter::create(getKernelOutDir(kernel));
    if (!writer) {
      fail("--out-dir: " + llvm::toString(writer.takeError()));
      return false;
    }
    writers.push_back(std::move(*writer));
  }
  // The files of a variant are written while the others compile, as N
  // separate compiles write theirs: the end of the sweep waits only for the
  // manifest.
  compilerOptions.variantFinished = [this](unsigned kernel, unsigned,
                                           const VariantResult &variant, bool) {
    writers[kernel]->add(variant);
  };
  return true;
}

/// One sweep: each kernel's outputs in <out-dir>/<its stem>, as a
/// single-kernel run writes them, and sweep.json over all.
int TuneRun::runSweep(SplitCompiler &compiler) {
  std::vector<FailureOr<CompileResult>> results = compiler.compileMany(jobs);
  std::vector<std::string> writeErrors(kernels.size());
  int status = 0;
  for (auto [k, kernel, job, result] :
       llvm::enumerate(kernels, jobs, results)) {
    llvm::outs() << "\n== kernel " << kernel.input << " -> " << options.outDir
                 << "/" << kernel.stem << "\n";
    int kernelStatus = failed(result)
                           ? 1
                           : reportKernel(job, *result, getKernelOutDir(kernel),
                                          *writers[k], &writeErrors[k]);
    // 1 when a kernel failed as a whole, else 2 when a variant did.
    if (kernelStatus == 1 || (kernelStatus == 2 && status == 0))
      status = kernelStatus;
  }
  if (llvm::Error err =
          writeSweepIndex(options.outDir, kernels, results, writeErrors))
    return fail(llvm::toString(std::move(err)));
  return status;
}

/// Hands the variants to fly-run, which sits beside fly-tune and links no
/// LLVM: the GPU step is the same whether it runs here or on another
/// machine. Returns `status`, or fly-run's if worse; no GPU skips the
/// benchmark unless --require-gpu.
int TuneRun::runBench(int status) {
  if (benchSpec.empty()) {
    llvm::SmallString<256> path(options.outDir);
    llvm::sys::path::append(path, "bundled.launch.json");
    if (llvm::Error err = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
          os << options.bundled.launchSpec;
          return llvm::Error::success();
        }))
      return fail(llvm::toString(std::move(err)));
    benchSpec = std::string(path);
  }
  llvm::SmallString<256> flyRun(options.toolDir);
  llvm::sys::path::append(flyRun, "fly-run");
  if (!llvm::sys::fs::can_execute(flyRun))
    return fail("--bench needs fly-run beside fly-tune (" + flyRun + ")");
  llvm::SmallVector<StringRef> args = {flyRun, options.outDir, benchSpec};
  if (options.retune)
    args.push_back("--retune");
  if (options.quiet)
    args.push_back("--quiet");
  llvm::outs().flush();
  std::string error;
  int benchStatus =
      llvm::sys::ExecuteAndWait(flyRun, args, std::nullopt, {}, 0, 0, &error);
  if (benchStatus < 0)
    return fail("cannot run fly-run: " + error);
  if (benchStatus == kNoDeviceStatus && !options.requireGpu) {
    llvm::errs() << "fly-tune: benchmark skipped: no GPU (the variants are "
                    "compiled; --require-gpu makes this an error)\n";
    return status;
  }
  return benchStatus != 0 ? benchStatus : status;
}

int TuneRun::run() {
  several = kernels.size() > 1;
  if (several && options.bench)
    return fail("--bench runs one kernel's variants; run fly-run on each "
                "kernel's folder of a sweep");
  if (!checkOptions() || !getHintSets() || !resolveToolkit())
    return 1;
  if (!options.timeTrace.empty())
    startTimeTrace(options.timeTraceGranularityUs, "fly-tune");

  DialectRegistry registry;
  registerCompilerDialects(registry);
  context.emplace(registry);
  context->loadAllAvailableDialects();
  // Diagnostics as mlir-opt prints them: file:line:col and the source line.
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &*context);
  std::vector<std::string> presetNotes;
  for (const SweepKernel &kernel : kernels) {
    std::optional<CompileJob> job =
        buildJob(kernel, presetNotes.emplace_back());
    if (!job)
      return 1;
    jobs.push_back(std::move(*job));
  }

  bool ok = false;
  SplitCompilerOptions compilerOptions = getCompilerOptions(ok);
  if (!ok)
    return 1;
  if (several && !options.writePlan.empty())
    return fail("--write-plan writes one kernel's plan; give one input");
  if (!createWriters(compilerOptions))
    return 1;
  SplitCompiler compiler(*context, compilerOptions);
  if (!options.quiet)
    for (auto [job, note] : llvm::zip(jobs, presetNotes))
      llvm::errs() << "fly-tune: " << job.sourceName << ", "
                   << count(job.hintSets.size(), "hint set") << ", " << note
                   << "\n";
  // Which toolkit (and so which ptxas) compiles, and why that one.
  if (!options.quiet && options.pipeline.empty())
    llvm::errs() << "fly-tune: toolkit " << toolkit.dir << " ("
                 << toolkit.origin << ")\n";
  if (several)
    return runSweep(compiler);
  FailureOr<CompileResult> result = compiler.compile(jobs.front());
  if (failed(result))
    return 1;
  int status =
      reportKernel(jobs.front(), *result, options.outDir, *writers.front());
  if (status == 1 || !options.bench)
    return status;
  return runBench(status);
}

} // namespace

StringRef getTimeTraceRefusal(TuneExecutor executor) {
  if (executor == TuneExecutor::Process || executor == TuneExecutor::Slurm)
    return "--time-trace traces the threads of fly-tune's own process: use "
           "--executor=isolated or batch";
  return "";
}

int runTune(const TuneOptions &options, llvm::ArrayRef<SweepKernel> kernels) {
  // Each kernel's sweep is the last of its module in this process.
  setRocdlKeepForLaterSweeps(false);
  int status = TuneRun(options, kernels).run();
  // After the run's pools are gone: every task has handed its spans over.
  // Written whatever the status: a failed sweep's trace says where it went.
  if (isTimeTraceStarted())
    if (llvm::Error err = writeTimeTrace(options.timeTrace))
      return fail("--time-trace: " + llvm::toString(std::move(err)));
  return status;
}

int runPlanEntries(StringRef workDir, StringRef entries, unsigned jobs) {
  // No table, no out-dir: results into the work directory.
  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  if (jobs <= 1)
    context.disableMultithreading();
  return failed(replayWorkDirEntries(
             workDir, entries, context, jobs,
             [&](OpPassManager &pipeline, ModuleOp container) {
               PassManager pm(&context, pipeline.getOpAnchorName());
               static_cast<OpPassManager &>(pm) = pipeline;
               return pm.run(container);
             }))
             ? 1
             : 0;
}

} // namespace fly
