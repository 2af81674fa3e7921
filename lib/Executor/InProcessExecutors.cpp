//===- InProcessExecutors.cpp - Batch and crash-isolated replays ----------===//

#include "Executor/FreeMemoryReleaser.h"
#include "Executor/SweepScheduler.h"
#include "Support/Environment.h"
#include "Support/FatalErrors.h"
#include "fly/Backend/RocdlSharedCodegen.h"
#include "fly/Backend/VariantQueue.h"
#include "fly/Executor/Executor.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Snapshot/Snapshot.h"
#include "fly/Support/TimeTrace.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/TimeProfiler.h"

#include <atomic>
#include <map>
#include <mutex>
#include <optional>

using namespace mlir;
using namespace llvm;

namespace fly {

namespace {
/// Variants side by side in one container, compiled on the context's
/// thread pool.
class BatchExecutor : public ReplayExecutor {
public:
  explicit BatchExecutor(ExecutorOptions options)
      : options(std::move(options)) {}
  StringRef getName() const override { return "batch"; }

  LogicalResult execute(const ReplayWork &work, ArrayRef<unsigned> entries,
                        const VariantSink &finished) override {
    ReplayOptions replay;
    replay.maxParallel = options.jobs;
    replay.mayStart = work.mayStart;
    // The context's thread pool bounds how many variants compile at once.
    // Batches of exactly that many make every batch wait for its slowest
    // variant; larger batches (up to 4 variants per thread, which bounds the
    // hinted copies alive) let a free thread take the next variant.
    MLIRContext *context = work.preBinary.getContext();
    unsigned threads =
        context->isMultithreadingEnabled() ? context->getNumThreads() : 1;
    if (threads > 1)
      growHeapsInLargeSteps();
    if (replay.maxParallel == 0 || replay.maxParallel >= threads)
      replay.maxParallel =
          std::max<unsigned>(std::max(replay.maxParallel, threads),
                             std::min<size_t>(entries.size(), 4 * threads));
    return replayPlanned(work.preBinary, work.plan, entries, replay,
                         work.nestInSource, work.runPipeline, finished);
  }

private:
  ExecutorOptions options;
};

/// One variant at a time per thread, each under a CrashRecoveryContext.
/// Concurrent execute calls (the kernels of one sweep) share one pool, so
/// `jobs` bounds them together and none waits for another's variants; the
/// largest kernel's go first (SweepScheduler.h).
class IsolatedExecutor : public ReplayExecutor {
public:
  explicit IsolatedExecutor(ExecutorOptions options)
      : options(std::move(options)) {}
  StringRef getName() const override { return "isolated"; }

  LogicalResult execute(const ReplayWork &work, ArrayRef<unsigned> entries,
                        const VariantSink &finished) override;

private:
  ThreadPoolInterface &getPool() {
    std::lock_guard<std::mutex> guard(poolMutex);
    // 0 jobs = every hardware thread (hardware_concurrency(0) would be one).
    if (!pool) {
      ThreadPoolStrategy strategy = options.jobs
                                        ? hardware_concurrency(options.jobs)
                                        : hardware_concurrency();
      // As the batch executor: one thread never contends for the heap.
      if (strategy.compute_thread_count() > 1)
        growHeapsInLargeSteps();
      pool = std::make_unique<DefaultThreadPool>(strategy);
    }
    return *pool;
  }

