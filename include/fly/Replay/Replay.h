//===- Replay.h - Replay gpu-module-to-binary per hint set ------*- C++ -*-===//
//
// The one replay routine behind the fly-snapshot pass, the instrumentation
// and the split compiler: clone the checkpoint's gpu.modules once per hint
// set into a nested builtin.module named after the variant, write the hints
// onto the clone, verify it, and run the binary pass on it. Variants sit side
// by side in one container module so the pass manager compiles them in
// parallel on the context's thread pool.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_REPLAY_REPLAY_H
#define FLY_REPLAY_REPLAY_H

#include "fly/Hints/HintSet.h"
#include "fly/Replay/BinaryPass.h"
#include "fly/Replay/ReplayPlan.h"
#include "fly/Replay/SharedIsa.h"
#include "fly/Replay/VariantResult.h"
#include "fly/Support/AttrNames.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <functional>
#include <memory>

namespace fly {

/// Runs `pipeline` (anchored on builtin.module) on the container module. The
/// pass uses Pass::runPipeline so the parent's instrumentation covers the
/// replays; the library uses its own PassManager.
using PipelineRunner = llvm::function_ref<mlir::LogicalResult(
    mlir::OpPassManager &pipeline, mlir::ModuleOp container)>;

/// The replay pipeline: the binary pass built from `options` with
/// `extraOpts` appended to its `opts`, nested one level (container ->
/// variant). With `capture`, the pass is fly-module-to-binary handing each
/// target's LLVM IR and ISA to it.
mlir::OpPassManager
buildReplayPipeline(const BinaryPassOptions &options, llvm::StringRef extraOpts,
                    std::shared_ptr<IntermediateCapture> capture = nullptr);

/// How a planned replay runs (what it compiles is the plan's).
struct ReplayOptions {
  /// Variants compiled at once; 0 = the context's thread count (1 when
  /// multithreading is off). Bounds how many hinted copies are alive.
  unsigned maxParallel = 0;
  /// Where shared ISAs are kept across calls (crash-isolated replays of one
  /// sweep); null = one table per call.
  std::shared_ptr<SharedIsaTable> sharedIsa;
  /// Asked before each batch starts; false leaves the rest of the entries
  /// unstarted and not handed over (a spent time budget). Null: always.
  std::function<bool()> mayStart;
};

/// Where a replay hands each finished variant: `entry` is its position in
/// the plan. Every requested entry that starts is handed over exactly once,
/// the moment its outcome is final; callers may run replays on several
/// threads at once.
/// Labels (index, id, hints, binary pass) are executePlan's to set.
using VariantSink = std::function<void(unsigned entry, VariantResult result)>;

/// Replays `entries` (positions in `plan`) on hinted clones of the
/// gpu.modules of `source` (left unchanged), handing each outcome to
/// `finished` as soon as it is known. With `nestInSource` the container is
/// placed inside `source` for the duration (what Pass::runPipeline requires)
/// and removed afterwards. A variant whose compile fails is reported in its
/// result and does not stop the others, nor make them compile again. Every
/// entry compiles: leaving out the entries that copy another's outcome
/// (PlanEntry::sameAs) is executePlan's job, the one place that dedupes.
/// Fails only for errors that concern every variant.
mlir::LogicalResult replayPlanned(mlir::ModuleOp source, const ReplayPlan &plan,
                                  llvm::ArrayRef<unsigned> entries,
                                  const ReplayOptions &options,
                                  bool nestInSource, PipelineRunner runPipeline,
                                  const VariantSink &finished);

/// Stage 1 of replayPlanned with plan.reuseIsa alone: compiles into
/// options.sharedIsa (required) the shared ISA that `entries` need and it
/// lacks, finishing no variant. Crash-isolated replays run it once per ISA
/// group first; each variant's own call then only assembles. A failed ISA
/// compile is recorded in the table (its variants fail with it).
mlir::LogicalResult
prepareSharedIsa(mlir::ModuleOp source, const ReplayPlan &plan,
                 llvm::ArrayRef<unsigned> entries, const ReplayOptions &options,
                 bool nestInSource, PipelineRunner runPipeline);

/// Marks each successful variant whose objects equal an earlier variant's.
void markDuplicates(std::vector<VariantResult> &results);

/// After a crash unwound a replay on this thread (CrashRecoveryContext),
/// unregisters its diagnostic capture, whose frame is gone.
void releaseErrorCapturesAfterCrash();

/// The symbol name of variant `index`: `v<index>_<label>`.
std::string getVariantId(unsigned index, const HintSet &hints);

} // namespace fly

#endif // FLY_REPLAY_REPLAY_H
