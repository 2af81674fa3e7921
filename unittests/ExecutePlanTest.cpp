//===- ExecutePlanTest.cpp - executePlan holds every executor to one result
//===//
//
// executePlan alone labels results, copies identical entries and marks
// duplicates: the same plan through every executor gives the same results,
// and a copy never reaches an executor. Also: what a cancel leaves is
// skipped as cancelled, and a sweep's kernels share one executor.
//
//===----------------------------------------------------------------------===//

#include "Support/Environment.h"
#include "fly/Backend/VariantQueue.h"
#include "fly/Compiler/Registration.h"
#include "fly/Compiler/SplitCompiler.h"
#include "fly/Executor/Executor.h"
#include "fly/Executor/SlurmExecutor.h"
#include "fly/Executor/WorkDir.h"
#include "fly/Replay/ReplayPlan.h"
#include "fly/Support/InstallLocation.h"
#include "fly/Transforms/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "gtest/gtest.h"

using namespace mlir;
using namespace fly;

namespace {

constexpr llvm::StringLiteral kModule = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @a [#rocdl.target<chip = "gfx942">] {
    llvm.func @ka(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
      %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
      %1 = llvm.fadd %0, %0 : f32
      llvm.store %1, %arg0 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
)mlir";

/// What an executor was handed and ran: calls, entries, results, replay
/// pipelines (in process only; the process and slurm executors run theirs
/// in children).
struct ExecutorCounts {
  std::mutex mutex;
  unsigned calls = 0;
  std::vector<unsigned> sent, delivered;
  bool unlabelled = true;
  std::atomic<int> running{0}, mostAtOnce{0}, pipelines{0};
};

/// Counts what the wrapped executor is handed into `counts`, which may
/// outlive it.
class CountingExecutor : public ReplayExecutor {
public:
  CountingExecutor(std::unique_ptr<ReplayExecutor> inner,
                   ExecutorCounts &counts)
      : inner(std::move(inner)), counts(counts) {}
  llvm::StringRef getName() const override { return inner->getName(); }
  LogicalResult execute(const ReplayWork &work,
                        llvm::ArrayRef<unsigned> entries,
                        const VariantSink &finished) override {
    {
      std::lock_guard<std::mutex> lock(counts.mutex);
      ++counts.calls;
      llvm::append_range(counts.sent, entries);
    }
    auto counting = [this, runner = work.runPipeline](OpPassManager &pipeline,
                                                      ModuleOp container) {
      int now = ++counts.running;
      for (int seen = counts.mostAtOnce; now > seen;)
        counts.mostAtOnce.compare_exchange_weak(seen, now);
      LogicalResult status = runner(pipeline, container);
      --counts.running;
      ++counts.pipelines;
      return status;
    };
    ReplayWork counted = work;
    counted.runPipeline = counting; // A function_ref: `counting` outlives it.
    return inner->execute(counted, entries,
                          [&](unsigned e, VariantResult result) {
                            {
                              std::lock_guard<std::mutex> lock(counts.mutex);
                              counts.delivered.push_back(e);
                              counts.unlabelled &= result.id.empty();
                            }
                            finished(e, std::move(result));
                          });
  }

private:
  std::unique_ptr<ReplayExecutor> inner;
  ExecutorCounts &counts;
};

/// What executePlan must make the same whatever compiled it.
struct Outcome {
  unsigned index;
  std::string id, hints, binaryPass;
  std::optional<unsigned> duplicateOf;
  bool succeeded, skipped;
  uint64_t objectHash;
  bool operator==(const Outcome &o) const {
    return std::tie(index, id, hints, binaryPass, duplicateOf, succeeded,
                    skipped, objectHash) ==
           std::tie(o.index, o.id, o.hints, o.binaryPass, o.duplicateOf,
                    o.succeeded, o.skipped, o.objectHash);
  }
};

std::ostream &operator<<(std::ostream &os, const Outcome &o) {
  return os << o.id << " index=" << o.index << " hints=" << o.hints
            << " dup=" << (o.duplicateOf ? std::to_string(*o.duplicateOf) : "-")
            << " ok=" << o.succeeded << " skipped=" << o.skipped
            << " hash=" << o.objectHash;
}

class ExecutePlanTest : public ::testing::Test {
protected:
  ExecutePlanTest() {
    static bool registered = [] {
      registerAllPasses();
      registerFlySnapshotPasses();
      return true;
    }();
    (void)registered;
    registerCompilerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kModule, &context);
  }

  /// With `reuseIsa`, objects (format=bin), so that the ISA is shared.
  FailureOr<ReplayPlan> plan(llvm::StringRef sets,
                             std::vector<unsigned> labels = {},
                             bool reuseIsa = false) {
    llvm::Expected<std::vector<HintSet>> hintSets = parseHintSets(sets);
    EXPECT_TRUE(bool(hintSets));
    if (!hintSets)
      return failure();
    FailureOr<BinaryPassOptions> binaryPass =
        parseBinaryPass(reuseIsa ? "gpu-module-to-binary{format=bin}"
                                 : "gpu-module-to-binary{format=isa}",
                        UnknownLoc::get(&context));
    if (failed(binaryPass))
      return failure();
    ReplayPlanOptions options;
    options.labels = std::move(labels);
    options.reuseIsa = reuseIsa;
    return buildReplayPlan(*module, *binaryPass, *hintSets, options);
  }

  /// Runs a replay pipeline on a plain pass manager (PipelineRunner is a
  /// function_ref to this).
  std::function<LogicalResult(OpPassManager &, ModuleOp)> plainRunner =
      [this](OpPassManager &pipeline, ModuleOp container) {
        PassManager pm(&context, pipeline.getOpAnchorName());
        static_cast<OpPassManager &>(pm) = pipeline;
        return pm.run(container);
      };

  /// plainRunner, noting what VariantQueue says at each replay into `seen`.
  std::function<LogicalResult(OpPassManager &, ModuleOp)>
  recordingQueues(std::vector<std::optional<VariantQueueCounts>> &seen) {
    return [this, &seen](OpPassManager &pipeline, ModuleOp container) {
      seen.push_back(getCurrentVariantQueue());
      return plainRunner(pipeline, container);
    };
  }

  /// The executors this machine can run: batch, isolated, process (with a
  /// fly-tune beside this test) and slurm (with a test cluster named by
  /// FLY_TEST_SLURM_CONF, as for test/Slurm).
  std::vector<std::pair<std::string, std::unique_ptr<ReplayExecutor>>>
  executors(unsigned jobs = 0) {
    std::vector<std::pair<std::string, std::unique_ptr<ReplayExecutor>>> all;
    ExecutorOptions options;
    options.jobs = jobs;
    for (ExecutorKind kind :
         {ExecutorKind::Batch, ExecutorKind::Isolated, ExecutorKind::Process}) {
      if (kind == ExecutorKind::Process && findChildTool().empty())
        continue;
      std::unique_ptr<ReplayExecutor> executor =
          createReplayExecutor(kind, options);
      std::string name = executor->getName().str();
      all.emplace_back(name, std::move(executor));
    }
    if (const char *conf = std::getenv("FLY_TEST_SLURM_CONF");
        conf && *conf && !findChildTool().empty()) {
      // Only Slurm's own commands read it; the test's children inherit it.
      ::setenv("SLURM_CONF", conf, /*overwrite=*/1);
      SlurmExecutorOptions slurm;
      llvm::SmallString<128> dir;
      EXPECT_FALSE(
          llvm::sys::fs::createUniqueDirectory("fly-execute-plan", dir));
      slurm.workDirParent = std::string(dir);
      scratchDirs.push_back(slurm.workDirParent);
      slurm.variantSeconds = 1; // Measured, it would replay one here.
      slurm.timeoutSeconds = 300;
      all.emplace_back("slurm", createSlurmExecutor(slurm));
    }
    return all;
  }

  ~ExecutePlanTest() override {
    for (const std::string &dir : scratchDirs)
      llvm::sys::fs::remove_directories(dir);
  }

  DialectRegistry registry;
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::vector<std::string> scratchDirs;
};

TEST_F(ExecutePlanTest, EveryExecutorGivesTheSameResults) {
  ASSERT_TRUE(module);
  // Labels that are not positions; entry 2 is identical to entry 0, entry 3
  // cannot compile, entry 1 is requested twice.
  FailureOr<ReplayPlan> replayPlan =
      plan("waves_per_eu=2;O=1;waves_per_eu=2;"
           "target.triple=nonsense-unknown-none;maxnreg=64",
           {10, 11, 12, 13, 14});
  ASSERT_TRUE(succeeded(replayPlan));
  ASSERT_EQ(replayPlan->entries[2].sameAs, 0u);
  std::vector<unsigned> requested = {0, 1, 2, 3, 4, 1};
  ReplayWork work{*module, *replayPlan, plainRunner, /*nestInSource=*/false};

  std::optional<std::vector<Outcome>> reference;
  std::string referenceName;
  for (auto &[name, inner] : executors()) {
    SCOPED_TRACE(name);
    ExecutorCounts counts;
    CountingExecutor executor(std::move(inner), counts);
    std::vector<std::pair<unsigned, VariantOrigin>> finished;
    ExecutePlanOptions options;
    options.finished = [&](unsigned e, const VariantResult &,
                           VariantOrigin origin) {
      finished.emplace_back(e, origin);
    };
    FailureOr<std::vector<VariantResult>> results =
        executePlan(executor, work, requested, options);
    ASSERT_TRUE(succeeded(results));
    ASSERT_EQ(results->size(), requested.size());

    // Only the distinct entries reached the executor, once each, and came
    // back once each, unlabelled.
    llvm::sort(counts.sent);
    llvm::sort(counts.delivered);
    EXPECT_EQ(counts.sent, (std::vector<unsigned>{0, 1, 3, 4}));
    EXPECT_EQ(counts.delivered, counts.sent);
    EXPECT_TRUE(counts.unlabelled);
    // One report per requested entry; the copies are reported as copies.
    ASSERT_EQ(finished.size(), requested.size());
    unsigned copies = 0;
    for (auto [e, origin] : finished)
      copies += origin == VariantOrigin::Copied;
    EXPECT_EQ(copies, 2u);

    std::vector<Outcome> outcomes;
    for (auto [k, result] : llvm::enumerate(*results)) {
      const PlanEntry &entry = replayPlan->entries[requested[k]];
      EXPECT_EQ(result.index, entry.index);
      EXPECT_EQ(result.id, entry.id);
      EXPECT_TRUE(result.hints == entry.hints) << result.hints.canonical();
      EXPECT_EQ(result.binaryPass, entry.binaryPass);
      outcomes.push_back({result.index, result.id, result.hints.canonical(),
                          result.binaryPass, result.duplicateOf,
                          result.succeeded(), result.skipped,
                          result.objectHash});
    }
    for (unsigned k : {0, 1, 2, 4, 5})
      EXPECT_TRUE((*results)[k].succeeded()) << (*results)[k].error;
    EXPECT_FALSE((*results)[3].succeeded());
    EXPECT_FALSE((*results)[3].skipped);
    EXPECT_NE((*results)[3].error.find("nonsense-unknown-none"),
              std::string::npos)
        << (*results)[3].error;
    // Duplicates by object bytes (this small kernel's hints change little):
    // the first of each is no duplicate, a copy always is one.
    EXPECT_FALSE((*results)[0].duplicateOf);
    EXPECT_EQ((*results)[2].duplicateOf, 10u);
    EXPECT_TRUE((*results)[5].duplicateOf);
    EXPECT_FALSE((*results)[3].duplicateOf);
    EXPECT_EQ((*results)[5].objects.size(), (*results)[1].objects.size());
    EXPECT_EQ((*results)[5].objectHash, (*results)[1].objectHash);
    if (!reference) {
      reference = outcomes;
      referenceName = name;
      continue;
    }
    EXPECT_EQ(outcomes, *reference) << name << " vs " << referenceName;
  }
  ASSERT_TRUE(reference);
}

TEST_F(ExecutePlanTest, CancelledVariantsAreSkippedAsCancelled) {
  ASSERT_TRUE(module);
  FailureOr<ReplayPlan> replayPlan = plan("O=1;O=2;O=3");
  ASSERT_TRUE(succeeded(replayPlan));
  for (auto &[name, inner] : executors()) {
    SCOPED_TRACE(name);
    ExecutorCounts counts;
    CountingExecutor executor(std::move(inner), counts);
    // Cancelled before anything started: nothing compiles, every variant
    // is skipped and says why (not "returned no result").
    unsigned asked = 0;
    ReplayWork work{*module, *replayPlan, plainRunner, false, [&] {
                      ++asked;
                      return false;
                    }};
    FailureOr<std::vector<VariantResult>> results =
        executePlan(executor, work, replayPlan->all());
    ASSERT_TRUE(succeeded(results));
    EXPECT_GT(asked, 0u);
    EXPECT_TRUE(counts.delivered.empty());
    for (const VariantResult &result : *results) {
      EXPECT_TRUE(result.skipped) << result.id << ": " << result.error;
      EXPECT_EQ(result.error, "skipped: cancelled before it started");
    }
  }
}

TEST_F(ExecutePlanTest, ACancelMidwaySkipsWhatHadNotStarted) {
  ASSERT_TRUE(module);
  FailureOr<ReplayPlan> replayPlan = plan("O=1;O=2;O=3");
  ASSERT_TRUE(succeeded(replayPlan));
  // One variant at a time: the first starts, then the front end cancels.
  ExecutorOptions one;
  one.jobs = 1;
  ExecutorCounts counts;
  CountingExecutor executor(createReplayExecutor(ExecutorKind::Isolated, one),
                            counts);
  std::atomic<unsigned> started{0};
  ReplayWork work{*module, *replayPlan, plainRunner, false,
                  [&] { return started++ == 0; }};
  ExecutePlanOptions options;
  options.timeBudgetSeconds = 3600; // Not what stops them.
  FailureOr<std::vector<VariantResult>> results =
      executePlan(executor, work, replayPlan->all(), options);
  ASSERT_TRUE(succeeded(results));
  EXPECT_TRUE((*results)[0].succeeded()) << (*results)[0].error;
  for (unsigned k : {1, 2}) {
    EXPECT_TRUE((*results)[k].skipped);
    EXPECT_EQ((*results)[k].error, "skipped: cancelled before it started");
  }
  EXPECT_EQ(counts.pipelines.load(), 1);
}

TEST_F(ExecutePlanTest, TheIsolatedExecutorSaysWhatIsLeftOfTheSweep) {
  // What the backend reads to decide whether to keep anything for later
  // compiles (VariantQueue.h): one variant at a time, in order, or with
  // reuse-isa, one ISA compile at a time (a stage before the variants').
  ASSERT_TRUE(module);
  ExecutorOptions one;
  one.jobs = 1;
  std::vector<std::optional<VariantQueueCounts>> seen;
  auto recording = recordingQueues(seen);
  for (bool reuseIsa : {false, true}) {
    FailureOr<ReplayPlan> replayPlan =
        plan("maxnreg=64;maxnreg=96;maxnreg=128", {}, reuseIsa);
    ASSERT_TRUE(succeeded(replayPlan));
    for (ExecutorKind kind : {ExecutorKind::Isolated, ExecutorKind::Batch}) {
      seen.clear();
      std::unique_ptr<ReplayExecutor> executor =
          createReplayExecutor(kind, one);
      ReplayWork work{*module, *replayPlan, recording, false};
      FailureOr<std::vector<VariantResult>> results =
          executePlan(*executor, work, replayPlan->all(), {});
      ASSERT_TRUE(succeeded(results));
      ASSERT_EQ(seen.size(), reuseIsa ? 6u : 3u);
      for (size_t k = 0; k < seen.size(); ++k) {
        SCOPED_TRACE("reuse-isa " + std::to_string(reuseIsa) + ", call " +
                     std::to_string(k));
        if (kind == ExecutorKind::Batch) {
          // Its variants compile on the context's threads: not known there.
          EXPECT_FALSE(seen[k]);
          continue;
        }
        ASSERT_TRUE(seen[k]);
        EXPECT_EQ(seen[k]->notStarted, 2 - k % 3);
        EXPECT_EQ(seen[k]->running, 1u);
      }
    }
  }
  EXPECT_FALSE(getCurrentVariantQueue());
}

TEST_F(ExecutePlanTest, AChildSaysWhatIsLeftOfItsShard) {
  // fly-tune --run-plan with --jobs=1, as the process executor starts it.
  ASSERT_TRUE(module);
  FailureOr<ReplayPlan> replayPlan =
      plan("maxnreg=64;maxnreg=96;maxnreg=128", {}, /*reuseIsa=*/true);
  ASSERT_TRUE(succeeded(replayPlan));
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-queue-test", dir));
  ASSERT_FALSE(bool(writeReplayWorkDir(dir, *module, *replayPlan)));
  std::vector<std::optional<VariantQueueCounts>> seen;
  auto recording = recordingQueues(seen);
  EXPECT_TRUE(succeeded(
      replayWorkDirEntries(dir, "0,2", context, /*jobs=*/1, recording)));
  llvm::sys::fs::remove_directories(dir);
  // Each entry compiles its ISA, then assembles it.
  ASSERT_EQ(seen.size(), 4u);
  for (size_t k = 0; k < seen.size(); ++k) {
    SCOPED_TRACE("call " + std::to_string(k));
    ASSERT_TRUE(seen[k]);
    EXPECT_EQ(seen[k]->notStarted, 1 - k / 2);
    EXPECT_EQ(seen[k]->running, 1u);
  }
  EXPECT_FALSE(getCurrentVariantQueue());
}

TEST_F(ExecutePlanTest, AResultCompiledElsewhereIsSettledAsTheOthers) {
  ASSERT_TRUE(module);
  // Entry 0 is compiled outside any executor (a client pipeline's own run):
  // executePlan labels it, copies it to the entry identical to it (2) and
  // marks that copy, and sends only entry 1 to the executor.
  FailureOr<ReplayPlan> replayPlan = plan("O=1;O=2;O=1", {20, 21, 22});
  ASSERT_TRUE(succeeded(replayPlan));
  ASSERT_EQ(replayPlan->entries[2].sameAs, 0u);
  ReplayWork work{*module, *replayPlan, plainRunner, /*nestInSource=*/false};
  std::unique_ptr<ReplayExecutor> batch =
      createReplayExecutor(ExecutorKind::Batch, {});
  FailureOr<std::vector<VariantResult>> first = executePlan(*batch, work, {0});
  ASSERT_TRUE(succeeded(first));
  ASSERT_TRUE((*first)[0].succeeded()) << (*first)[0].error;
  VariantResult elsewhere;
  elsewhere.binaries = (*first)[0].binaries;
  elsewhere.objects = (*first)[0].objects;
  elsewhere.objectHash = (*first)[0].objectHash;

  ExecutorCounts counts;
  CountingExecutor executor(createReplayExecutor(ExecutorKind::Batch, {}),
                            counts);
  std::vector<std::pair<unsigned, VariantOrigin>> finished;
  ExecutePlanOptions options;
  options.compiledElsewhere.emplace(0, elsewhere);
  options.finished = [&](unsigned e, const VariantResult &,
                         VariantOrigin origin) {
    finished.emplace_back(e, origin);
  };
  FailureOr<std::vector<VariantResult>> results =
      executePlan(executor, work, replayPlan->all(), options);
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ(counts.sent, (std::vector<unsigned>{1}));
  ASSERT_EQ(results->size(), 3u);
  for (auto [k, result] : llvm::enumerate(*results)) {
    EXPECT_TRUE(result.succeeded()) << result.error;
    EXPECT_EQ(result.id, replayPlan->entries[k].id);
    EXPECT_EQ(result.index, 20 + k);
    EXPECT_EQ(result.binaryPass, replayPlan->entries[k].binaryPass);
  }
  EXPECT_EQ((*results)[2].objectHash, elsewhere.objectHash);
  EXPECT_FALSE((*results)[0].duplicateOf);
  EXPECT_EQ((*results)[2].duplicateOf, 20u);
  llvm::sort(finished);
  EXPECT_EQ(finished, (std::vector<std::pair<unsigned, VariantOrigin>>{
                          {0, VariantOrigin::Compiled},
                          {1, VariantOrigin::Compiled},
                          {2, VariantOrigin::Copied}}));
}

TEST_F(ExecutePlanTest, ASweepsKernelsShareOneExecutor) {
  ASSERT_TRUE(module);
  // Two kernels of one sweep, one variant at a time: one executor for both,
  // called once per kernel, and never more than `jobs` replays at once
  // across the kernels (an executor per kernel could run one each).
  std::string source;
  llvm::raw_string_ostream(source) << *module;
  SplitCompilerOptions options;
  options.cache.enabled = false;
  options.jobs = 1;
  unsigned made = 0;
  ExecutorCounts counts;
  options.makeExecutor = [&]() -> std::unique_ptr<ReplayExecutor> {
    ++made;
    ExecutorOptions one;
    one.jobs = 1;
    return std::make_unique<CountingExecutor>(
        createReplayExecutor(ExecutorKind::Isolated, one), counts);
  };
  std::vector<CompileJob> jobs(2);
  for (auto [k, job] : llvm::enumerate(jobs)) {
    job.source = source;
    job.sourceName = "kernel" + std::to_string(k);
    job.pipeline = "builtin.module(gpu-module-to-binary{format=isa})";
    job.chip = "gfx942";
    llvm::Expected<std::vector<HintSet>> sets = parseHintSets("O=1;O=2;O=3");
    ASSERT_TRUE(bool(sets));
    job.hintSets = *sets;
  }
  SplitCompiler compiler(context, options);
  std::vector<FailureOr<CompileResult>> results = compiler.compileMany(jobs);
  ASSERT_EQ(results.size(), 2u);
  for (FailureOr<CompileResult> &result : results) {
    ASSERT_TRUE(succeeded(result));
    ASSERT_EQ(result->variants.size(), 3u);
    for (const VariantResult &variant : result->variants)
      EXPECT_TRUE(variant.succeeded()) << variant.error;
  }
  EXPECT_EQ(made, 1u);
  EXPECT_EQ(counts.calls, 2u);
  EXPECT_EQ(counts.pipelines.load(), 6);
  EXPECT_EQ(counts.mostAtOnce.load(), 1);
}

} // namespace