  ExecutorOptions options;
  /// Before the pool: gone only once the pool's threads have ended.
  SweepScheduler scheduler;
  std::mutex poolMutex;
  std::unique_ptr<DefaultThreadPool> pool;
};
} // namespace

static std::string crashMessage(const CrashRecoveryContext &crc,
                                StringRef step) {
  // On Unix RetCode is 128 + the signal number; HandleExit (an LLVM fatal
  // error) gives the exit code instead.
  std::string fatal = takeLastFatalError();
  if (!fatal.empty())
    return formatv("the binary pass hit an LLVM fatal error{0}: {1}", step,
                   fatal)
        .str();
  return formatv("the binary pass crashed (signal {0}){1}; the backend's "
                 "message is on stderr",
                 crc.RetCode > 128 ? crc.RetCode - 128 : crc.RetCode, step)
      .str();
}

/// What a variant of `preBinary` costs to compile, roughly: the operations
/// of the gpu.modules it serialises, which code generation grows with.
static uint64_t estimateVariantCost(ModuleOp preBinary) {
  uint64_t operations = 0;
  for (gpu::GPUModuleOp module : getTargetedGpuModules(preBinary))
    module->walk([&](Operation *) { ++operations; });
  return operations;
}

/// Whether a free thread takes the next variant of the kernel estimated to
/// cost most (FLY_LARGEST_KERNEL_FIRST=0: first come, first served, for a
/// bench's side by side).
static bool largestKernelFirst() {
  return getEnvFlag("FLY_LARGEST_KERNEL_FIRST").value_or(true);
}

/// Process-wide, as the allocator is.
static FreeMemoryReleaser &getFreeMemoryReleaser() {
  static FreeMemoryReleaser releaser(releaseFreeHeapPages);
  return releaser;
}

LogicalResult IsolatedExecutor::execute(const ReplayWork &work,
                                        ArrayRef<unsigned> entries,
                                        const VariantSink &finished) {
  CrashRecoveryContext::Enable();
  getFreeMemoryReleaser().planStarting();
  FatalErrorsUnwindCrashRecovery fatalErrors;
  const ReplayPlan &plan = work.plan;
  std::atomic<bool> setupFailed{false};
  // Inside a pass (nestInSource) every replay adds its container to the
  // same module: one at a time then, on a pool and scheduler of its own.
  SweepScheduler aloneScheduler;
  std::optional<DefaultThreadPool> alone;
  if (work.nestInSource)
    alone.emplace(hardware_concurrency(1));
  ThreadPoolInterface &threadPool = alone ? *alone : getPool();
  SweepScheduler &sweeps = alone ? aloneScheduler : scheduler;
  // Otherwise every sweep weighs the same: first come, first served.
  uint64_t variantCost =
      largestKernelFirst() ? estimateVariantCost(work.preBinary) : 0;
  // The time trace's span of a variant names its kernel too: a sweep's
  // kernels have the same variant ids.
  std::string kernelName;
  if (auto file = dyn_cast<FileLineColLoc>(work.preBinary.getLoc()))
    kernelName = llvm::sys::path::filename(file.getFilename().getValue()).str();
  auto spanDetail = [&](unsigned e) {
    return kernelName.empty() ? plan.entries[e].id
                              : plan.entries[e].id + " " + kernelName;
  };
  unsigned threads = std::max(1u, threadPool.getMaxConcurrency());
  ReplayOptions one;
  one.maxParallel = 1;
  one.sharedIsa = std::make_shared<SharedIsaTable>();
  FreeMemoryReleaser &releaser = getFreeMemoryReleaser();

  // Each variant once its shared ISA is there (it only assembles then), or
  // at once where it has none to wait for (it compiles its own).
  VariantQueue variantQueue(entries.size(), threads);
  auto variantTask = [&](unsigned e) -> std::function<void()> {
    return [&, e] {
      ScopedVariantQueue started(variantQueue);
      // Only after a replay that returned: a crashed one's heap is not
      // walked by a trim.
      bool returned = false;
      llvm::scope_exit settle(
          [&] { releaser.variantFinished(threads, /*mayTrim=*/returned); });
      if (setupFailed || (work.mayStart && !work.mayStart()))
        return;
      TimeTraceThreadScope threadTrace;
      TimeTraceScope span("Variant", [&] { return spanDetail(e); });
      // Handed over only once the replay returned: a crash after the result
      // was recorded still fails the variant (its objects may be torn).
      std::optional<VariantResult> replayed;
      LogicalResult status = failure();
      CrashRecoveryContext crc;
      if (!crc.RunSafely([&] {
            status = replayPlanned(work.preBinary, plan, {e}, one,
                                   work.nestInSource, work.runPipeline,
                                   [&](unsigned, VariantResult result) {
                                     replayed = std::move(result);
                                   });
          })) {
        releaseErrorCapturesAfterCrash();
        VariantResult crashed;
        crashed.error = crashMessage(crc, "");
        finished(e, std::move(crashed));
        return;
      }
      returned = true;
      if (failed(status)) {
        setupFailed = true;
        return;
      }
      if (replayed)
        finished(e, std::move(*replayed));
    };
  };

  // The variants waiting for each shared ISA group's compile, the first of
  // each group compiling it.
  std::map<unsigned, std::vector<unsigned>> waitingForIsa;
  SmallVector<unsigned> producers;
  std::vector<std::function<void()>> ready;
  for (unsigned e : entries) {
    releaser.variantQueued();
    std::optional<unsigned> group =
        plan.reuseIsa ? plan.entries[e].isaGroup : std::nullopt;
    if (!group) {
      ready.push_back(variantTask(e));
      continue;
    }
    std::vector<unsigned> &waiting = waitingForIsa[*group];
    if (waiting.empty())
      producers.push_back(e);
    waiting.push_back(e);
  }

  SweepScheduler::Queue queue(sweeps, threadPool, variantCost);
  // Its first variant makes the state the others continue from: they had
  // better start after.
  if (rocdlSweepsOpenWithAState() &&
      anyTargetOf(getTargetedGpuModules(work.preBinary), TargetFamily::ROCDL))
    queue.openHeldBack();
  variantQueue.hold = &queue;
  // What the backend keeps for the later ISA compiles (VariantQueue.h).
  VariantQueue isaQueue(producers.size(), threads);
  isaQueue.hold = &queue;
  // Each shared ISA compile alone, then its group's variants; crashed or
  // failed, they report it or stop.
  std::vector<std::function<void()>> isaTasks;
  for (unsigned e : producers) {
    isaTasks.push_back([&, e] {
      unsigned group = *plan.entries[e].isaGroup;
      llvm::scope_exit readyNow([&] {
        std::vector<std::function<void()>> variants;
        for (unsigned v : waitingForIsa.at(group))
          variants.push_back(variantTask(v));
        queue.add(std::move(variants));
      });
      ScopedVariantQueue started(isaQueue);
      if (setupFailed || (work.mayStart && !work.mayStart()))
        return;
      TimeTraceThreadScope threadTrace;
      TimeTraceScope span("Shared ISA", [&] { return spanDetail(e); });
      LogicalResult prepared = failure();
      CrashRecoveryContext crc;
      if (!crc.RunSafely([&] {
            prepared = prepareSharedIsa(work.preBinary, plan, {e}, one,
                                        work.nestInSource, work.runPipeline);
          })) {
        releaseErrorCapturesAfterCrash();
        SharedIsa crashed;
        crashed.producer = plan.entries[e].index;
        crashed.error = crashMessage(crc, " compiling the ISA");
        one.sharedIsa->insert(group, std::move(crashed));
        return;
      }
      if (failed(prepared))
        setupFailed = true;
    });
  }
  queue.add(std::move(isaTasks));
  queue.add(std::move(ready));
  queue.wait();
  return failure(setupFailed.load());
}

std::unique_ptr<ReplayExecutor> createBatchExecutor(ExecutorOptions options) {
  return std::make_unique<BatchExecutor>(std::move(options));
}

std::unique_ptr<ReplayExecutor>
createIsolatedExecutor(ExecutorOptions options) {
  return std::make_unique<IsolatedExecutor>(std::move(options));
}

} // namespace fly
