//===- fly-tune.cpp - Compile one kernel under many hint sets -------------===//
//
//   fly-tune kernel.mlir --target=rocdl:gfx942 --hints-file=h.json
//
// runs the pipeline's prefix once (or loads it from the compile cache), the
// binary pass once per hint set in parallel, prints a table and writes every
// variant plus report.json to --out-dir. With no input it tunes the bundled
// example. A thin shell over fly::SplitCompiler.
//
//===----------------------------------------------------------------------===//

#include "fly/Compiler/Registration.h"
#include "fly/Compiler/SplitCompiler.h"
#include "fly/Executor/WorkDir.h"
#include "fly/Hints/TargetChips.h"
#include "fly/Pipeline/TargetPresets.h"
#include "fly/Replay/Manifest.h"
#include "fly/Replay/SweepTable.h"
#include "fly/Support/OutputDirectory.h"
#include "fly/Support/SafeFile.h"
#include "fly/Support/ToolOptions.h"
#include "fly/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
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
#include "llvm/Support/WithColor.h"

#include "BundledExample.inc"

using namespace mlir;
namespace cl = llvm::cl;
using llvm::StringRef;

static cl::opt<std::string> inputOpt(cl::Positional,
                                     cl::desc("<kernel.mlir> (default: the "
                                              "bundled example)"),
                                     cl::init(""));
static cl::opt<std::string>
    targetOpt("target", cl::desc("rocdl:<chip> or nvvm:<sm_XX>"),
              cl::init("rocdl:gfx942"));
static cl::opt<std::string> hintsOpt("hints",
                                     cl::desc("Hint sets 'k=v,k=v;k=v'"));
static cl::opt<std::string>
    hintsFileOpt("hints-file", cl::desc("JSON list of hint-set objects"));
static cl::opt<std::string>
    pipelineOpt("pipeline", cl::desc("Full pipeline, gpu-module-to-binary "
                                     "included (default: the target's "
                                     "lowering preset)"));
static cl::opt<std::string>
    toolkitOpt("toolkit", cl::desc("Toolkit for gpu-module-to-binary "
                                   "(ROCm-shaped folder or CUDA)"));
static cl::opt<std::string>
    formatOpt("format",
              cl::desc("Object format: bin, fatbin, isa (default: fatbin on "
                       "ROCDL, whose kernel table carries register counts; "
                       "bin on NVVM, whose cubin fly reads them from)"),
              cl::init(""));
static cl::opt<unsigned> jobsOpt("jobs",
                                 cl::desc("Variants compiled at once "
                                          "(default: hardware threads)"),
                                 cl::init(0));
static cl::opt<std::string> outDirOpt("out-dir",
                                      cl::desc("Where variants and "
                                               "report.json go"),
                                      cl::init("fly-tune-out"));
static cl::opt<bool> noCacheOpt("no-cache",
                                cl::desc("Do not read or write the cache"));
static cl::opt<bool>
    explainCacheOpt("explain-cache",
                    cl::desc("Say which key part changed on a cache miss"));
static cl::opt<bool> quietOpt("quiet", cl::desc("No progress lines"));
static cl::opt<std::string> benchOpt(
    "bench",
    cl::desc("After compiling, run every variant on the GPU with fly-run and "
             "this launch spec (JSON), and pick the winner"),
    cl::value_desc("launch-spec.json"));
static cl::opt<bool> retuneOpt("retune",
                               cl::desc("With --bench: measure again even if "
                                        "a stored winner matches"));
static cl::opt<std::string> executorOpt(
    "executor",
    cl::desc("Where variants compile: batch (in process, fastest), isolated "
             "(in process, a backend crash or LLVM fatal error fails only its "
             "variant) or process (child fly-tune processes: nothing the "
             "backend does reaches this one)"),
    cl::init("isolated"));
