//===- ReplayPlanTest.cpp - The plan: checks once, round-trips as JSON ----===//

#include "fly/Replay/ReplayPlan.h"

#include "fly/Compiler/Registration.h"
#include "fly/Executor/Executor.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Pipeline/ReplayInstrumentation.h"
#include "fly/Replay/Replay.h"

#include "fly/Support/InstallLocation.h"
#include "fly/Transforms/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Threading.h"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"

using namespace mlir;
using namespace fly;

namespace {

// Two targeted gpu.modules, one kernel each.
constexpr llvm::StringLiteral kTwoModules = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @a [#rocdl.target<chip = "gfx942">] {
    llvm.func @ka(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
      %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
      %1 = llvm.fadd %0, %0 : f32
      llvm.store %1, %arg0 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
  gpu.module @b [#rocdl.target<chip = "gfx942">] {
    llvm.func @kb(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
      %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
      llvm.store %0, %arg0 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
)mlir";

class ReplayPlanTest : public ::testing::Test {
protected:
  ReplayPlanTest() {
    static bool registered = [] {
      registerAllPasses();
      registerFlySnapshotPasses();
      return true;
    }();
    (void)registered;
    registerCompilerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kTwoModules, &context);
  }

  static std::vector<HintSet> hintSets(llvm::StringRef text) {
    llvm::Expected<std::vector<HintSet>> sets = parseHintSets(text);
    EXPECT_TRUE(bool(sets));
    return sets ? *sets : std::vector<HintSet>();
  }

  /// The plan of `sets` for the binary pass with format=isa.
  FailureOr<ReplayPlan> planIsa(llvm::ArrayRef<HintSet> sets,
                                bool reuseIsa = false) {
    FailureOr<BinaryPassOptions> binaryPass = parseBinaryPass(
        "gpu-module-to-binary{format=isa}", UnknownLoc::get(&context));
    if (failed(binaryPass))
      return failure();
    ReplayPlanOptions options;
    options.reuseIsa = reuseIsa;
    return buildReplayPlan(*module, *binaryPass, sets, options);
  }

  /// Every entry of `plan` on executor `kind`, each replay pipeline run by
  /// `runPipeline` (default: a plain pass manager).
  FailureOr<std::vector<VariantResult>>
  executeAll(const ReplayPlan &plan, ExecutorKind kind,
             PipelineRunner runPipeline = nullptr) {
    auto plain = [&](OpPassManager &pipeline, ModuleOp container) {
      return runPlain(pipeline, container);
    };
    std::unique_ptr<ReplayExecutor> executor =
        createReplayExecutor(kind, ExecutorOptions());
    ReplayWork work{*module, plan, runPipeline ? runPipeline : plain,
                    /*nestInSource=*/false};
    return executePlan(*executor, work, plan.all());
  }

  LogicalResult runPlain(OpPassManager &pipeline, ModuleOp container) {
    PassManager pm(&context, pipeline.getOpAnchorName());
    static_cast<OpPassManager &>(pm) = pipeline;
    return pm.run(container);
  }

  DialectRegistry registry;
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ReplayPlanTest, EachHintSetIsCheckedOncePerGpuModule) {
  ASSERT_TRUE(module);
  // Four hint sets, one listed twice, over two gpu.modules: 8 checks for a
  // whole replay (plan, dedupe, compile, results), however it runs.
  std::vector<HintSet> sets =
      hintSets("waves_per_eu=2;O=1;waves_per_eu=2;maxnreg=64");
  for (bool reuseIsa : {false, true}) {
    uint64_t before = getHintCheckCount();
    FailureOr<ReplayPlan> plan = planIsa(sets, reuseIsa);
    ASSERT_TRUE(succeeded(plan));
    FailureOr<std::vector<VariantResult>> results =
        executeAll(*plan, ExecutorKind::Batch);
    ASSERT_TRUE(succeeded(results));
    EXPECT_EQ(getHintCheckCount() - before, sets.size() * 2);
    for (const VariantResult &result : *results)
      EXPECT_TRUE(result.succeeded()) << result.error;
    EXPECT_EQ((*results)[2].duplicateOf, 0u);
  }
}

TEST_F(ReplayPlanTest, InstrumentationChecksEachHintSetOncePerGpuModule) {
  ASSERT_TRUE(module);
  // Through a client's own pass manager: the primary hint set compiles in
  // the pipeline's run, the others replay; still one check each per module.
  std::vector<HintSet> sets = hintSets("O=1;waves_per_eu=2;O=1;maxnreg=64");
  std::vector<VariantResult> variants;
  std::mutex variantsMutex;
  PassManager pm(&context);
  ASSERT_TRUE(
      succeeded(parsePassPipeline("gpu-module-to-binary{format=isa}", pm)));
  pm.addInstrumentation(std::make_unique<ReplayInstrumentation>(
      sets,
      [&](VariantResult variant) {
        std::lock_guard<std::mutex> lock(variantsMutex);
        variants.push_back(std::move(variant));
      },
      ReplayInstrumentation::Options()));
  uint64_t before = getHintCheckCount();
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(getHintCheckCount() - before, sets.size() * 2);
  ASSERT_EQ(variants.size(), sets.size());
  for (auto [k, variant] : llvm::enumerate(variants)) {
    EXPECT_TRUE(variant.succeeded()) << variant.id << ": " << variant.error;
    EXPECT_EQ(variant.index, k);
  }
  // Set 3 repeats the primary that the pipeline compiled: executePlan copies
  // and marks it like any other.
  EXPECT_FALSE(variants[0].duplicateOf);
  EXPECT_EQ(variants[2].duplicateOf, 0u);
  EXPECT_EQ(variants[2].objectHash, variants[0].objectHash);
}

TEST_F(ReplayPlanTest, IsolatedExecutorUsesEveryThreadByDefault) {
  ASSERT_TRUE(module);
  if (llvm::hardware_concurrency().compute_thread_count() < 2)
    GTEST_SKIP() << "one hardware thread";
  // jobs = 0 means every hardware thread: two variants must overlap (they
  // ran one at a time once, halving isolated sweeps' speed).
  FailureOr<ReplayPlan> plan = planIsa(hintSets("O=1;O=2"));
  ASSERT_TRUE(succeeded(plan));
  std::atomic<int> running{0}, mostAtOnce{0};
  auto runner = [&](OpPassManager &pipeline, ModuleOp container) {
    int now = ++running;
    for (int seen = mostAtOnce; now > seen;)
      mostAtOnce.compare_exchange_weak(seen, now);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    LogicalResult result = runPlain(pipeline, container);
    --running;
    return result;
  };
  FailureOr<std::vector<VariantResult>> results =
      executeAll(*plan, ExecutorKind::Isolated, runner);
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ(mostAtOnce.load(), 2);
}

/// Wraps an executor and records what it hands over: which entries, what
/// labels, and whether executePlan passed each on while still compiling.
class RecordingExecutor : public ReplayExecutor {
public:
  explicit RecordingExecutor(std::unique_ptr<ReplayExecutor> inner)
      : inner(std::move(inner)) {}
  llvm::StringRef getName() const override { return inner->getName(); }
  LogicalResult execute(const ReplayWork &work,
                        llvm::ArrayRef<unsigned> entries,
                        const VariantSink &finished) override {
    ++calls;
    llvm::append_range(sent, entries);
    compiling = true;
    LogicalResult status =
        inner->execute(work, entries, [&](unsigned e, VariantResult result) {
          std::lock_guard<std::mutex> lock(mutex);
          delivered.push_back(e);
          ownLabels.push_back(result.id);
          finished(e, std::move(result));
        });
    compiling = false;
    return status;
  }

  std::unique_ptr<ReplayExecutor> inner;
  unsigned calls = 0;
  std::vector<unsigned> sent, delivered;
  std::vector<std::string> ownLabels;
  std::atomic<bool> compiling{false};
  std::mutex mutex;
};

/// An in-memory PlanCache that counts its calls.
class MemoryPlanCache : public PlanCache {
public:
  std::optional<VariantResult> lookup(const PlanEntry &entry) override {
    ++lookups;
    auto it = stored.find(entry.id);
    if (it == stored.end())
      return std::nullopt;
    return it->second;
  }
  std::unique_ptr<CacheKeyLock> lock(const PlanEntry &) override {
    ++locks;
    return std::make_unique<CacheKeyLock>();
  }
  void store(const PlanEntry &entry, const VariantResult &result) override {
    stored[entry.id] = result;
  }
  std::map<std::string, VariantResult> stored;
  unsigned lookups = 0, locks = 0;
};

TEST_F(ReplayPlanTest, EveryExecutorHandsItsVariantsToExecutePlan) {
  ASSERT_TRUE(module);
  // Labels that are not positions, one hint set listed twice: executePlan
  // alone labels, copies, caches and marks, whatever compiles.
  FailureOr<BinaryPassOptions> binaryPass = parseBinaryPass(
      "gpu-module-to-binary{format=isa}", UnknownLoc::get(&context));
  ASSERT_TRUE(succeeded(binaryPass));
  ReplayPlanOptions planOptions;
  planOptions.labels = {10, 11, 12, 13};
  FailureOr<ReplayPlan> plan = buildReplayPlan(
      *module, *binaryPass,
      hintSets("waves_per_eu=2;O=1;waves_per_eu=2;maxnreg=64"), planOptions);
  ASSERT_TRUE(succeeded(plan));
  ASSERT_EQ(plan->entries[2].sameAs, 0u);
  auto plain = [&](OpPassManager &pipeline, ModuleOp container) {
    return runPlain(pipeline, container);
  };
  ReplayWork work{*module, *plan, plain, /*nestInSource=*/false};
  for (ExecutorKind kind :
       {ExecutorKind::Batch, ExecutorKind::Isolated, ExecutorKind::Process}) {
    if (kind == ExecutorKind::Process && findChildTool().empty())
      continue; // No fly-tune beside this test.
    SCOPED_TRACE(static_cast<int>(kind));
    MemoryPlanCache cache;
    for (bool warm : {false, true}) {
      RecordingExecutor executor(createReplayExecutor(kind, ExecutorOptions()));
      std::vector<std::pair<unsigned, VariantOrigin>> finished;
      unsigned finishedWhileCompiling = 0;
      std::pair<unsigned, unsigned> planned;
      ExecutePlanOptions options;
      options.cache = &cache;
      options.planned = [&](unsigned cached, unsigned compiling) {
        planned = {cached, compiling};
      };
      options.finished = [&](unsigned e, const VariantResult &result,
                             VariantOrigin origin) {
        EXPECT_EQ(result.index, plan->entries[e].index);
        EXPECT_EQ(result.id, plan->entries[e].id);
        finished.emplace_back(e, origin);
        finishedWhileCompiling += executor.compiling;
      };
      FailureOr<std::vector<VariantResult>> results =
          executePlan(executor, work, plan->all(), options);
      ASSERT_TRUE(succeeded(results));
      ASSERT_EQ(results->size(), 4u);
      for (auto [result, entry] : llvm::zip_equal(*results, plan->entries)) {
        EXPECT_TRUE(result.succeeded()) << result.error;
        EXPECT_EQ(result.index, entry.index);
        EXPECT_EQ(result.id, entry.id);
        EXPECT_TRUE(result.hints == entry.hints);
        EXPECT_EQ(result.binaryPass, entry.binaryPass);
      }
      EXPECT_EQ((*results)[2].duplicateOf, 10u);
      // The copy follows its original at once.
      ASSERT_EQ(finished.size(), 4u);
      auto original =
          llvm::find_if(finished, [](const auto &f) { return f.first == 0; });
      ASSERT_NE(original + 1, finished.end());
      EXPECT_EQ(original[1], std::make_pair(2u, VariantOrigin::Copied));
      if (!warm) {
        // Only distinct entries compile, each handed over once, unlabelled,
        // and passed on (stored) while the others still compile.
        EXPECT_EQ(executor.sent, (std::vector<unsigned>{0, 1, 3}));
        std::vector<unsigned> delivered = executor.delivered;
        llvm::sort(delivered);
        EXPECT_EQ(delivered, executor.sent);
        for (const std::string &label : executor.ownLabels)
          EXPECT_EQ(label, "");
        EXPECT_EQ(finishedWhileCompiling, 4u);
        EXPECT_EQ(planned, std::make_pair(0u, 3u));
        EXPECT_EQ(cache.stored.size(), 3u);
        EXPECT_EQ(cache.locks, 3u);
      } else {
        EXPECT_EQ(executor.calls, 0u);
        EXPECT_EQ(planned, std::make_pair(3u, 0u));
        for (auto [e, origin] : finished)
          EXPECT_EQ(origin,
                    e == 2 ? VariantOrigin::Copied : VariantOrigin::Cached);
      }
    }
    EXPECT_EQ(cache.lookups, 6u);
  }
}

/// A cache that another process fills between executePlan's lookup and its
/// lock: lock() stores the entry from `elsewhere` (that process stored it
/// and let go of its key) and hands out a key this process then owns.
class StoredWhileLockingPlanCache : public MemoryPlanCache {
public:
  StoredWhileLockingPlanCache(const MemoryPlanCache &elsewhere,
                              std::string lockDir)
      : elsewhere(elsewhere), lockDir(std::move(lockDir)) {}
  std::unique_ptr<CacheKeyLock> lock(const PlanEntry &entry) override {
    ++locks;
    stored[entry.id] = elsewhere.stored.at(entry.id);
    return std::make_unique<CacheKeyLock>(lockDir + "/entry" +
                                          std::to_string(locks));
  }

private:
  const MemoryPlanCache &elsewhere;
  std::string lockDir;
};

TEST_F(ReplayPlanTest, EntryStoredBetweenLookupAndLockIsRead) {
  // Each key's lookup misses, and another process stores the entry before
  // this one owns the key: read once the key is ours, not compiled again.
  ASSERT_TRUE(module);
  FailureOr<BinaryPassOptions> binaryPass = parseBinaryPass(
      "gpu-module-to-binary{format=isa}", UnknownLoc::get(&context));
  ASSERT_TRUE(succeeded(binaryPass));
  FailureOr<ReplayPlan> plan =
      buildReplayPlan(*module, *binaryPass, hintSets("waves_per_eu=2;O=1"),
                      ReplayPlanOptions());
  ASSERT_TRUE(succeeded(plan));
  auto plain = [&](OpPassManager &pipeline, ModuleOp container) {
    return runPlain(pipeline, container);
  };
  ReplayWork work{*module, *plan, plain, /*nestInSource=*/false};
  MemoryPlanCache elsewhere;
  {
    std::unique_ptr<ReplayExecutor> executor =
        createReplayExecutor(ExecutorKind::Batch, ExecutorOptions());
    ExecutePlanOptions options;
    options.cache = &elsewhere;
    ASSERT_TRUE(succeeded(executePlan(*executor, work, plan->all(), options)));
    ASSERT_EQ(elsewhere.stored.size(), 2u);
  }
  SmallString<128> lockDir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-plan-lock", lockDir));
  StoredWhileLockingPlanCache cache(elsewhere, lockDir.str().str());
  RecordingExecutor executor(
      createReplayExecutor(ExecutorKind::Batch, ExecutorOptions()));
  std::pair<unsigned, unsigned> planned;
  std::vector<VariantOrigin> origins;
  ExecutePlanOptions options;
  options.cache = &cache;
  options.planned = [&](unsigned cached, unsigned compiling) {
    planned = {cached, compiling};
  };
  options.finished = [&](unsigned, const VariantResult &result,
                         VariantOrigin origin) {
    EXPECT_TRUE(result.succeeded()) << result.error;
    origins.push_back(origin);
  };
  FailureOr<std::vector<VariantResult>> results =
      executePlan(executor, work, plan->all(), options);
  llvm::sys::fs::remove_directories(lockDir);
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ(executor.calls, 0u);
  EXPECT_EQ(planned, std::make_pair(2u, 0u));
  EXPECT_EQ(origins, std::vector<VariantOrigin>(2, VariantOrigin::Cached));
  EXPECT_EQ(cache.locks, 2u);
  EXPECT_EQ(cache.lookups, 4u);
}

TEST_F(ReplayPlanTest, DefaultWavesPerEuIsACopyOnRocdlOnly) {
  ASSERT_TRUE(module);
  std::vector<HintSet> sets = hintSets(
      ";waves_per_eu=1;waves_per_eu=2;maxnreg=64,waves_per_eu=1;maxnreg=64");
  auto sameAs = [&](ModuleOp source, bool capture) {
    FailureOr<BinaryPassOptions> binaryPass = parseBinaryPass(
        "gpu-module-to-binary{format=isa}", UnknownLoc::get(&context));
    EXPECT_TRUE(succeeded(binaryPass));
    ReplayPlanOptions options;
    options.captureIntermediates = capture;
    FailureOr<ReplayPlan> plan =
        buildReplayPlan(source, *binaryPass, sets, options);
    EXPECT_TRUE(succeeded(plan));
    std::vector<std::optional<unsigned>> result;
    if (succeeded(plan))
      for (const PlanEntry &entry : plan->entries)
        result.push_back(entry.sameAs);
    return result;
  };
  using Copies = std::vector<std::optional<unsigned>>;
  const Copies none(sets.size());
  EXPECT_EQ(sameAs(*module, false),
            (Copies{std::nullopt, 0u, std::nullopt, std::nullopt, 3u}));
  // Capturing, every variant hands over its own LLVM IR.
  EXPECT_EQ(sameAs(*module, true), none);
  ::setenv("FLY_DEDUPE_DEFAULTS", "0", 1);
  EXPECT_EQ(sameAs(*module, false), none);
  ::unsetenv("FLY_DEDUPE_DEFAULTS");
}

TEST_F(ReplayPlanTest, DefaultWavesPerEuCompilesUnderIRPrintingFromCode) {
  ASSERT_TRUE(module);
  // The fly-snapshot pass in a pass manager whose IR printing was enabled in
  // code, not by a command-line flag: the copy of the default compiles too,
  // so each variant's binary pass prints its IR.
  auto binaryPassDumps = [&](bool printing) {
    OwningOpRef<ModuleOp> source = module->clone();
    PassManager pm(&context);
    EXPECT_TRUE(succeeded(
        parsePassPipeline("fly-snapshot{hints=\";waves_per_eu=1\" "
                          "binary-pass=\"gpu-module-to-binary{format=isa}\"}",
                          pm)));
    std::string printed;
    llvm::raw_string_ostream os(printed);
    if (printing) {
      context.disableMultithreading();
      pm.enableIRPrinting(
          [](Pass *, Operation *) { return false; },
          [](Pass *pass, Operation *) {
            return pass->getArgument() == "gpu-module-to-binary";
          },
          /*printModuleScope=*/false, /*printAfterOnlyOnChange=*/false,
          /*printAfterOnlyOnFailure=*/false, os);
    }
    std::string remarks;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      remarks += diag.str() + "\n";
      return success();
    });
    EXPECT_TRUE(succeeded(pm.run(*source)));
    context.enableMultithreading();
    size_t dumps = 0;
    for (size_t at = printed.find("IR Dump After"); at != std::string::npos;
         at = printed.find("IR Dump After", at + 1))
      ++dumps;
    return std::make_pair(dumps, remarks);
  };
  auto [plainDumps, plainRemarks] = binaryPassDumps(false);
  EXPECT_EQ(plainDumps, 0u);
  EXPECT_NE(plainRemarks.find("(copied, not compiled)"), std::string::npos)
      << plainRemarks;
  auto [dumps, remarks] = binaryPassDumps(true);
  // One per variant (its container holds both gpu.modules).
  EXPECT_EQ(dumps, 2u);
  EXPECT_NE(remarks.find("makes the same objects as variant 0"),
            std::string::npos)
      << remarks;
  EXPECT_EQ(remarks.find("(copied, not compiled)"), std::string::npos)
      << remarks;
}

TEST_F(ReplayPlanTest, BackendDefaultsDroppedOnRocdlOnlyModules) {
  // Beside an NVVM target the attribute reaches a backend not audited for it;
  // i1 `true` translates as "-1"; 2 is a request; over a passthrough
  // "amdgpu-waves-per-eu" it replaces that request.
  OwningOpRef<ModuleOp> source = parseSourceString<ModuleOp>(R"mlir(
    module attributes {gpu.container_module} {
      gpu.module @rocdl [#rocdl.target<chip = "gfx942">,
                         #rocdl.target<chip = "gfx90a">] {
        llvm.func @one() attributes {rocdl.kernel, rocdl.waves_per_eu = 1 : i32} {
          llvm.return
        }
        llvm.func @one_i64() attributes {rocdl.kernel, rocdl.waves_per_eu = 1 : i64} {
          llvm.return
        }
        llvm.func @two() attributes {rocdl.kernel, rocdl.waves_per_eu = 2 : i32} {
          llvm.return
        }
        llvm.func @flag() attributes {rocdl.kernel, rocdl.waves_per_eu = true} {
          llvm.return
        }
        llvm.func @device() attributes {rocdl.waves_per_eu = 1 : i32} {
          llvm.return
        }
        llvm.func @over_passthrough() attributes {rocdl.kernel,
            passthrough = [["amdgpu-waves-per-eu", "4"]],
            rocdl.waves_per_eu = 1 : i32} {
          llvm.return
        }
      }
      gpu.module @mixed [#rocdl.target<chip = "gfx942">,
                         #nvvm.target<chip = "sm_90">] {
        llvm.func @k() attributes {gpu.kernel, rocdl.waves_per_eu = 1 : i32} {
          llvm.return
        }
      }
    })mlir",
                                                             &context);
  ASSERT_TRUE(source);
  std::vector<std::string> kept;
  for (auto gpuModule : source->getOps<gpu::GPUModuleOp>()) {
    dropBackendDefaults(gpuModule);
    for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr("rocdl.waves_per_eu"))
        kept.push_back(func.getName().str());
  }
  EXPECT_EQ(kept, (std::vector<std::string>{"two", "flag", "device",
                                            "over_passthrough", "k"}));
}

