//===- SlurmOptions.h - fly-tune's --executor=slurm options -----*- C++ -*-===//
//
// The command-line side of the slurm executor (SlurmExecutor.h), kept out of
// fly-tune.cpp: --work-dir, --slurm-opts, --retries, --slurm-timeout, the
// shard sizing options, and several inputs as one sweep (SlurmSweep.h).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_TUNE_SLURMOPTIONS_H
#define FLY_TUNE_SLURMOPTIONS_H

#include "fly/Executor/SlurmExecutor.h"
#include "fly/Hints/HintSet.h"
#include "fly/Tool/TuneDriver.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace fly {

/// The executor's options from the command line; `cacheDir` is the cache
/// the tasks store into ("" when it is off). Errors name the bad option.
llvm::Expected<SlurmExecutorOptions>
getSlurmExecutorOptions(llvm::StringRef cacheDir,
                        std::function<void(llvm::StringRef)> progress);

/// The category of the Slurm options, which --help lists after fly-tune's.
llvm::cl::OptionCategory &getSlurmOptionCategory();

/// Whether --sweep=<file> was given.
bool slurmSweepFileGiven();

/// The kernels of `inputs` and --sweep, each input readable and its hints
/// parsed, before anything compiles.
llvm::Expected<std::vector<SweepKernel>>
readSweepKernels(llvm::ArrayRef<std::string> inputs);

/// Several inputs, or a sweep file: one fly-tune per kernel (argv without
/// the inputs, with --out-dir=<outDir>/<input stem> and the kernel's hints),
/// all replayed by one job array.
int runSlurmSweepCommand(int argc, char **argv,
                         llvm::ArrayRef<std::string> inputs,
                         llvm::StringRef outDir, llvm::StringRef cacheDir,
                         std::function<void(llvm::StringRef)> progress);

} // namespace fly

#endif // FLY_TUNE_SLURMOPTIONS_H
