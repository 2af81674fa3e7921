//===- Executor.cpp - Where the entries of a replay plan compile ----------===//

#include "fly/Executor/Executor.h"
#include "Replay/VariantDedupe.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

using namespace mlir;
using namespace llvm;

namespace fly {

ReplayExecutor::~ReplayExecutor() = default;

std::optional<ExecutorKind> parseExecutorKind(StringRef name) {
  return llvm::StringSwitch<std::optional<ExecutorKind>>(name)
      .Case("batch", ExecutorKind::Batch)
      .Case("isolated", ExecutorKind::Isolated)
      .Case("process", ExecutorKind::Process)
      .Default(std::nullopt);
}

PlanCache::~PlanCache() = default;

/// Gives `result` the labels of `entry` (index, id, hints, binary pass).
static void labelVariantResult(VariantResult &result, const PlanEntry &entry) {
  result.index = entry.index;
  result.id = entry.id;
  result.hints = entry.hints;
  result.binaryPass = entry.binaryPass;
}

FailureOr<std::vector<VariantResult>>
executePlan(ReplayExecutor &executor, const ReplayWork &work,
            ArrayRef<unsigned> entries, const ExecutePlanOptions &options) {
  const ReplayPlan &plan = work.plan;
  // Entries identical to another requested entry copy its outcome: they are
  // never looked up, compiled, locked or sent anywhere. So does an entry
  // requested twice.
  llvm::DenseMap<unsigned, unsigned> positionOf;
  for (auto [k, e] : llvm::enumerate(entries))
    positionOf.try_emplace(e, k);
  std::vector<unsigned> distinct;
  std::vector<SmallVector<unsigned>> copiesOf(entries.size());
  for (auto [k, e] : llvm::enumerate(entries)) {
    std::optional<unsigned> sameAs = plan.entries[e].sameAs;
    if (positionOf.lookup(e) != k)
      copiesOf[positionOf.lookup(e)].push_back(k);
    else if (sameAs && positionOf.count(*sameAs))
      copiesOf[positionOf.lookup(*sameAs)].push_back(k);
    else
      distinct.push_back(e);
  }

  std::vector<VariantResult> results(entries.size());
  std::vector<bool> settled(entries.size(), false);
  std::vector<std::unique_ptr<CacheKeyLock>> locks(entries.size());
  auto label = [&](unsigned k) {
    labelVariantResult(results[k], plan.entries[entries[k]]);
  };
  // A result is final here: labelled, stored (then its key unlocked, so a
  // process waiting for it finds it), reported, and copied to the entries
  // identical to it. Callers hold `mutex`.
  std::mutex mutex;
  auto settle = [&](unsigned k, VariantResult result, VariantOrigin origin) {
    if (settled[k])
      return;
    settled[k] = true;
    results[k] = std::move(result);
    label(k);
    const PlanEntry &entry = plan.entries[entries[k]];
    if (origin == VariantOrigin::Compiled && options.cache &&
        results[k].succeeded())
      options.cache->store(entry, results[k]);
    locks[k].reset();
    if (options.finished)
      options.finished(entries[k], results[k], origin);
    // In plan order, so progress lines count up as the entries are listed.
    SmallVector<std::pair<unsigned, unsigned>> pending; // (copy, original)
    for (unsigned copy : copiesOf[k])
      pending.emplace_back(copy, k);
    for (size_t next = 0; next < pending.size(); ++next) {
      auto [copy, original] = pending[next];
      copyVariantOutcome(results[copy], results[original]);
      label(copy);
      settled[copy] = true;
      if (options.finished)
        options.finished(entries[copy], results[copy], VariantOrigin::Copied);
      for (unsigned further : copiesOf[copy])
        pending.emplace_back(further, copy);
    }
  };
  // Capturing compiles want every variant's own LLVM IR and ISA: nothing is
  // taken from the cache and nobody is waited for then (entries are still
  // stored).
  bool readCache = options.cache && !plan.captureIntermediates;
  // Under `mutex`: the lock waiter reads entries while variants settle. An
  // entry it already settled is not read again.
  auto takeCached = [&](unsigned e) {
    if (!readCache)
      return false;
    std::lock_guard<std::mutex> guard(mutex);
    if (settled[positionOf.lookup(e)])
      return true;
    std::optional<VariantResult> cached =
        options.cache->lookup(plan.entries[e]);
    if (!cached)
      return false;
    settle(positionOf.lookup(e), std::move(*cached), VariantOrigin::Cached);
    return true;
  };
  // A time budget starts no variant once spent, nor does the front end's
  // mayStart once it said no (a cancel): what is left is skipped, saying
  // which.
  ReplayWork scheduled = work;
  std::atomic<bool> budgetSpent{false}, cancelled{false};
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
          std::max(0.0, options.timeBudgetSeconds)));
  if (options.timeBudgetSeconds > 0 || work.mayStart)
    scheduled.mayStart = [&, inner = work.mayStart] {
      if (budgetSpent || cancelled)
        return false;
      if (options.timeBudgetSeconds > 0 && Clock::now() >= deadline) {
        budgetSpent = true;
        return false;
      }
      if (inner && !inner()) {
        cancelled = true;
        return false;
      }
      return true;
    };
  auto compile = [&](ArrayRef<unsigned> compiled) -> LogicalResult {
    if (compiled.empty())
      return success();
    VariantSink finished = [&](unsigned e, VariantResult result) {
      std::lock_guard<std::mutex> guard(mutex);
      auto it = positionOf.find(e);
      if (it != positionOf.end())
        settle(it->second, std::move(result), VariantOrigin::Compiled);
    };
    if (failed(executor.execute(scheduled, compiled, finished)))
      return failure();
    // Every entry sent gets a result: those the budget left unstarted are
    // skipped, any other is one the executor lost.
    std::lock_guard<std::mutex> guard(mutex);
    for (unsigned e : compiled) {
      VariantResult missing;
      if (budgetSpent) {
        missing.skipped = true;
        missing.error = llvm::formatv("skipped: the time budget of {0} s was "
                                      "spent before it started",
                                      options.timeBudgetSeconds)
                            .str();
      } else if (cancelled) {
        missing.skipped = true;
        missing.error = "skipped: cancelled before it started";
      } else {
        missing.error = "the " + executor.getName().str() +
                        " executor returned no result for this variant";
      }
      settle(positionOf.lookup(e), std::move(missing), VariantOrigin::Compiled);
    }
    return success();
  };

  std::vector<unsigned> misses;
  unsigned cached = 0;
  for (unsigned e : distinct) {
    if (auto it = options.compiledElsewhere.find(e);
        it != options.compiledElsewhere.end()) {
      std::lock_guard<std::mutex> guard(mutex);
      settle(positionOf.lookup(e), it->second, VariantOrigin::Compiled);
    } else if (takeCached(e)) {
      ++cached;
    } else {
      misses.push_back(e);
    }
  }
  // Keys another process is compiling right now are waited for, not
  // compiled twice; one it stored and let go of between the lookup above and
  // our lock is read now.
  std::vector<unsigned> mine, others;
  for (unsigned e : misses) {
    unsigned k = positionOf.lookup(e);
    if (readCache)
      locks[k] = options.cache->lock(plan.entries[e]);
    if (locks[k] && locks[k]->getState() == CacheKeyLock::State::Owned &&
        takeCached(e)) {
      ++cached;
      continue;
    }
    bool elsewhere =
        locks[k] && locks[k]->getState() == CacheKeyLock::State::OwnedByOther;
    (elsewhere ? others : mine).push_back(e);
  }
  if (options.planned)
    options.planned(cached, mine.size() + others.size());
  // The held keys are waited for all at once, beside the compile of the
  // others: N keys another process holds cost the slowest one, not the sum.
  // A key let go of is ours then: what its owner stored is read at once,
  // which lets go of it again. Held while the rest are waited for, it would
  // make a process that waits for it and holds one of those wait for us in
  // turn, both until the lock timeout (two waiters, each with half).
  std::vector<CacheKeyLock *> waited;
  for (unsigned e : others)
    waited.push_back(locks[positionOf.lookup(e)].get());
  std::thread waiter;
  if (!waited.empty())
    waiter = std::thread([&] {
      CacheKeyLock::waitAll(waited, std::nullopt, [&](size_t i) {
        if (waited[i]->getState() == CacheKeyLock::State::Owned)
          takeCached(others[i]);
      });
    });
  LogicalResult compiledMine = compile(mine);
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
  markDuplicates(results);
  return results;
}

std::unique_ptr<ReplayExecutor> createBatchExecutor(ExecutorOptions options);
std::unique_ptr<ReplayExecutor> createIsolatedExecutor(ExecutorOptions options);
std::unique_ptr<ReplayExecutor> createProcessExecutor(ExecutorOptions options);

std::unique_ptr<ReplayExecutor> createReplayExecutor(ExecutorKind kind,
                                                     ExecutorOptions options) {
  switch (kind) {
  case ExecutorKind::Batch:
    return createBatchExecutor(std::move(options));
  case ExecutorKind::Isolated:
    return createIsolatedExecutor(std::move(options));
  case ExecutorKind::Process:
    return createProcessExecutor(std::move(options));
  }
  llvm_unreachable("unknown executor kind");
}

} // namespace fly
