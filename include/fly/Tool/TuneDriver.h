//===- TuneDriver.h - fly-tune's steps over SplitCompiler -------*- C++ -*-===//
//
// fly-tune parses its flags into TuneOptions and runs them here: the target
// and its defaults (hint sets, toolkit, preset pipeline fitted to each
// input), one compile or a sweep of several kernels, the table and out-dir
// per kernel, then the benchmark through fly-run. The process executor's
// child mode (--run-plan) is runPlanEntries.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_TOOL_TUNEDRIVER_H
#define FLY_TOOL_TUNEDRIVER_H

#include "fly/Executor/Executor.h"
#include "fly/Hints/HintSet.h"
#include "fly/Support/TimeTrace.h"

#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class PassManager;
} // namespace mlir

namespace fly {

/// --executor: where variants compile (ExecutorKind), or slurm: the process
/// executor's children as a Slurm job array.
enum class TuneExecutor { Batch, Isolated, Process, Slurm };

/// One kernel of a sweep: the inputs, then the sweep file's entries.
struct SweepKernel {
  std::string input;
  /// Its folder under the out-dir: the input's stem, made unique.
  std::string stem;
  /// Its own hint sets (the sweep file's); none: the command line's.
  std::optional<std::vector<HintSet>> hintSets;
};

/// The example fly-tune tunes when given no input.
struct BundledExample {
  llvm::StringRef kernel, hints, launchSpec;
};

/// fly-tune's flags, typed; `std::optional` ones distinguish "not given"
/// from a given empty or default value.
struct TuneOptions {
  std::string target = "rocdl:gfx942";
  bool targetGiven = false;
  std::optional<std::string> hints;
  std::string hintsFile;
  std::string pipeline;
  std::string toolkit;
  /// "" = the family's default (defaultObjectFormat).
  std::string format;
  unsigned jobs = 0;
  std::string outDir = "fly-tune-out";
  bool noCache = false;
  bool explainCache = false;
  bool quiet = false;
  /// --bench: a launch spec, or "" for the bundled example's.
  std::optional<std::string> bench;
  bool requireGpu = false;
  bool retune = false;
  TuneExecutor executor = TuneExecutor::Isolated;
  std::string writePlan;
  std::optional<unsigned> variantTimeout;
  double timeBudget = 0;
  bool reuseIsa = true;
  bool bestAllowNumericsChanges = false;
  /// --time-trace: where the Chrome trace of this process's threads goes
  /// ("" = none), spans of at least `timeTraceGranularityUs`.
  std::string timeTrace;
  unsigned timeTraceGranularityUs = kDefaultTimeTraceGranularityUs;
  /// An --mlir-print-ir-* flag was given (it prints nothing for passes that
  /// a cache hit skips).
  bool irPrinting = false;
  /// Applied to every pass manager (the --mlir-* pass-manager flags).
  std::function<mlir::LogicalResult(mlir::PassManager &)> configurePassManager;
  /// configurePassManager instruments the pass runs:
  /// SplitCompilerOptions::replaysInstrumented.
  bool replaysInstrumented = false;
  /// With --executor=slurm: the executor for `cacheDir` (the cache the tasks
  /// store into, "" when off); an error names the bad option.
  std::function<
      llvm::Expected<std::function<std::unique_ptr<ReplayExecutor>()>>(
          llvm::StringRef cacheDir)>
      makeSlurmExecutor;
  /// The directory of the running fly-tune: fly-run sits beside it and the
  /// toolkit lookup starts there.
  std::string toolDir;
  BundledExample bundled;
};

/// Why --time-trace cannot go with `executor`: its variants compile in
/// other processes, which the trace leaves out. "" where it can.
llvm::StringRef getTimeTraceRefusal(TuneExecutor executor);

/// Compiles `kernels` (one: a single compile, several: one sweep, each
/// kernel's outputs in <outDir>/<stem> and sweep.json over all) as
/// `options` says, prints the tables and returns fly-tune's exit status: 0,
/// 1 (an error, or every variant of a kernel failed), 2 (some variants
/// failed), or fly-run's with --bench.
int runTune(const TuneOptions &options, llvm::ArrayRef<SweepKernel> kernels);

/// The process executor's child: replays `entries` ("0-7,12") of the plan
/// in `workDir` into its results/, `jobs` at once. Returns the exit status.
int runPlanEntries(llvm::StringRef workDir, llvm::StringRef entries,
                   unsigned jobs);

} // namespace fly

#endif // FLY_TOOL_TUNEDRIVER_H