TEST_F(ReplayPlanTest, VgprRequestsOfTheWholeBudgetDropped) {
  // A request of 256 VGPRs or more is the budget itself on these chips, read
  // as LLVM reads the value (radix 0, untrimmed); 255 is a cap (510 on
  // gfx942); gfx1250 addresses 1024, so 256 caps it there, and in a
  // gpu.module that also compiles for it.
  OwningOpRef<ModuleOp> source = parseSourceString<ModuleOp>(R"mlir(
    module attributes {gpu.container_module} {
      gpu.module @cdna [#rocdl.target<chip = "gfx942">,
                        #rocdl.target<chip = "gfx1100">] {
        llvm.func @at_256() attributes {rocdl.kernel,
            passthrough = [["amdgpu-num-vgpr", "256"]]} {
          llvm.return
        }
        llvm.func @hex_and_others() attributes {rocdl.kernel,
            passthrough = ["noinline", "amdgpu-num-vgpr",
                           ["amdgpu-num-vgpr", "0x200"],
                           ["amdgpu-waves-per-eu", "2"]]} {
          llvm.return
        }
        llvm.func @at_255() attributes {rocdl.kernel,
            passthrough = [["amdgpu-num-vgpr", "255"]]} {
          llvm.return
        }
        llvm.func @spaced() attributes {rocdl.kernel,
            passthrough = [["amdgpu-num-vgpr", " 256"]]} {
          llvm.return
        }
        llvm.func @huge() attributes {rocdl.kernel,
            passthrough = [["amdgpu-num-vgpr", "4294967552"]]} {
          llvm.return
        }
        llvm.func @device() attributes {
            passthrough = [["amdgpu-num-vgpr", "256"]]} {
          llvm.return
        }
      }
      gpu.module @gfx1250 [#rocdl.target<chip = "gfx942">,
                           #rocdl.target<chip = "gfx1250">] {
        llvm.func @k() attributes {rocdl.kernel,
            passthrough = [["amdgpu-num-vgpr", "256"]]} {
          llvm.return
        }
      }
    })mlir",
                                                             &context);
  ASSERT_TRUE(source);
  std::vector<std::string> passthroughs;
  for (auto gpuModule : source->getOps<gpu::GPUModuleOp>()) {
    dropBackendDefaults(gpuModule);
    for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>()) {
      std::string text = func.getName().str() + ":";
      if (ArrayAttr passthrough = func.getPassthroughAttr())
        llvm::raw_string_ostream(text) << passthrough;
      passthroughs.push_back(text);
    }
  }
  EXPECT_EQ(passthroughs,
            (std::vector<std::string>{
                "at_256:",
                "hex_and_others:[\"noinline\", \"amdgpu-num-vgpr\", "
                "[\"amdgpu-waves-per-eu\", \"2\"]]",
                "at_255:[[\"amdgpu-num-vgpr\", \"255\"]]",
                "spaced:[[\"amdgpu-num-vgpr\", \" 256\"]]",
                "huge:[[\"amdgpu-num-vgpr\", \"4294967552\"]]",
                "device:[[\"amdgpu-num-vgpr\", \"256\"]]",
                "k:[[\"amdgpu-num-vgpr\", \"256\"]]"}));
}

