//===- ReplayInstrumentation.h - Replays inside a client's PM ---*- C++ -*-===//
//
// For compilers that own their PassManager: add this instrumentation and run
// the normal full pipeline. Right before gpu-module-to-binary runs (after it
// the gpu.modules are gone) it plans every hint set, keeps a copy of the
// module and applies hint set 1, which the pipeline's own run then compiles
// in place. Right after, executePlan settles that result with the replays
// of hint sets 2..N (that pass with its exact options, on hinted clones of
// the copy): labels, copies of identical entries and duplicate marks come
// from there, as for every front end. The sink gets every variant, in
// hint-set order.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_PIPELINE_REPLAYINSTRUMENTATION_H
#define FLY_PIPELINE_REPLAYINSTRUMENTATION_H

#include "fly/Executor/Executor.h"
#include "fly/Hints/HintSet.h"
#include "fly/Replay/VariantResult.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <optional>

namespace fly {

class ReplayInstrumentation : public mlir::PassInstrumentation {
public:
  using Sink = std::function<void(VariantResult)>;

  struct Options {
    /// Variants replayed at once; 0 = the context's thread count.
    unsigned jobs = 0;
    /// One ISA compile for variants that share it (ReplayPlan::reuseIsa).
    bool reuseIsa = true;
    /// Batch, or Isolated (one CrashRecoveryContext per variant: a backend
    /// that aborts fails only its variant).
    ExecutorKind executor = ExecutorKind::Batch;
    /// Applied to the replays' pass manager (IR printing, timing, ...).
    std::function<mlir::LogicalResult(mlir::PassManager &)>
        configurePassManager;
    /// configurePassManager instruments the replays' pass runs:
    /// ReplayPlanOptions::replaysInstrumented.
    bool replaysInstrumented = false;
  };

  ReplayInstrumentation(std::vector<HintSet> hintSets, Sink sink,
                        Options options);

  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override;

  /// False once a replay could not be set up or hints did not apply.
  bool succeeded() const { return ok; }

private:
  /// Replays hint sets 2..N beside `primary`, the pipeline's own compile of
  /// hint set 1, and hands every variant to the sink.
  void replayBeside(VariantResult primary);

  std::vector<HintSet> hintSets;
  Sink sink;
  Options options;
  /// The plan of every hint set and the module as it was before hint set 1
  /// was applied, from runBeforePass to the pass's end.
  std::optional<ReplayPlan> plan;
  mlir::OwningOpRef<mlir::ModuleOp> preBinary;
  bool ok = true;
};

} // namespace fly

#endif // FLY_PIPELINE_REPLAYINSTRUMENTATION_H
