//===- fly-tune.cpp - Compile one kernel under many hint sets -------------===//
//
//   fly-tune kernel.mlir --target=rocdl:gfx942 --hints-file=h.json
//
// runs the pipeline's prefix once (or loads it from the compile cache), the
// binary pass once per hint set in parallel, prints a table and writes every
// variant plus manifest.json to --out-dir. With no input it tunes the bundled
// example. The flags, read into fly::TuneOptions for fly/Tool/TuneDriver.h.
//
//===----------------------------------------------------------------------===//

#include "fly/Backend/AmdgpuLinker.h"
#include "fly/Cache/CacheKey.h"
#include "fly/Pipeline/TimeTraceInstrumentation.h"
#include "fly/Support/InstallLocation.h"
#include "fly/Support/TimeTrace.h"
#include "fly/Support/ToolHelp.h"
#include "fly/Support/ToolOptions.h"
#include "fly/Tool/TuneDriver.h"
#include "fly/Transforms/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

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
namespace {
/// gpu-module-to-binary's formats; Default: the family's.
enum class ObjectFormat { Default, Bin, Fatbin, Isa, Llvm };
/// Also takes upstream's long names (binary, fatbinary, assembly,
/// offloading), as gpu-module-to-binary does.
struct ObjectFormatParser : cl::parser<ObjectFormat> {
  using cl::parser<ObjectFormat>::parser;
  bool parse(cl::Option &option, StringRef name, StringRef arg,
             ObjectFormat &value) {
    StringRef canonical = llvm::StringSwitch<StringRef>(arg)
                              .Case("binary", "bin")
                              .Case("fatbinary", "fatbin")
                              .Case("assembly", "isa")
                              .Case("offloading", "llvm")
                              .Default(arg);
    return cl::parser<ObjectFormat>::parse(option, name, canonical, value);
  }
};
} // namespace
static cl::opt<ObjectFormat, false, ObjectFormatParser> formatOpt(
    "format", cl::desc("Object format (default: fatbin on rocdl, bin on nvvm)"),
    cl::values(clEnumValN(ObjectFormat::Bin, "bin", "the object (binary)"),
               clEnumValN(ObjectFormat::Fatbin, "fatbin",
                          "an offload bundle (fatbinary)"),
               clEnumValN(ObjectFormat::Isa, "isa", "assembly"),
               clEnumValN(ObjectFormat::Llvm, "llvm", "LLVM IR (offloading)")),
    cl::init(ObjectFormat::Default), cl::cat(tuneCategory));
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
static cl::opt<fly::TuneExecutor> executorOpt(
    "executor", cl::desc("Where variants compile (default: isolated)"),
    cl::values(clEnumValN(fly::TuneExecutor::Batch, "batch", "in this process"),
               clEnumValN(fly::TuneExecutor::Isolated, "isolated",
                          "in this process, a crash fails only its variant"),
               clEnumValN(fly::TuneExecutor::Process, "process",
                          "child processes"),
               clEnumValN(fly::TuneExecutor::Slurm, "slurm",
                          "a Slurm job array, see the Slurm options")),
    cl::init(fly::TuneExecutor::Isolated), cl::cat(tuneCategory));
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

static cl::opt<std::string> timeTraceOpt(
    "time-trace",
    cl::desc("Write where the time went, per thread (each kernel's phase 1 "
             "and passes, each variant and its backend steps), as a Chrome "
             "trace (chrome://tracing, Perfetto) to <file> (default: none)"),
    cl::value_desc("file"), cl::cat(tuneCategory));
static cl::opt<unsigned> timeTraceGranularityOpt(
    "time-trace-granularity",
    cl::desc("With --time-trace: the shortest span kept, in microseconds "
             "(default: 500)"),
    cl::value_desc("us"), cl::init(fly::kDefaultTimeTraceGranularityUs),
    cl::cat(tuneCategory));

static cl::opt<bool> bestAllowNumericsOpt(
    "best-allow-numerics-changes",
    cl::desc("The best row may be a hint set that can change results, "
             "e.g. fast or unsafe math (default: off; such rows say "
             "'numerics')"),
    cl::cat(tuneCategory));