TEST_F(ReplayPlanTest, MaxnregOfTheWholeBudgetIsACopy) {
  ASSERT_TRUE(module);
  std::vector<HintSet> sets =
      hintSets(";maxnreg=256;maxnreg=512;maxnreg=255;waves_per_eu=2;"
               "waves_per_eu=2,maxnreg=300;waves_per_eu=1,maxnreg=256");
  FailureOr<BinaryPassOptions> binaryPass = parseBinaryPass(
      "gpu-module-to-binary{format=isa}", UnknownLoc::get(&context));
  ASSERT_TRUE(succeeded(binaryPass));
  FailureOr<ReplayPlan> plan =
      buildReplayPlan(*module, *binaryPass, sets, ReplayPlanOptions());
  ASSERT_TRUE(succeeded(plan));
  std::vector<std::optional<unsigned>> sameAs;
  for (const PlanEntry &entry : plan->entries)
    sameAs.push_back(entry.sameAs);
  EXPECT_EQ(sameAs,
            (std::vector<std::optional<unsigned>>{
                std::nullopt, 0u, 0u, std::nullopt, std::nullopt, 4u, 0u}));
}

TEST_F(ReplayPlanTest, RoundTripsThroughJSON) {
  ASSERT_TRUE(module);
  ReplayPlanOptions options;
  options.reuseIsa = true;
  FailureOr<BinaryPassOptions> binaryPass = parseBinaryPass(
      "gpu-module-to-binary{format=fatbin opts=\"-O1\" l=a.bc,b.bc}",
      module->getLoc());
  ASSERT_TRUE(succeeded(binaryPass));
  FailureOr<ReplayPlan> plan = buildReplayPlan(
      *module, *binaryPass,
      hintSets("waves_per_eu=2;opts=-v;waves_per_eu=2;func.x=[1, 2]"), options);
  ASSERT_TRUE(succeeded(plan));
  EXPECT_EQ(plan->entries[2].sameAs, 0u);
  EXPECT_NE(plan->entries[1].extraOpts, "");
  std::string text;
  llvm::raw_string_ostream(text) << toJSON(*plan);
  llvm::Expected<ReplayPlan> back = parseReplayPlan(text);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  ASSERT_EQ(back->entries.size(), plan->entries.size());
  EXPECT_EQ(printBinaryPass(back->binaryPass),
            printBinaryPass(plan->binaryPass));
  EXPECT_EQ(back->binaryPass.linkFiles.size(), 2u);
  EXPECT_EQ(back->binaryPass.cmdOptions, "-O1");
  EXPECT_EQ(back->reuseIsa, plan->reuseIsa);
  for (auto [a, b] : llvm::zip_equal(plan->entries, back->entries)) {
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.id, b.id);
    EXPECT_TRUE(a.hints == b.hints) << a.hints.canonical();
    EXPECT_EQ(a.extraOpts, b.extraOpts);
    EXPECT_EQ(a.binaryPass, b.binaryPass);
    EXPECT_EQ(a.sameAs, b.sameAs);
    EXPECT_EQ(a.isaGroup, b.isaGroup);
  }
}

