//===- VariantStage.cpp - Phase 2: plan, cache, executor ------------------===//

#include "fly/Compiler/SplitCompiler.h"

#include "fly/Cache/VariantCodec.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Threading.h"

#include <chrono>

using namespace mlir;
using llvm::ArrayRef;
using llvm::StringRef;

namespace fly {

FailureOr<ReplayPlan>
SplitCompiler::planVariants(ModuleOp preBinary, const CompileJob &job,
                            const BinaryPassOptions &binaryPass,
                            const CacheKey &baseKey,
                            std::vector<CacheKey> &keys) {
  ReplayPlanOptions planOptions;
  planOptions.reuseIsa = options.reuseIsa;
  planOptions.captureIntermediates = capturesIntermediates();
  planOptions.variantTimeoutSeconds = options.variantTimeoutSeconds;
  planOptions.replaysInstrumented = options.replaysInstrumented;
  FailureOr<ReplayPlan> plan =
      buildReplayPlan(preBinary, binaryPass, job.hintSets, planOptions);
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

namespace {
/// The split compiler's cache under the keys planVariants made.
class VariantCache : public PlanCache {
public:
  VariantCache(CompileCache &cache, const ReplayPlan &plan,
               ArrayRef<CacheKey> keys, MLIRContext &context,
               std::vector<std::string> &warnings)
      : cache(cache), plan(plan), keys(keys), context(context),
        warnings(warnings) {}

  std::optional<VariantResult> lookup(const PlanEntry &entry) override {
    std::optional<std::string> payload = cache.lookup("binary", keyOf(entry));
    if (!payload)
      return std::nullopt;
    std::optional<VariantResult> cached = decodeVariant(*payload, context);
    if (!cached || !cached->succeeded()) {
      warnings.push_back("discarding unreadable cached variant " + entry.id);
      return std::nullopt;
    }
    // Not compiled in this run, whatever the run that stored it did.
    cached->codegenContinued = 0;
    return cached;
  }
  std::unique_ptr<CacheKeyLock> lock(const PlanEntry &entry) override {
    return cache.lock("binary", keyOf(entry));
  }
  void store(const PlanEntry &entry, const VariantResult &result) override {
    cache.store("binary", keyOf(entry), encodeVariant(result));
  }

private:
  const CacheKey &keyOf(const PlanEntry &entry) const {
    return keys[&entry - plan.entries.data()];
  }

  CompileCache &cache;
  const ReplayPlan &plan;
  ArrayRef<CacheKey> keys;
  MLIRContext &context;
  std::vector<std::string> &warnings;
};
} // namespace

std::unique_ptr<ReplayExecutor> SplitCompiler::makeExecutor() {
  if (options.makeExecutor)
    return options.makeExecutor();
  ExecutorOptions executorOptions = options.executorOptions;
  executorOptions.jobs = options.jobs;
  return createReplayExecutor(options.executor, executorOptions);
}

LogicalResult SplitCompiler::runVariants(ModuleOp preBinary,
                                         const ReplayPlan &plan,
                                         ArrayRef<CacheKey> keys,
                                         const CompileJob &job, unsigned kernel,
                                         ReplayExecutor &executor,
                                         CompileResult &result) {
  size_t n = plan.entries.size();
  result.variantFromCache.assign(n, false);
  ExecutePlanOptions run;
  run.timeBudgetSeconds = options.timeBudgetSeconds;
  // Encoding copies every object: not for a cache that is off.
  std::optional<VariantCache> variantCache;
  if (cache.enabled()) {
    variantCache.emplace(cache, plan, keys, context, result.warnings);
    run.cache = &*variantCache;
  }
  run.planned = [&](unsigned cached, unsigned compiling) {
    say(job, llvm::formatv("phase 2: {0} variant(s) from cache, replaying {1}",
                           cached, compiling));
  };
  // Reported the moment each variant is final (and stored).
  run.finished = [&](unsigned e, const VariantResult &variant,
                     VariantOrigin origin) {
    const PlanEntry &entry = plan.entries[e];
    bool fromCache = origin == VariantOrigin::Cached ||
                     (origin == VariantOrigin::Copied &&
                      result.variantFromCache[*entry.sameAs]);
    result.variantFromCache[e] = fromCache;
    // A cancel is final, so one seen now is what skipped the variant.
    bool cancelled = options.cancelled && options.cancelled();
    std::string what =
        origin == VariantOrigin::Cached ? std::string("cached")
        : origin == VariantOrigin::Copied
            ? llvm::formatv("same objects as {0}, not compiled", *entry.sameAs)
                  .str()
        : variant.succeeded() ? std::string("ok")
        : variant.skipped     ? std::string(cancelled ? "skipped (cancelled)"
                                                      : "skipped (time budget)")
                              : std::string("FAILED");
    say(job,
        llvm::formatv("variant {0}/{1} {2}: {3}", e + 1, n, entry.id, what));
    if (options.variantFinished) {
      std::lock_guard<std::mutex> guard(reportMutex);
      options.variantFinished(kernel, e, variant, fromCache);
    }
  };

  auto runner = [&](OpPassManager &pipeline, ModuleOp container) {
    return runPipeline(pipeline, container, /*dump=*/false);
  };
  ReplayWork work{preBinary, plan, runner};
  if (options.cancelled)
    work.mayStart = [this] { return !options.cancelled(); };
  FailureOr<std::vector<VariantResult>> variants =
      executePlan(executor, work, plan.all(), run);
  if (failed(variants))
    return failure();
  result.variants = std::move(*variants);
  return success();
}

} // namespace fly
