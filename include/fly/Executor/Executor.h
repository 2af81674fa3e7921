//===- Executor.h - Where the entries of a replay plan compile --*- C++ -*-===//
//
// Every front end (the fly-snapshot pass, ReplayInstrumentation, the split
// compiler, the C API) builds one ReplayPlan and hands entries of it to an
// executor:
//   - batch: in this process, variants side by side in one container module,
//     compiled in parallel on the context's thread pool (fastest; debugging
//     flags see every replay);
//   - isolated: in this process, one CrashRecoveryContext per variant and no
//     batch barrier, so a backend that aborts or hits an LLVM fatal error
//     fails only its variant;
//   - process: in child `fly-tune --run-plan` processes that read the
//     snapshot and the plan from a work directory, so even a stack overflow
//     or heap corruption in the backend fails only its variants;
//   - slurm (SlurmExecutor.h): the same children as a Slurm job array.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_EXECUTOR_H
#define FLY_EXECUTOR_EXECUTOR_H

#include "fly/Cache/CompileCache.h"
#include "fly/Replay/Replay.h"
#include "fly/Replay/ReplayPlan.h"
#include "fly/Replay/VariantResult.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace fly {

/// What an executor replays: the pre-binary module and its plan.
struct ReplayWork {
  mutable mlir::ModuleOp preBinary; // Op handles are not const-correct.
  const ReplayPlan &plan;
  /// How in-process executors run a replay pipeline (the front end's pass
  /// manager set-up, or Pass::runPipeline inside a pass).
  PipelineRunner runPipeline;
  /// Place the replay container inside preBinary (Pass::runPipeline).
  bool nestInSource = false;
  /// Asked before a variant (or a batch, a child, a job array) starts;
  /// false: it and the rest are not started and not handed over. The front
  /// end's own says no to cancel (executePlan then reports the rest
  /// skipped, cancelled); executePlan wraps it with the time budget.
  std::function<bool()> mayStart;
};

class ReplayExecutor {
public:
  virtual ~ReplayExecutor();
  virtual llvm::StringRef getName() const = 0;
  /// Compiles `entries` (positions in the plan, none a copy of another)
  /// and hands each outcome to `finished` as soon as it is known, exactly
  /// once per entry that started (work.mayStart), from any thread; a
  /// variant's failure is in its result.
  /// Fails only for errors that concern every variant (diagnostics on the
  /// context). Labels, copies, the cache and duplicate marking are
  /// executePlan's: executors only compile.
  virtual mlir::LogicalResult execute(const ReplayWork &work,
                                      llvm::ArrayRef<unsigned> entries,
                                      const VariantSink &finished) = 0;
};

enum class ExecutorKind { Batch, Isolated, Process };

/// "batch", "isolated", "process".
std::optional<ExecutorKind> parseExecutorKind(llvm::StringRef name);

struct ExecutorOptions {
  /// Variants compiled at once (process: children at once); 0 = hardware
  /// threads.
  unsigned jobs = 0;
  /// Process: the `fly-tune` to start; "" = the one installed beside this
  /// library (../bin/fly-tune from the library or program holding it).
  std::string childTool;
  /// Process: where the work directory is made; "" = the system's temporary
  /// directory. The work directory is removed afterwards.
  std::string workDirParent;
};

std::unique_ptr<ReplayExecutor> createReplayExecutor(ExecutorKind kind,
                                                     ExecutorOptions options);

/// The compile cache as executePlan uses it, per plan entry (its
/// PlanEntry::cacheKey): the front end owns the cache and its key objects.
class PlanCache {
public:
  virtual ~PlanCache();
  /// The stored variant of `entry`, if there is a usable one.
  virtual std::optional<VariantResult> lookup(const PlanEntry &entry) = 0;
  /// The per-key lock of `entry`, shared with other processes.
  virtual std::unique_ptr<CacheKeyLock> lock(const PlanEntry &entry) = 0;
  /// Stores a variant that compiled.
  virtual void store(const PlanEntry &entry, const VariantResult &result) = 0;
};

/// How a finished result came to be.
enum class VariantOrigin { Compiled, Cached, Copied };

struct ExecutePlanOptions {
  /// Looked up before compiling, locked while compiling, stored into the
  /// moment a variant compiles; null = no cache.
  PlanCache *cache = nullptr;
  /// Seconds after which no new variant starts; those left are skipped
  /// (VariantResult::skipped). 0 = no budget.
  double timeBudgetSeconds = 0;
  /// Once the cache was read: how many distinct entries it held and how many
  /// will compile.
  std::function<void(unsigned cached, unsigned compiling)> planned;
  /// Each requested entry's result, labelled, the moment it is final (after
  /// the cache holds it): one call at a time, in finishing order.
  std::function<void(unsigned entry, const VariantResult &result,
                     VariantOrigin origin)>
      finished;
  /// Results of entries compiled outside any executor (the primary hint set
  /// that a client's own pipeline compiles in place, ReplayInstrumentation),
  /// by entry: settled as compiled (labelled, stored, reported, copied to
  /// the entries identical to them), never looked up, locked or sent.
  std::map<unsigned, VariantResult> compiledElsewhere;
};

/// The one place where plan entries become results. Runs `entries`
/// (positions in the plan) on `executor`: distinct entries come from the
/// cache, from options.compiledElsewhere, or compile (under per-key locks; an
/// entry another process is compiling is waited for, then looked up again); an
/// entry whose variant is identical to another requested entry
/// (PlanEntry::sameAs) copies its outcome and is never sent anywhere. Every
/// result gets its entry's labels. One result per entry, in order, duplicates
/// marked. Fails only when the executor does.
mlir::FailureOr<std::vector<VariantResult>>
executePlan(ReplayExecutor &executor, const ReplayWork &work,
            llvm::ArrayRef<unsigned> entries,
            const ExecutePlanOptions &options = {});

} // namespace fly

#endif // FLY_EXECUTOR_EXECUTOR_H