static cl::opt<bool> isolateOpt(
    "isolate",
    cl::desc("--isolate=false is --executor=batch (kept for old scripts)"),
    cl::init(true), cl::Hidden);
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
    entriesOpt("entries", cl::desc("With --run-plan: e.g. 0-7,12"),
               cl::Hidden);
static cl::opt<bool> reuseIsaOpt(
    "reuse-isa",
    cl::desc("Compile the ISA once for hint sets that share it (NVVM: sets "
             "that differ only in maxnreg or ptxas options) and run only "
             "ptxas per variant; objects are byte-identical (default on)"),
    cl::init(true));

static std::string findRocmToolkit(const char *argv0) {
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("FLY_ROCM_TOOLKIT"))
    return *env;
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&findRocmToolkit));
  llvm::SmallString<256> candidate(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(exe)));
  llvm::SmallString<256> installed(candidate);
  llvm::sys::path::append(candidate, "rocm-toolkit");
  llvm::sys::path::append(installed, "share", "fly-snapshot", "rocm-toolkit");
  for (StringRef dir : {StringRef(candidate), StringRef(installed),
                        StringRef(FLY_INSTALL_TOOLKIT_DIR),
                        StringRef("/opt/rocm")}) {
    llvm::SmallString<256> lld(dir);
    llvm::sys::path::append(lld, "llvm", "bin", "ld.lld");
    if (llvm::sys::fs::exists(lld))
      return dir.str();
  }
  return "";
}