namespace {
/// Plan entries' variants by cache key in memory, their locks real ones in
/// `dir`.
class MemoryPlanCache : public PlanCache {
public:
  explicit MemoryPlanCache(std::string dir) : dir(std::move(dir)) {}
  std::optional<VariantResult> lookup(const PlanEntry &entry) override {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = stored.find(entry.cacheKey);
    if (it == stored.end())
      return std::nullopt;
    return it->second;
  }
  std::unique_ptr<CacheKeyLock> lock(const PlanEntry &entry) override {
    return std::make_unique<CacheKeyLock>(dir + "/" + entry.cacheKey);
  }
  void store(const PlanEntry &entry, const VariantResult &result) override {
    std::lock_guard<std::mutex> lock(mutex);
    stored[entry.cacheKey] = result;
  }

private:
  std::string dir;
  std::mutex mutex;
  std::map<std::string, VariantResult> stored;
};
} // namespace

// Two processes that each wait for keys the other holds must not each keep
// a key that frees up while they wait for the rest: the other, waiting for
// it, would wait until the lock timeout. Here another process (a lock file
// naming a live child) holds both keys; as it stores the first and lets go,
// that variant is read and settled at once, its lock let go of again, while
// the second is still waited for.
TEST_F(ExecutePlanTest, AKeyLetGoOfWhileWaitingIsReadAndLetGoOfAtOnce) {
  ASSERT_TRUE(module);
  FailureOr<ReplayPlan> replayPlan = plan("O=1;O=2");
  ASSERT_TRUE(succeeded(replayPlan));
  replayPlan->entries[0].cacheKey = "key0";
  replayPlan->entries[1].cacheKey = "key1";
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-lock-wait", dir));
  scratchDirs.push_back(std::string(dir));
  llvm::ErrorOr<std::string> sleep = llvm::sys::findProgramByName("sleep");
  ASSERT_TRUE(bool(sleep));
  llvm::StringRef args[] = {"sleep", "600"};
  llvm::sys::ProcessInfo owner = llvm::sys::ExecuteNoWait(*sleep, args, {});
  ASSERT_GT(owner.Pid, 0);
  auto lockFile = [&](unsigned k) {
    return (dir + "/key" + llvm::Twine(k) + ".lock").str();
  };
  for (unsigned k : {0u, 1u}) {
    std::error_code ec;
    llvm::raw_fd_ostream os(lockFile(k), ec);
    ASSERT_FALSE(ec);
    os << getHostName() << " " << owner.Pid;
  }
  MemoryPlanCache cache{std::string(dir)};
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<unsigned> finished;
  bool planned = false;
  ExecutePlanOptions options;
  options.cache = &cache;
  // Both keys looked up and found locked: waited for from now on.
  options.planned = [&](unsigned cached, unsigned compiling) {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(cached, 0u);
    EXPECT_EQ(compiling, 2u);
    planned = true;
    changed.notify_all();
  };
  options.finished = [&](unsigned entry, const VariantResult &,
                         VariantOrigin origin) {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(origin, VariantOrigin::Cached);
    finished.push_back(entry);
    changed.notify_all();
  };
  ExecutorCounts counts;
  CountingExecutor executor(
      createReplayExecutor(ExecutorKind::Isolated, ExecutorOptions()), counts);
  ReplayWork work{*module, *replayPlan, plainRunner};
  std::optional<FailureOr<std::vector<VariantResult>>> results;
  std::thread running([&] {
    results = executePlan(executor, work, replayPlan->all(), options);
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::minutes(1),
                                 [&] { return planned; }));
  }
  // The owner stores the first and lets go of it.
  cache.store(replayPlan->entries[0], VariantResult());
  llvm::sys::fs::remove(lockFile(0));
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::minutes(1),
                                 [&] { return !finished.empty(); }));
    EXPECT_EQ(finished, std::vector<unsigned>{0});
  }
  // Let go of again: another process takes it at once.
  EXPECT_FALSE(llvm::sys::fs::exists(lockFile(0)));
  cache.store(replayPlan->entries[1], VariantResult());
  llvm::sys::fs::remove(lockFile(1));
  running.join();
  ::kill(owner.Pid, SIGKILL);
  llvm::sys::Wait(owner, std::nullopt);
  ASSERT_TRUE(results && succeeded(*results));
  EXPECT_EQ((*results)->size(), 2u);
  EXPECT_EQ(finished, (std::vector<unsigned>{0, 1}));
  // Nothing compiled here.
  EXPECT_EQ(counts.calls, 0u);
}
