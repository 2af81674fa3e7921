//===- SplitCompiler.cpp - Prefix once, binary pass per hint set ----------===//

#include "fly/Compiler/SplitCompiler.h"

#include "Hints/HintSetLimit.h"
#include "Hints/TargetChips.h"
#include "fly/Executor/WorkDir.h"
#include "fly/Hints/BackendOpts.h"
#include "fly/Pipeline/SplitPipeline.h"
#include "fly/Pipeline/StageDumper.h"
#include "fly/Replay/BinaryPass.h"
#include "fly/Replay/Replay.h"
#include "fly/Snapshot/Snapshot.h"
#include "fly/Support/TimeTrace.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/TimeProfiler.h"

#include <chrono>

using namespace mlir;
using llvm::StringRef;
using llvm::Twine;

namespace fly {

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}
} // namespace

unsigned CompileResult::numFailed() const {
  return llvm::count_if(variants,
                        [](const VariantResult &v) { return !v.succeeded(); });
}

SplitCompilerOptions SplitCompilerOptions::fromEnvironment() {
  SplitCompilerOptions options;
  options.dumpDir = StageDumper::directoryFromEnvironment().value_or("");
  return options;
}

SplitCompiler::SplitCompiler(MLIRContext &context, SplitCompilerOptions opts)
    : context(context), options(std::move(opts)), cache(options.cache) {
  if (!options.dumpDir.empty())
    dumper = std::make_unique<StageDumper>(options.dumpDir);
  if (options.reproducerDir.empty())
    options.reproducerDir = options.dumpDir;
}

SplitCompiler::~SplitCompiler() = default;

void SplitCompiler::say(const CompileJob &job, const Twine &line) {
  if (!options.progress)
    return;
  std::string text =
      severalKernels ? (job.sourceName + ": " + line).str() : line.str();
  std::lock_guard<std::mutex> guard(reportMutex);
  options.progress(text);
}

LogicalResult SplitCompiler::runPipeline(OpPassManager &pipeline, ModuleOp op,
                                         bool dump) {
  PassManager pm(&context, pipeline.getOpAnchorName());
  static_cast<OpPassManager &>(pm) = pipeline;
  if (options.configurePassManager && failed(options.configurePassManager(pm)))
    return failure();
  if (dump && dumper)
    pm.addInstrumentation(dumper->instrument(op));
  return pm.run(op);
}

/// Parses and runs `passes` (no anchor) on `module`.
static LogicalResult parsePasses(StringRef passes, OpPassManager &pm,
                                 Location loc) {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(parsePassPipeline(passes, pm, os)))
    return emitError(loc) << "cannot parse pipeline '" << passes
                          << "': " << error;
  return success();
}

/// Replaces the targeted gpu.modules of `module` by gpu.binary ops built
/// from `binaries`, where and as the pipeline's own binary pass would have.
static LogicalResult installBinaries(ModuleOp module,
                                     ArrayRef<VariantBinary> binaries) {
  OpBuilder builder(module.getContext());
  for (gpu::GPUModuleOp gpuModule : getTargetedGpuModules(module)) {
    auto binary = llvm::find_if(binaries, [&](const VariantBinary &b) {
      return b.name == gpuModule.getName();
    });
    if (binary == binaries.end())
      return gpuModule.emitError("the replay made no gpu.binary for it");
    builder.setInsertionPointAfter(gpuModule);
    createBinaryOp(builder, gpuModule.getLoc(), *binary);
    gpuModule.erase();
  }
  return success();
}

void SplitCompiler::buildMainModule(OwningOpRef<ModuleOp> preBinary,
                                    CompileResult &result) {
  if (!result.variants.front().succeeded())
    return;
  // The pre-binary module's last use: the main module is built in it, not
  // in a copy (a second whole module at the end of a big sweep).
  OwningOpRef<ModuleOp> main = std::move(preBinary);
  if (failed(installBinaries(*main, result.variants.front().binaries)))
    return;
  if (!result.suffix.empty()) {
    OpPassManager suffix("builtin.module");
    if (failed(parsePasses(result.suffix, suffix, main->getLoc())) ||
        failed(runPipeline(suffix, *main, /*dump=*/true)))
      return;
  }
  result.mainModule = std::move(main);
}

void SplitCompiler::prepareCache(std::vector<std::string> &warnings) {
  // Non-default llvm::cl options (--stress-regalloc=8) change what the
  // compile makes: they are part of the key, and where they cannot be
  // compared with their defaults the cache sits this compile out.
  cache.setBypassed(false);
  commandLineKey.clear();
  if (!cache.enabled())
    return;
  CommandLineFingerprint fingerprint = getCommandLineFingerprint();
  if (!fingerprint.incomparable.empty()) {
    cache.setBypassed(true);
    warnings.push_back(
        "not using the compile cache for this compile: option(s) " +
        llvm::join(fingerprint.incomparable, ", ") +
        " cannot be compared with their defaults, so no cache key can "
        "cover them");
  }
  commandLineKey = std::move(fingerprint.text);
}

FailureOr<CompileResult> SplitCompiler::compile(const CompileJob &job) {
  severalKernels = false;
  std::vector<std::string> warnings;
  prepareCache(warnings);
  std::unique_ptr<ReplayExecutor> executor = makeExecutor();
  FailureOr<CompileResult> result = compileKernel(job, *executor, 0);
  if (failed(result))
    return failure();
  cache.prune();
  warnings.insert(warnings.end(), result->warnings.begin(),
                  result->warnings.end());
  for (std::string &warning : cache.takeWarnings())
    warnings.push_back(std::move(warning));
  result->warnings = std::move(warnings);
  return result;
}