/// The flags, typed.
static fly::TuneOptions getTuneOptions() {
  fly::TuneOptions options;
  options.target = targetOpt;
  options.targetGiven = targetOpt.getNumOccurrences();
  if (hintsOpt.getNumOccurrences())
    options.hints = hintsOpt;
  options.hintsFile = hintsFileOpt;
  options.pipeline = pipelineOpt;
  options.toolkit = toolkitOpt;
  static constexpr const char *kFormatNames[] = {"", "bin", "fatbin", "isa",
                                                 "llvm"};
  options.format = kFormatNames[static_cast<int>(formatOpt.getValue())];
  options.jobs = jobsOpt;
  options.outDir = outDirOpt;
  options.noCache = noCacheOpt;
  options.explainCache = explainCacheOpt;
  options.quiet = quietOpt;
  if (benchOpt.getNumOccurrences())
    options.bench = benchOpt;
  options.requireGpu = requireGpuOpt;
  options.retune = retuneOpt;
  options.executor = executorOpt;
  options.writePlan = writePlanOpt;
  if (variantTimeoutOpt.getNumOccurrences())
    options.variantTimeout = variantTimeoutOpt;
  options.timeBudget = timeBudgetOpt;
  options.reuseIsa = reuseIsaOpt;
  options.bestAllowNumericsChanges = bestAllowNumericsOpt;
  options.timeTrace = timeTraceOpt;
  options.timeTraceGranularityUs = timeTraceGranularityOpt;
  options.irPrinting = fly::isIRPrintingRequested();
  options.replaysInstrumented = fly::isPassInstrumentationRequested();
  options.configurePassManager = [](PassManager &pm) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
    // Not an instrumentation that changes what compiles
    // (replaysInstrumented): the trace observes the sweep as it runs.
    if (fly::isTimeTraceStarted())
      pm.addInstrumentation(std::make_unique<fly::TimeTraceInstrumentation>());
    return success();
  };
  options.toolDir = fly::getProgramDir();
  options.bundled = {kBundledKernel, kBundledHints, kBundledLaunchSpec};
  return options;
}

static void printProgress(StringRef line) {
  if (!quietOpt)
    llvm::errs() << "fly-tune: " << line << "\n";
}

int main(int argc, char **argv) {
  // Started as ld.lld: a child link of fly's own (fly/Backend/AmdgpuLinker.h).
  if (fly::isLinkerInvocation(argv[0]))
    return fly::runLinker(argc, const_cast<const char **>(argv));
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
  // The process executor's child: replays into the work directory.
  if (!runPlanOpt.empty())
    return fly::runPlanEntries(runPlanOpt, entriesOpt, jobsOpt);
  if (isolateOpt.getNumOccurrences())
    return fail("--isolate was removed: --executor=batch runs in this process, "
                "--executor=isolated (the default) under crash recovery");
  // slurm: the process executor's children as a Slurm job array
  // (SlurmOptions.h); several inputs go into one array.
  bool slurm = executorOpt == fly::TuneExecutor::Slurm;
  bool several = inputsOpt.size() > 1 || fly::slurmSweepFileGiven();
  if (several && slurm) {
    if (!timeTraceOpt.empty())
      return fail(fly::getTimeTraceRefusal(fly::TuneExecutor::Slurm));
    fly::CacheConfig cache = fly::CacheConfig::fromEnvironment();
    return fly::runSlurmSweepCommand(
        argc, argv, inputsOpt, outDirOpt,
        cache.enabled && !noCacheOpt ? cache.directory : "", printProgress);
  }
  // The kernels: one input (or the bundled example), or several inputs and
  // the sweep file's, each checked before anything compiles.
  std::vector<fly::SweepKernel> kernels;
  if (several) {
    auto read = fly::readSweepKernels(inputsOpt);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    kernels = std::move(*read);
  } else {
    kernels.push_back(
        {inputsOpt.empty() ? "" : inputsOpt.front(), "", std::nullopt});
  }
  fly::TuneOptions options = getTuneOptions();
  options.makeSlurmExecutor = [](StringRef cacheDir)
      -> llvm::Expected<std::function<std::unique_ptr<fly::ReplayExecutor>()>> {
    auto slurmOptions = fly::getSlurmExecutorOptions(cacheDir, printProgress);
    if (!slurmOptions)
      return slurmOptions.takeError();
    return [slurmOptions = *slurmOptions] {
      return fly::createSlurmExecutor(slurmOptions);
    };
  };
  return fly::runTune(options, kernels);
}
