//===- VariantStage.cpp - Phase 2: plan, cache, executor ------------------===//

#include "fly/Compiler/SplitCompiler.h"

#include "fly/Cache/VariantCodec.h"
#include "fly/Replay/VariantDedupe.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Threading.h"

#include <chrono>
#include <thread>

using namespace mlir;
using llvm::ArrayRef;
using llvm::StringRef;

namespace fly {

FailureOr<ReplayPlan> SplitCompiler::planVariants(ModuleOp preBinary,
                                                  const CompileJob &job,
                                                  StringRef binaryPass,
                                                  const CacheKey &baseKey,
                                                  std::vector<CacheKey> &keys) {
  ReplayPlanOptions planOptions;
  planOptions.reuseIsa = options.reuseIsa;
  planOptions.captureIntermediates = capturesIntermediates();
  FailureOr<BinaryPassOptions> options =
      parseBinaryPass(binaryPass, preBinary.getLoc());
  if (failed(options))
    return failure();
  FailureOr<ReplayPlan> plan =
      buildReplayPlan(preBinary, *options, job.hintSets, planOptions);
  if (failed(plan) || !cache.enabled())
    return plan;
  // Every entry runs the same toolkit and libraries (hints change only
  // opts): their files are fingerprinted once.
  std::string toolkit =
      getToolkitFingerprint(plan->binaryPass, getBinaryPassInputs(preBinary));
  for (PlanEntry &entry : plan->entries) {
    keys.push_back(
        makeBinaryKey(baseKey, entry.hints, entry.binaryPass, toolkit));
    entry.cacheKey = keys.back().digest();
  }
  return plan;
}

LogicalResult SplitCompiler::runVariants(ModuleOp preBinary,
                                         const ReplayPlan &plan,
                                         ArrayRef<CacheKey> keys,
                                         CompileResult &result) {
  size_t n = plan.entries.size();
  result.variants.resize(n);
  result.variantFromCache.assign(n, false);
  auto progress = [&](unsigned e, StringRef what) {
    say(llvm::formatv("variant {0}/{1} {2}: {3}", e + 1, n, plan.entries[e].id,
                      what));
  };
  // Fills entry `e` from the cache; false on a miss. Dumps want every
  // variant's own LLVM IR and ISA: nothing is taken from the cache then
  // (entries are still written).
  auto takeCached = [&](unsigned e) {
    if (!cache.enabled() || plan.captureIntermediates)
      return false;
    std::optional<std::string> payload = cache.lookup("binary", keys[e]);
    if (!payload)
      return false;
    std::optional<VariantResult> cached = decodeVariant(*payload, context);
    if (!cached || !cached->succeeded()) {
      result.warnings.push_back("discarding unreadable cached variant " +
                                plan.entries[e].id);
      return false;
    }
    result.variants[e] = std::move(*cached);
    result.variantFromCache[e] = true;
    progress(e, "cached");
    return true;
  };

  // Only distinct entries are looked up, locked and compiled: a hint set
  // listed twice has one key, and a second lock on a key this process holds
  // would wait for itself.
  std::vector<unsigned> distinct = plan.distinct(plan.all());
  std::vector<unsigned> misses;
  for (unsigned e : distinct)
    if (!takeCached(e))
      misses.push_back(e);
  say(llvm::formatv("phase 2: {0} variant(s) from cache, replaying {1}",
                    distinct.size() - misses.size(), misses.size()));

  ExecutorOptions executorOptions = options.executorOptions;
  executorOptions.jobs = options.jobs;
  std::unique_ptr<ReplayExecutor> executor =
      options.makeExecutor
          ? options.makeExecutor()
          : createReplayExecutor(options.executor, executorOptions);
  auto runner = [&](OpPassManager &pipeline, ModuleOp container) {
    return runPipeline(pipeline, container, /*dump=*/false);
  };
  ReplayWork work{preBinary, plan, runner};
  // Compiles `entries` and stores what succeeds.
  auto compile = [&](ArrayRef<unsigned> entries) -> LogicalResult {
    if (entries.empty())
      return success();
    FailureOr<std::vector<VariantResult>> compiled =
        executePlan(*executor, work, entries);
    if (failed(compiled))
      return failure();
    for (auto [e, variant] : llvm::zip_equal(entries, *compiled)) {
      // Encoding copies every object: not for a cache that is off.
      if (variant.succeeded() && cache.enabled())
        cache.store("binary", keys[e], encodeVariant(variant));
      progress(e, variant.succeeded() ? "ok" : "FAILED");
      result.variants[e] = std::move(variant);
    }
    return success();
  };

  // Keys another process is compiling right now are waited for, not
  // compiled twice.
  std::vector<std::unique_ptr<CacheKeyLock>> locks(n);
  std::vector<unsigned> mine, others;
  for (unsigned e : misses) {
    // A capturing compile compiles anyway: it waits for nobody.
    locks[e] = plan.captureIntermediates ? std::make_unique<CacheKeyLock>()
                                         : cache.lock("binary", keys[e]);
    (locks[e]->getState() == CacheKeyLock::State::OwnedByOther ? others : mine)
        .push_back(e);
  }
  // The held keys are waited for all at once, beside the compile of the
  // others: N keys another process holds cost the slowest one, not the sum.
  std::vector<CacheKeyLock *> waited;
  for (unsigned e : others)
    waited.push_back(locks[e].get());
  std::thread waiter;
  if (!waited.empty())
    waiter = std::thread([&] { CacheKeyLock::waitAll(waited); });
  LogicalResult compiledMine = compile(mine);
  for (unsigned e : mine)
    locks[e].reset();
  if (waiter.joinable())
    waiter.join();
  if (failed(compiledMine))
    return failure();
  std::vector<unsigned> leftover;
  for (unsigned e : others)
    if (!takeCached(e))
      leftover.push_back(e);
  if (failed(compile(leftover)))
    return failure();
  locks.clear();

  for (auto [e, entry] : llvm::enumerate(plan.entries)) {
    VariantResult &variant = result.variants[e];
    if (entry.sameAs) {
      copyVariantOutcome(variant, result.variants[*entry.sameAs]);
      result.variantFromCache[e] = result.variantFromCache[*entry.sameAs];
      progress(e, llvm::formatv("same variant as {0}", *entry.sameAs).str());
    }
    // Cached and copied outcomes take this sweep's labels.
    variant.index = entry.index;
    variant.id = entry.id;
    variant.hints = entry.hints;
  }
  markDuplicates(result.variants);
  return success();
}

} // namespace fly