std::vector<FailureOr<CompileResult>>
SplitCompiler::compileMany(ArrayRef<CompileJob> jobs) {
  severalKernels = jobs.size() > 1;
  std::vector<std::string> warnings;
  prepareCache(warnings);
  // One executor for all: its workers (the context's thread pool, the
  // isolated executor's pool, the process executor's child slots) are
  // shared, so a kernel's replays start as soon as its phase 1 is done
  // and never wait for another kernel's; in the isolated executor the
  // largest kernel's go first (SweepScheduler.h).
  std::unique_ptr<ReplayExecutor> executor = makeExecutor();
  std::vector<std::optional<FailureOr<CompileResult>>> slots(jobs.size());
  {
    // The kernels' drivers: phase 1, then waiting on the executor. Dumps
    // number their stages in one sequence: one kernel at a time then.
    unsigned drivers =
        dumper ? 1
               : std::min<size_t>(
                     jobs.size(),
                     options.jobs
                         ? options.jobs
                         : llvm::hardware_concurrency().compute_thread_count());
    llvm::StdThreadPool pool(llvm::hardware_concurrency(std::max(1u, drivers)));
    for (auto [k, job] : llvm::enumerate(jobs))
      pool.async([&, k = k, &job = job] {
        if (options.cancelled && options.cancelled())
          slots[k] = failure();
        else
          slots[k] = compileKernel(job, *executor, k);
      });
    pool.wait();
  }
  cache.prune();
  for (std::string &warning : cache.takeWarnings())
    warnings.push_back(std::move(warning));
  // The sweep's own warnings (the cache's command line view, pruning) are
  // reported once, with the first kernel that compiled.
  std::vector<FailureOr<CompileResult>> results;
  for (std::optional<FailureOr<CompileResult>> &slot : slots) {
    results.push_back(std::move(*slot));
    if (failed(results.back()))
      continue;
    std::vector<std::string> &own = results.back()->warnings;
    own.insert(own.begin(), std::make_move_iterator(warnings.begin()),
               std::make_move_iterator(warnings.end()));
    warnings.clear();
  }
  return results;
}

FailureOr<CompileResult> SplitCompiler::compileKernel(const CompileJob &job,
                                                      ReplayExecutor &executor,
                                                      unsigned kernel) {
  Clock::time_point start = Clock::now();
  TimeTraceThreadScope threadTrace;
  llvm::TimeTraceScope kernelSpan("Kernel", job.sourceName);
  CompileResult result;
  Location loc = FileLineColLoc::get(&context, job.sourceName, 0, 0);
  llvm::Expected<SplitPipeline> split = splitAtBinaryPass(job.pipeline);
  if (!split)
    return emitError(loc) << llvm::toString(split.takeError());
  if (job.hintSets.empty())
    return emitError(loc) << "no hint sets: give at least one (an empty set "
                             "compiles with the backend's defaults)";
  if (llvm::Error err = checkHintSetCount(job.hintSets.size()))
    return emitError(loc) << llvm::toString(std::move(err));
  // Upstream rejects an unknown format only when the binary pass runs, once
  // per variant; say it once, before the prefix runs.
  FailureOr<BinaryPassOptions> binaryPass =
      parseBinaryPass(split->binaryPass, loc);
  if (failed(binaryPass))
    return failure();
  result.prefix = split->prefix;
  result.binaryPass = split->binaryPass;
  if (binaryPass->toolkitPath.empty() && !job.defaultToolkit.empty()) {
    binaryPass->toolkitPath = job.defaultToolkit;
    result.binaryPass = printBinaryPass(*binaryPass);
  }
  result.suffix = split->suffix;

  CacheKey baseKey;
  OwningOpRef<ModuleOp> preBinary;
  {
    llvm::TimeTraceScope phase1Span("Phase 1", job.sourceName);
    preBinary = runOrLoadPrefix(job, result, baseKey);
  }
  if (!preBinary)
    return failure();
  result.targets = getTargetLabels(*preBinary);
  say(job, "phase 1: targets " + (result.targets.empty()
                                      ? std::string("(none)")
                                      : llvm::join(result.targets, ", ")));
  for (std::string &line : describeRepeatedTargets(*preBinary))
    result.warnings.push_back(std::move(line));

  Clock::time_point replayStart = Clock::now();
  std::vector<CacheKey> keys;
  FailureOr<ReplayPlan> plan =
      planVariants(*preBinary, job, *binaryPass, baseKey, keys);
  if (failed(plan))
    return failure();
  // What the binary pass's opts= flags become on ROCDL (BackendOpts.h).
  for (BinaryOptsMessage &message : describeBinaryOpts(
           plan->binaryPass.cmdOptions, getTargetedGpuModules(*preBinary)))
    result.warnings.push_back(std::move(message.text));
  if (!options.planDir.empty())
    if (llvm::Error err =
            writeReplayWorkDir(options.planDir, *preBinary, *plan))
      return emitError(loc) << llvm::toString(std::move(err));
  if (failed(
          runVariants(*preBinary, *plan, keys, job, kernel, executor, result)))
    return failure();
  result.plan = std::move(*plan);
  result.replayMs = msSince(replayStart);

  dumpVariants(result);
  writeReproducers(*preBinary, result);
  buildMainModule(std::move(preBinary), result);
  result.totalMs = msSince(start);
  return result;
}

} // namespace fly