TEST(ReplayPlanJSON, ErrorsNameThePath) {
  constexpr llvm::StringLiteral kPass =
      R"({"toolkit": "", "l": [], "opts": "", "format": "fatbin", "section": ""})";
  llvm::Expected<ReplayPlan> plan = parseReplayPlan(
      (R"({"format": "fly-replay-plan-1", "binary_pass": )" + kPass + R"(,
          "reuse_isa": false, "entries": [
          {"index": 0, "id": "v0_default", "hints": "", "extra_opts": "",
           "binary_pass": "gpu-module-to-binary"},
          {"index": 1, "id": "v1", "hints": "", "extra_opts": "",
           "binary_pass": "gpu-module-to-binary", "same_as": 5}]})")
          .str());
  ASSERT_FALSE(bool(plan));
  std::string message = llvm::toString(plan.takeError());
  EXPECT_NE(message.find("plan.entries[1]"), std::string::npos) << message;
  EXPECT_NE(message.find("later entry"), std::string::npos) << message;

  plan = parseReplayPlan(
      (R"({"format": "fly-replay-plan-1", "binary_pass": )" + kPass +
       R"(, "reuse_isa": false, "entries": [{"index": "zero"}]})")
          .str());
  ASSERT_FALSE(bool(plan));
  message = llvm::toString(plan.takeError());
  EXPECT_NE(message.find("plan.entries[0].index"), std::string::npos)
      << message;
}

