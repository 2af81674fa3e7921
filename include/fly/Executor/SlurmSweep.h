//===- SlurmSweep.h - Many kernels, one Slurm job array ---------*- C++ -*-===//
//
// `fly-tune a.mlir b.mlir ... --executor=slurm` tunes a library with one
// submission. The coordinator starts one fly-tune per kernel (its own
// process: phase 1, plan, cache and output stay exactly those of a
// single-kernel run) with `--slurm-sweep=<dir> --slurm-sweep-slot=<k>`.
// Instead of submitting, each kernel's slurm executor writes its work
// directory and files a request in the sweep directory:
//   <dir>/requests/<k>.json  {"work_dir": ..., "entries": [...]}
// Once every kernel has filed a request or ended, the coordinator runs all
// requested entries as one job array (SlurmArrayRunner: shards, retries,
// timeout, cancellation) and answers each kernel:
//   <dir>/replies/<k>.json   {"failed": {"<entry>": "<why>", ...}}
// The kernel reads its results from its work directory and finishes as a
// local run would. The sweep directory is named after the kernels' command
// lines, so a rerun after an interruption finds the array still running.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_SLURMSWEEP_H
#define FLY_EXECUTOR_SLURMSWEEP_H

#include "fly/Executor/SlurmExecutor.h"

#include "mlir/Support/LLVM.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace fly {

struct SlurmSweepKernel {
  /// Shown above the kernel's output (its input file).
  std::string name;
  /// The kernel's own fly-tune command line, program first.
  std::vector<std::string> argv;
};

struct SlurmSweepOptions {
  /// Sweep directories go under `executor.workDirParent` (or
  /// `<cacheDir>/slurm`); sbatch arguments, retries, timeout and shard
  /// policy apply to the one array.
  SlurmExecutorOptions executor;
  std::vector<SlurmSweepKernel> kernels;
};

/// Runs the sweep; prints each kernel's output in order to `os`. Returns
/// the exit status: 1 if a kernel failed as a whole, else 2 if a variant
/// failed, else 0.
int runSlurmSweep(const SlurmSweepOptions &options, llvm::raw_ostream &os);

/// A kernel's side: files `entries` of `workDir` as request `slot` of the
/// sweep in `sweepDir` and waits (at most `timeoutSeconds`) for the reply;
/// returns the entries that failed, with why. Fails if the coordinator is
/// gone or never answers.
mlir::FailureOr<std::map<unsigned, std::string>>
requestFromSweep(llvm::StringRef sweepDir, llvm::StringRef slot,
                 llvm::StringRef workDir, llvm::ArrayRef<unsigned> entries,
                 double timeoutSeconds,
                 const std::function<void(llvm::StringRef)> &progress);

} // namespace fly

#endif // FLY_EXECUTOR_SLURMSWEEP_H