/// Hands the variants to fly-run, which sits beside fly-tune and links no
/// LLVM: the GPU step is the same whether it runs here or on another
/// machine. Returns fly-run's status (77: no device), or `status` if worse.
static int runBench(const char *argv0, int status) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&findRocmToolkit));
  llvm::SmallString<256> flyRun(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(flyRun, "fly-run");
  if (!llvm::sys::fs::can_execute(flyRun)) {
    llvm::WithColor::error(llvm::errs(), "fly-tune")
        << "--bench needs fly-run beside fly-tune (" << flyRun << ")\n";
    return 1;
  }
  llvm::SmallVector<StringRef> args = {flyRun, outDirOpt, benchOpt};
  if (retuneOpt)
    args.push_back("--retune");
  if (quietOpt)
    args.push_back("--quiet");
  llvm::outs().flush();
  std::string error;
  int benchStatus = llvm::sys::ExecuteAndWait(flyRun, args, std::nullopt, {},
                                              0, 0, &error);
  if (benchStatus < 0) {
    llvm::WithColor::error(llvm::errs(), "fly-tune")
        << "cannot run fly-run: " << error << "\n";
    return 1;
  }
  return benchStatus != 0 ? benchStatus : status;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  // fly's own passes too: replays run fly-assemble-isa, which
  // --mlir-print-ir-after= and crash reproducers name.
  fly::registerFlySnapshotPasses();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::ParseCommandLineOptions(
      argc, argv,
      "fly-tune: compile one GPU kernel under many backend hint sets, "
      "running everything before gpu-module-to-binary once\n");
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
  std::optional<fly::ExecutorKind> executor =
      fly::parseExecutorKind(executorOpt);
  if (!executor)
    return fail("--executor must be batch, isolated or process, got '" +
                executorOpt + "'");
  if (!isolateOpt && executorOpt.getNumOccurrences() == 0)
    executor = fly::ExecutorKind::Batch;

  auto [family, chip] = StringRef(targetOpt).split(':');
  if ((family != "rocdl" && family != "nvvm") || chip.empty())
    return fail("--target must be rocdl:<chip> or nvvm:<sm_XX>, got '" +
                targetOpt + "'");
  fly::TargetFamily targetFamily =
      family == "rocdl" ? fly::TargetFamily::ROCDL : fly::TargetFamily::NVVM;
  if (!fly::isKnownChip(targetFamily, chip))
    return fail("--target=" + targetOpt + ": LLVM's " +
                (family == "rocdl" ? "AMDGPU" : "NVPTX") +
                " backend does not know chip '" + chip + "'; " +
                fly::suggestChips(targetFamily, chip));
  // Checked before anything compiles: a bad format or out-dir used to be
  // found after the whole sweep (or never).
  if (!formatOpt.empty())
    if (llvm::Error err = fly::checkObjectFormat(formatOpt))
      return fail("--format: " + llvm::toString(std::move(err)));
  if (llvm::Error err = fly::OutputDirectory::check(outDirOpt))
    return fail("--out-dir: " + llvm::toString(std::move(err)));

  fly::CompileJob job;
  // Only a preset's label: the source and pipeline, which the key hashes,
  // say what a --pipeline targets.
  job.chip = pipelineOpt.empty() ? std::string(targetOpt) : "";
  bool bundled = inputOpt.empty();
  if (bundled) {
    job.source = kBundledKernel;
    job.sourceName = "<bundled tile_matmul.mlir>";
  } else {
    // A regular file only: a FIFO or device would hang or never end.
    auto buffer = fly::readRegularFile(inputOpt, /*maxBytes=*/1ull << 30);
    if (!buffer)
      return fail(llvm::toString(buffer.takeError()));
    job.source = (*buffer)->getBuffer().str();
    job.sourceName = inputOpt;
  }

  if (!hintsOpt.empty()) {
    auto parsed = fly::parseHintSets(hintsOpt);
    if (!parsed)
      return fail("--hints: " + llvm::toString(parsed.takeError()));
    job.hintSets = std::move(*parsed);
  }
  if (!hintsFileOpt.empty()) {
    auto parsed = fly::readHintSetsFile(hintsFileOpt);
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    llvm::append_range(job.hintSets, *parsed);
  }
  if (job.hintSets.empty()) {
    auto parsed = fly::parseHintSetsJSON(
        family == "rocdl" ? StringRef(kBundledHints)
                          : StringRef("[{}, {\"maxnreg\": 128}, "
                                      "{\"maxnreg\": 64}, {\"maxnreg\": 32}]"));
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    job.hintSets = std::move(*parsed);
  }

  std::string toolkit = toolkitOpt;
  if (toolkit.empty())
    toolkit = family == "rocdl" ? findRocmToolkit(argv[0])
                                : std::string(FLY_DEFAULT_CUDA_TOOLKIT);
  if (pipelineOpt.empty() && toolkit.empty())
    return fail("no toolkit found for " + family +
                ": pass --toolkit=<dir> (a ROCm-shaped folder with "
                "amdgcn/bitcode and llvm/bin/ld.lld, or the CUDA toolkit)");

  DialectRegistry registry;
  fly::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string presetNote = "--pipeline";
  if (pipelineOpt.empty()) {
    // The preset fits the input: host code or not, targets or not.
    OwningOpRef<ModuleOp> input = parseSourceString<ModuleOp>(
        job.source, ParserConfig(&context), job.sourceName);
    if (!input)
      return 1;
    fly::InputShape shape = fly::inspectInput(*input);
    std::string format = formatOpt;
    if (format.empty())
      format = family == "rocdl" ? "fatbin" : "bin";
    fly::PresetOptions preset{family, chip, format, toolkit};
    job.pipeline = fly::buildPresetPipeline(preset, shape);
    presetNote =
        "preset " + targetOpt + ": " + fly::describePreset(preset, shape);
  } else {
    job.pipeline = pipelineOpt;
  }

  fly::SplitCompilerOptions options = fly::SplitCompilerOptions::fromEnvironment();
  std::string jobsNote;
  options.jobs = fly::clampJobs(jobsOpt, &jobsNote);
  if (!jobsNote.empty())
    llvm::WithColor::note(llvm::errs(), "fly-tune") << jobsNote << "\n";
  options.executor = *executor;
  options.planDir = writePlanOpt;
  options.reuseIsa = reuseIsaOpt;
  if (noCacheOpt)
    options.cache.enabled = false;
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
  fly::SplitCompiler compiler(context, options);
  if (!quietOpt)
    llvm::errs() << "fly-tune: " << job.sourceName << ", "
                 << job.hintSets.size() << " hint sets, " << presetNote << "\n";
  FailureOr<fly::CompileResult> result = compiler.compile(job);
  if (failed(result))
    return 1;
  for (const std::string &warning : result->warnings)
    llvm::WithColor::warning(llvm::errs(), "fly-tune") << warning << "\n";

  // Table.
  llvm::outs() << llvm::formatv(
      "\nphase 1: {0} ({1:f1} ms); phase 2: {2:f1} ms; total {3:f1} ms\n",
      result->prefixFromCache ? "from cache" : "compiled", result->prefixMs,
      result->replayMs, result->totalMs);
  if (explainCacheOpt && !result->prefixFromCache)
    llvm::outs() << "cache miss: "
                 << (result->cacheExplanation.empty()
                         ? std::string("cache disabled")
                         : result->cacheExplanation)
                 << "\n";
  fly::printSweepTable(llvm::outs(), result->variants,
                       result->variantFromCache);

  llvm::json::Object report{
      {"tool", "fly-tune"},
      {"input", job.sourceName},
      {"target", llvm::join(result->targets, ",")},
      {"targets", llvm::json::Array(result->targets)},
      {"preset", pipelineOpt.empty() ? llvm::json::Value(targetOpt)
                                     : llvm::json::Value(nullptr)},
      {"pipeline", job.pipeline},
      {"prefix", result->prefix},
      {"binary_pass", result->binaryPass},
      {"suffix", result->suffix},
      {"prefix_from_cache", result->prefixFromCache},
      {"phase1", result->prefixFromCache ? "from cache" : "compiled"},
      {"base_key", result->baseKey},
      {"cache_explanation", result->cacheExplanation},
      {"prefix_ms", result->prefixMs},
      {"replay_ms", result->replayMs},
      {"total_ms", result->totalMs},
      {"warnings", llvm::json::Array(result->warnings)},
      {"reproducers", llvm::json::Array(result->reproducers)},
  };
  llvm::json::Array fromCache;
  for (bool cached : result->variantFromCache)
    fromCache.push_back(cached);
  report["variant_from_cache"] = std::move(fromCache);
  // The host module with the default variant's binaries, after the suffix:
  // written when there is host code (a kernel-only module is just the
  // gpu.binary ops of <id>.mlir).
  std::vector<std::pair<std::string, std::string>> extraFiles;
  if (result->mainModule &&
      llvm::any_of(result->mainModule->getBody()->getOperations(),
                   [](Operation &op) { return !isa<gpu::BinaryOp>(op); })) {
    std::string text;
    llvm::raw_string_ostream os(text);
    result->mainModule->print(os);
    os << "\n";
    extraFiles.push_back({"main.mlir", std::move(text)});
    report["main_module"] = "main.mlir";
  }
  if (llvm::Error err = fly::writeSweepOutputs(
          outDirOpt, result->variants, std::move(report), extraFiles))
    return fail(llvm::toString(std::move(err)));
  if (result->numFailed() == result->variants.size()) {
    llvm::errs() << "fly-tune: error: all " << result->variants.size()
                 << " variants failed; " << outDirOpt
                 << "/manifest.json lists their errors\n";
    return 1;
  }
  llvm::outs() << "\nwrote " << result->variants.size() << " variants and "
               << outDirOpt << "/manifest.json\n";
  int status = 0;
  if (unsigned failed = result->numFailed()) {
    llvm::errs() << "fly-tune: partial: " << failed << " of "
                 << result->variants.size() << " variants failed\n";
    status = 2;
  }
  if (benchOpt.empty())
    return status;
  return runBench(argv[0], status);
}
