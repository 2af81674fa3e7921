//===- ReplayInstrumentation.h - Replays inside a client's PM ---*- C++ -*-===//
//
// For compilers that own their PassManager: add this instrumentation and run
// the normal full pipeline. Right before gpu-module-to-binary runs (after it
// the gpu.modules are gone) it replays that pass, with its exact options, for
// hint sets 2..N on hinted clones and hands each variant to the sink; the
// pipeline's own run then compiles hint set 1 in place.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_PIPELINE_REPLAYINSTRUMENTATION_H
#define FLY_PIPELINE_REPLAYINSTRUMENTATION_H

#include "fly/Executor/Executor.h"
#include "fly/Hints/HintSet.h"
#include "fly/Replay/VariantResult.h"

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
  };

  ReplayInstrumentation(std::vector<HintSet> hintSets, Sink sink,
                        Options options);

  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override;

  /// False once a replay could not be set up or hints did not apply.
  bool succeeded() const { return ok; }

private:
  std::vector<HintSet> hintSets;
  Sink sink;
  Options options;
  /// What the pipeline's own run compiles (hint set 1), once planned.
  std::optional<PlanEntry> primaryEntry;
  bool ok = true;
};

} // namespace fly

#endif // FLY_PIPELINE_REPLAYINSTRUMENTATION_H
