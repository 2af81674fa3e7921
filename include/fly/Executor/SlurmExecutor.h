//===- SlurmExecutor.h - Replays as one Slurm job array ---------*- C++ -*-===//
//
// The process executor's children (`fly-tune --run-plan=<dir> --entries=...`)
// as the tasks of one Slurm job array. The work directory (snapshot, plan,
// one result file per entry) sits on a file system every node sees, named
// by the digest of the snapshot and the plan: a run after an interruption
// finds the results that are already there (and the array that may still
// be running, SlurmArray.h) and submits only what is missing. Each task runs
// its shard with all CPUs of its allocation; shards are sized from Slurm's
// per-task overhead and a target task length (SlurmShardPolicy).
//
// Several kernels go into one array through a sweep (SlurmSweep.h): each
// kernel's executor hands its request to the sweep coordinator instead of
// submitting, and gets its results back from the one array.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_SLURMEXECUTOR_H
#define FLY_EXECUTOR_SLURMEXECUTOR_H

#include "fly/Executor/Executor.h"
#include "fly/Executor/SlurmArray.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fly {

struct SlurmExecutorOptions {
  /// The fly-tune the tasks run; "" = findChildTool(). Must be at the same
  /// path on every node.
  std::string childTool;
  /// Where work directories are made (one per snapshot and plan); "" =
  /// `<cacheDir>/slurm`. Must be on a file system every node sees.
  std::string workDirParent;
  /// The compile cache the tasks store into (FLY_CACHE_DIR); "" = off.
  std::string cacheDir;
  /// sbatch arguments (--slurm-opts), the retries and the overall bound.
  std::vector<std::string> sbatchArgs;
  unsigned retries = 1;
  double timeoutSeconds = 24 * 3600;
  /// Shard sizing. cpusPerTask and slots are found from sbatchArgs and
  /// `sinfo` when 0.
  SlurmShardPolicy shards;
  /// CPU seconds one variant takes; 0 = measure it by replaying one entry
  /// here first (that result counts).
  double variantSeconds = 0;
  /// Part of a sweep (SlurmSweep.h): the sweep's directory and this
  /// kernel's slot in it; the entries go into the sweep's one array.
  std::string sweepDir;
  std::string sweepSlot;
  std::function<void(llvm::StringRef)> progress;
};

std::unique_ptr<ReplayExecutor>
createSlurmExecutor(SlurmExecutorOptions options);

/// Entries of one work directory (WorkDir.h) to replay.
struct SlurmReplayRequest {
  std::string workDir;
  std::vector<unsigned> entries;
};

/// Replays every request as one job array whose state (task script, logs,
/// running array) is in `stateDir`: tasks run `tool --run-plan=<workDir>
/// --entries=<shard> --jobs=<the task's CPUs>`. Returns, per request, the
/// entries left without a result and why.
llvm::Expected<std::vector<std::map<unsigned, std::string>>>
runSlurmReplays(const SlurmExecutorOptions &options, llvm::StringRef tool,
                llvm::ArrayRef<SlurmReplayRequest> requests,
                llvm::StringRef stateDir);

} // namespace fly

#endif // FLY_EXECUTOR_SLURMEXECUTOR_H
