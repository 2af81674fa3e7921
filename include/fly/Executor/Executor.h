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

#include "fly/Replay/Replay.h"
#include "fly/Replay/ReplayPlan.h"
#include "fly/Replay/VariantResult.h"

#include "mlir/IR/BuiltinOps.h"

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
};

class ReplayExecutor {
public:
  virtual ~ReplayExecutor();
  virtual llvm::StringRef getName() const = 0;
  /// Compiles `entries` (positions in the plan) and returns one result per
  /// entry, in that order; a variant's failure is in its result. Fails only
  /// for errors that concern every variant (diagnostics on the context).
  /// Duplicates are marked by the caller (executePlan), over all entries.
  virtual mlir::FailureOr<std::vector<VariantResult>>
  execute(const ReplayWork &work, llvm::ArrayRef<unsigned> entries) = 0;
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
  /// Process: seconds a child may run before it is killed and its variants
  /// fail; 0 = no limit.
  unsigned childTimeoutSeconds = 0;
};

std::unique_ptr<ReplayExecutor> createReplayExecutor(ExecutorKind kind,
                                                     ExecutorOptions options);

/// Runs `entries` (positions in the plan) on `executor`: an entry whose
/// variant is identical to another requested entry (PlanEntry::sameAs)
/// copies its outcome and is never sent to the executor. One result per
/// entry, in order, duplicates marked.
mlir::FailureOr<std::vector<VariantResult>>
executePlan(ReplayExecutor &executor, const ReplayWork &work,
            llvm::ArrayRef<unsigned> entries);

/// The fly-tune that ExecutorOptions::childTool defaults to ("" if none).
std::string findChildTool();

} // namespace fly

#endif // FLY_EXECUTOR_EXECUTOR_H
