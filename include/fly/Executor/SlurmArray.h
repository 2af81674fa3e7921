//===- SlurmArray.h - Work items as one Slurm job array ---------*- C++ -*-===//
//
// Runs numbered work items on a Slurm cluster: the items are cut into shards,
// one job array (`sbatch --parsable`) runs shard K as task K, and the caller
// says which items are done (a result file on the shared file system), not
// Slurm's exit codes. squeue is polled here (never `sbatch --wait`, which
// polls after 2, 8, 32 s) and every wait is bounded. Items of tasks that
// failed, were cancelled, timed out or lost their node are submitted again
// (`retries` times), then reported failed. The array id is recorded in the
// state directory, so a run started after this process was killed waits for
// the array still running instead of submitting its items twice; SIGINT and
// SIGTERM cancel the arrays of this process (scancel) before it dies.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_SLURMARRAY_H
#define FLY_EXECUTOR_SLURMARRAY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fly {

/// One command line (program and arguments) run by an array task. An
/// argument may contain `kSlurmCpusToken`, replaced at run time by the number
/// of CPUs the task was given (SLURM_CPUS_PER_TASK, 1 when unset).
using ShellCommand = std::vector<std::string>;
inline constexpr llvm::StringLiteral kSlurmCpusToken = "@SLURM_CPUS@";

struct SlurmArrayOptions {
  /// Task script, task logs and the record of the running array. Must be on
  /// a file system every node sees.
  std::string stateDir;
  /// Passed to sbatch as they are (partition, account, time, constraints,
  /// --cpus-per-task...).
  std::vector<std::string> sbatchArgs;
  std::string jobName = "fly";
  /// Exported by the task script before its commands run.
  std::vector<std::pair<std::string, std::string>> environment;
  /// Items of a failed task are submitted again this many times.
  unsigned retries = 1;
  /// Bound on the whole run, every array included; on expiry the array is
  /// cancelled and the missing items are reported failed.
  double timeoutSeconds = 24 * 3600;
  /// First and longest pause between two polls (it grows while nothing
  /// changes and shrinks when something does).
  double minPollSeconds = 0.2, maxPollSeconds = 5;
  std::function<void(llvm::StringRef)> progress;
};

/// How shards are sized. Slurm's cost per task (`taskOverheadSeconds`,
/// measured in bench/RESULTS.md: about a second of slot time) must stay a
/// small part of a task: a task carries at least ten times that much work,
/// at most `targetTaskSeconds`, and less when the items spread over the free
/// `slots` (tasks of cpusPerTask CPUs the cluster can run at once; 0:
/// unknown) give every slot one task. Never more than `maxTasks` tasks (0:
/// no limit).
struct SlurmShardPolicy {
  double taskOverheadSeconds = 1.0;
  double targetTaskSeconds = 60;
  unsigned cpusPerTask = 1;
  unsigned slots = 0;
  unsigned maxTasks = 0;
};

/// The CPUs per task that `sbatchArgs` ask for (-c N, --cpus-per-task=N);
/// 1 when they do not.
unsigned slurmCpusPerTask(llvm::ArrayRef<std::string> sbatchArgs);

/// How many tasks of `cpusPerTask` CPUs the partition that `sbatchArgs`
/// name (or the default) can start now, from `sinfo`'s idle CPUs; 0 when
/// sinfo cannot tell.
unsigned slurmFreeSlots(llvm::ArrayRef<std::string> sbatchArgs,
                        unsigned cpusPerTask);

/// Items per shard for `numItems` items of `itemSeconds` CPU time each.
unsigned slurmShardSize(unsigned numItems, double itemSeconds,
                        const SlurmShardPolicy &policy);

/// `shards` rendered as the task script of one array: task K runs the
/// commands of shards[K] one after another and exits non-zero if any did.
std::string renderSlurmTaskScript(
    llvm::ArrayRef<std::vector<ShellCommand>> shards,
    llvm::ArrayRef<std::pair<std::string, std::string>> environment);

/// The state of one array task as squeue reports it.
struct SlurmTaskState {
  unsigned task = 0;
  std::string state;  // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED...
  std::string reason; // squeue's %r
  std::string nodes;
  bool finished() const;
};

/// Parses `squeue -h -r -t all -o '%K|%T|%r|%N'` output.
std::vector<SlurmTaskState> parseSqueueTasks(llvm::StringRef output);

struct SlurmRunReport {
  /// Array job ids in submission order (adopted ones included).
  std::vector<std::string> arrays;
  unsigned tasksSubmitted = 0, itemsSubmitted = 0, resubmittedItems = 0;
  /// Items still not done at the end, with the reason.
  std::map<unsigned, std::string> failed;
  double submitSeconds = 0, waitSeconds = 0;
};

class SlurmArrayRunner {
public:
  explicit SlurmArrayRunner(SlurmArrayOptions options);

  /// Runs every item of `items` not yet `isDone`, `itemsPerShard` per task;
  /// `commandsFor(shard)` gives the commands of a task. Fails only when
  /// Slurm cannot be used at all (no sbatch, submission refused, squeue
  /// unreachable until the timeout); items that did not finish are in the
  /// report instead.
  llvm::Expected<SlurmRunReport>
  run(llvm::ArrayRef<unsigned> items, unsigned itemsPerShard,
      llvm::function_ref<std::vector<ShellCommand>(llvm::ArrayRef<unsigned>)>
          commandsFor,
      llvm::function_ref<bool(unsigned)> isDone);

  /// Where task `task` of array `arrayId` writes its output.
  std::string taskLogPath(llvm::StringRef arrayId, unsigned task) const;

private:
  llvm::Expected<std::string>
  submit(llvm::ArrayRef<std::vector<ShellCommand>> shards, unsigned round);
  /// Polls until every task of `arrayId` finished; the states at the end.
  llvm::Expected<std::vector<SlurmTaskState>> wait(llvm::StringRef arrayId,
                                                   double deadline);
  llvm::Error cancel(llvm::StringRef arrayId);
  void say(const llvm::Twine &line);

  SlurmArrayOptions options;
};

} // namespace fly

#endif // FLY_EXECUTOR_SLURMARRAY_H
