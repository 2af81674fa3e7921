//===- InProcessExecutors.cpp - Batch and crash-isolated replays ----------===//

#include "fly/Executor/Executor.h"
#include "fly/Executor/FatalErrors.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <atomic>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

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

  FailureOr<std::vector<VariantResult>>
  execute(const ReplayWork &work, ArrayRef<unsigned> entries) override {
    ReplayOptions replay;
    replay.maxParallel = options.jobs;
    // The context's thread pool bounds how many variants compile at once.
    // Batches of exactly that many make every batch wait for its slowest
    // variant; larger batches (up to 4 variants per thread, which bounds the
    // hinted copies alive) let a free thread take the next variant.
    MLIRContext *context = work.preBinary.getContext();
    unsigned threads =
        context->isMultithreadingEnabled() ? context->getNumThreads() : 1;
    if (replay.maxParallel == 0 || replay.maxParallel >= threads)
      replay.maxParallel =
          std::max<unsigned>(std::max(replay.maxParallel, threads),
                             std::min<size_t>(entries.size(), 4 * threads));
    return replayPlanned(work.preBinary, work.plan, entries, replay,
                         work.nestInSource, work.runPipeline);
  }

private:
  ExecutorOptions options;
};

/// One variant at a time per thread, each under a CrashRecoveryContext.
class IsolatedExecutor : public ReplayExecutor {
public:
  explicit IsolatedExecutor(ExecutorOptions options)
      : options(std::move(options)) {}
  StringRef getName() const override { return "isolated"; }

  FailureOr<std::vector<VariantResult>>
  execute(const ReplayWork &work, ArrayRef<unsigned> entries) override;

private:
  ExecutorOptions options;
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

/// Gives the allocator's free pages back to the system. Each pool thread
/// allocates from its own glibc arena, which never reuses what phase 1 or
/// another thread freed, so without this the peak RSS of a big sweep is the
/// sum of every arena's high-water mark. A trim costs microseconds to
/// milliseconds; a variant's compile, tens of milliseconds and more.
static void releaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

FailureOr<std::vector<VariantResult>>
IsolatedExecutor::execute(const ReplayWork &work, ArrayRef<unsigned> entries) {
  CrashRecoveryContext::Enable();
  releaseFreeMemory();
  FatalErrorsUnwindCrashRecovery fatalErrors;
  const ReplayPlan &plan = work.plan;
  std::vector<VariantResult> results(entries.size());
  std::atomic<bool> setupFailed{false};
  // Inside a pass (nestInSource) every replay adds its container to the
  // same module: one at a time then.
  // 0 jobs = every hardware thread (hardware_concurrency(0) would be one).
  DefaultThreadPool pool(work.nestInSource ? hardware_concurrency(1)
                         : options.jobs    ? hardware_concurrency(options.jobs)
                                           : hardware_concurrency());
  ReplayOptions one;
  one.maxParallel = 1;
  one.sharedIsa = std::make_shared<SharedIsaTable>();

  // Shared ISA first, each compile alone: the variants then only assemble.
  if (plan.reuseIsa) {
    SmallVector<unsigned> producers;
    for (unsigned e : entries) {
      std::optional<unsigned> group = plan.entries[e].isaGroup;
      if (group && llvm::none_of(producers, [&](unsigned p) {
            return plan.entries[p].isaGroup == group;
          }))
        producers.push_back(e);
    }
    for (unsigned e : producers) {
      pool.async([&, e] {
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
          one.sharedIsa->insert(*plan.entries[e].isaGroup, std::move(crashed));
          return;
        }
        if (failed(prepared))
          setupFailed = true;
      });
    }
    pool.wait();
    if (setupFailed)
      return failure();
  }

  for (auto [k, e] : llvm::enumerate(entries)) {
    pool.async([&, k = k, e = e] {
      FailureOr<std::vector<VariantResult>> replayed = failure();
      CrashRecoveryContext crc;
      if (!crc.RunSafely([&] {
            replayed = replayPlanned(work.preBinary, plan, {e}, one,
                                     work.nestInSource, work.runPipeline);
          })) {
        releaseErrorCapturesAfterCrash();
        const PlanEntry &entry = plan.entries[e];
        VariantResult &crashed = results[k];
        crashed.index = entry.index;
        crashed.id = entry.id;
        crashed.hints = entry.hints;
        crashed.binaryPass = entry.binaryPass;
        crashed.error = crashMessage(crc, "");
        return;
      }
      if (failed(replayed)) {
        setupFailed = true;
        return;
      }
      results[k] = std::move(replayed->front());
      releaseFreeMemory();
    });
  }
  pool.wait();
  if (setupFailed)
    return failure();
  return results;
}

std::unique_ptr<ReplayExecutor> createBatchExecutor(ExecutorOptions options) {
  return std::make_unique<BatchExecutor>(std::move(options));
}

std::unique_ptr<ReplayExecutor>
createIsolatedExecutor(ExecutorOptions options) {
  return std::make_unique<IsolatedExecutor>(std::move(options));
}

} // namespace fly
