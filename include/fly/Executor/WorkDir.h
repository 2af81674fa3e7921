//===- WorkDir.h - A replay plan on disk, for other processes ---*- C++ -*-===//
//
// The contract between a parent and the processes that replay for it (child
// fly-tune processes, Slurm array tasks), on a file system both see:
//   <dir>/snapshot.mlirbc      the pre-binary module, MLIR bytecode
//   <dir>/plan.json            the ReplayPlan
//   <dir>/results/<entry>.json one per replayed entry (objects or error,
//                              and with a capturing plan the intermediates;
//                              VariantCodec.h), written atomically by the
//                              child
// `fly-tune --run-plan=<dir> --entries=0-7,12` replays entries into it.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_WORKDIR_H
#define FLY_EXECUTOR_WORKDIR_H

#include "fly/Replay/Replay.h"
#include "fly/Replay/ReplayPlan.h"
#include "fly/Replay/VariantResult.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/Error.h"

#include <optional>

namespace fly {

/// Writes the snapshot and the plan into `dir` (created if needed).
llvm::Error writeReplayWorkDir(llvm::StringRef dir, mlir::ModuleOp preBinary,
                               const ReplayPlan &plan);

struct LoadedWorkDir {
  mlir::OwningOpRef<mlir::ModuleOp> preBinary;
  ReplayPlan plan;
};
/// Reads what writeReplayWorkDir wrote; the module is verified.
llvm::Expected<LoadedWorkDir> readReplayWorkDir(llvm::StringRef dir,
                                                mlir::MLIRContext *context);

/// results/<entry>.json, written to a temporary and renamed.
llvm::Error writeReplayResult(llvm::StringRef dir, unsigned entry,
                              const VariantResult &result);
/// The result of `entry` if its file exists and is well formed; its
/// attributes in `context`.
std::optional<VariantResult> readReplayResult(llvm::StringRef dir,
                                              unsigned entry,
                                              mlir::MLIRContext &context);
/// Only the replay time recorded in the result of `entry` (no context
/// needed: Slurm's one-variant measurement).
std::optional<double> readReplayMs(llvm::StringRef dir, unsigned entry);

/// The process executor's work directories: `fly-replay-*` in their parent
/// directory, each with an `owner` file naming the process that made it
/// ("<pid> <host>"). A directory without one is not the executor's and is
/// never removed.
llvm::Error markWorkDirOwner(llvm::StringRef dir);
/// Removes the `fly-replay-*` directories in `parent` whose owner, on this
/// host, is gone (a killed run's).
void removeStaleWorkDirs(llvm::StringRef parent);
/// In a child of the owner of `dir`: this process gets SIGKILL when the
/// owner dies. False if the owner is already gone. Any other process (no
/// owner file, another parent: a Slurm task) is left as it is.
bool dieWithWorkDirOwner(llvm::StringRef dir);

/// The child's side (`fly-tune --run-plan`): replays `entries` of the plan in
/// `dir` and writes each result as soon as it is known, so a crash loses
/// only the entry in flight. `jobs` > 1 compiles that many at once in
/// batches (a Slurm task with several CPUs); 1 compiles one at a time.
/// Fails (diagnostics on the context) only when the work directory is
/// unusable. A child of the process that owns `dir` (markWorkDirOwner) dies
/// with it, and does nothing if that process is already gone.
mlir::LogicalResult replayWorkDirEntries(llvm::StringRef dir,
                                         llvm::StringRef entryList,
                                         mlir::MLIRContext &context,
                                         unsigned jobs,
                                         PipelineRunner runPipeline);

} // namespace fly

#endif // FLY_EXECUTOR_WORKDIR_H