TEST(ReplayPlanJSON, BinaryPassOptionsAreChecked) {
  MLIRContext context;
  Location loc = UnknownLoc::get(&context);
  for (llvm::StringRef bad :
       {"canonicalize", "gpu-module-to-binary{format=cubin}",
        "gpu-module-to-binary{bogus=1}", "gpu-module-to-binary{format=isa",
        "builtin.module(gpu-module-to-binary"}) {
    ScopedDiagnosticHandler quiet(&context,
                                  [](Diagnostic &) { return success(); });
    EXPECT_TRUE(failed(parseBinaryPass(bad, loc))) << bad.str();
  }
  FailureOr<BinaryPassOptions> isa =
      parseBinaryPass("builtin.module(gpu-module-to-binary{format=isa})", loc);
  ASSERT_TRUE(succeeded(isa));
  EXPECT_FALSE(linksObjects(*isa));
  EXPECT_EQ(printBinaryPass(withExtraOpts(*isa, "-v")),
            "gpu-module-to-binary{format=isa  opts=-v section= toolkit=}");
}

TEST(ReplayPlanJSON, EntryLists) {
  llvm::Expected<std::vector<unsigned>> list = parseEntryList("0-2,5,7-8", 9);
  ASSERT_TRUE(bool(list));
  EXPECT_EQ(*list, (std::vector<unsigned>{0, 1, 2, 5, 7, 8}));
  EXPECT_EQ(formatEntryList(*list), "0-2,5,7-8");
  for (llvm::StringRef bad : {"9", "3-1", "a", "", "1-x"}) {
    llvm::Expected<std::vector<unsigned>> wrong = parseEntryList(bad, 9);
    EXPECT_FALSE(bool(wrong)) << bad.str();
    if (!wrong)
      llvm::consumeError(wrong.takeError());
  }
}

} // namespace
