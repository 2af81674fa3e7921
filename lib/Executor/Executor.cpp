//===- Executor.cpp - Where the entries of a replay plan compile ----------===//

#include "fly/Executor/Executor.h"
#include "fly/Replay/VariantDedupe.h"

#include "llvm/ADT/StringSwitch.h"

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

FailureOr<std::vector<VariantResult>> executePlan(ReplayExecutor &executor,
                                                  const ReplayWork &work,
                                                  ArrayRef<unsigned> entries) {
  // Entries identical to another requested entry copy its outcome: they are
  // never compiled, locked or sent anywhere.
  llvm::DenseMap<unsigned, unsigned> positionOf;
  for (auto [k, e] : llvm::enumerate(entries))
    positionOf.try_emplace(e, k);
  std::vector<unsigned> distinct, distinctPositions;
  SmallVector<std::pair<unsigned, unsigned>> copies; // (position, original)
  for (auto [k, e] : llvm::enumerate(entries)) {
    std::optional<unsigned> sameAs = work.plan.entries[e].sameAs;
    if (sameAs && positionOf.count(*sameAs)) {
      copies.emplace_back(k, positionOf.lookup(*sameAs));
    } else {
      distinct.push_back(e);
      distinctPositions.push_back(k);
    }
  }
  std::vector<VariantResult> results(entries.size());
  if (!distinct.empty()) {
    FailureOr<std::vector<VariantResult>> compiled =
        executor.execute(work, distinct);
    if (failed(compiled))
      return failure();
    for (auto [k, result] : llvm::zip_equal(distinctPositions, *compiled))
      results[k] = std::move(result);
  }
  for (auto [copy, original] : copies) {
    const PlanEntry &entry = work.plan.entries[entries[copy]];
    results[copy].index = entry.index;
    results[copy].id = entry.id;
    results[copy].hints = entry.hints;
    copyVariantOutcome(results[copy], results[original]);
  }
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
