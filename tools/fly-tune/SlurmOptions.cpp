//===- SlurmOptions.cpp - fly-tune's --executor=slurm options -------------===//

#include "SlurmOptions.h"

#include "fly/Executor/SlurmSweep.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"

namespace cl = llvm::cl;
using llvm::StringRef;

static cl::OptionCategory slurmCategory("Slurm (--executor=slurm)");
static cl::opt<std::string> workDirOpt(
    "work-dir",
    cl::desc("Where the snapshot, plan, results and task logs go; every node "
             "must see it (default: <cache dir>/slurm)"),
    cl::cat(slurmCategory));
static cl::opt<std::string> slurmOptsOpt(
    "slurm-opts",
    cl::desc("Arguments for sbatch, e.g. '--partition=cpu --time=30 "
             "--cpus-per-task=16'"),
    cl::cat(slurmCategory));
static cl::opt<unsigned>
    retriesOpt("retries",
               cl::desc("Submit the variants of a failed, cancelled or "
                        "timed-out task again this many times"),
               cl::init(1), cl::cat(slurmCategory));
static cl::opt<double> timeoutOpt(
    "slurm-timeout",
    cl::desc("Seconds to wait for the array, retries included; then it is "
             "cancelled and what is missing fails"),
    cl::init(24 * 3600), cl::cat(slurmCategory));
static cl::opt<double>
    taskSecondsOpt("slurm-task-seconds",
                   cl::desc("Target length of one array task"), cl::init(60),
                   cl::cat(slurmCategory));
static cl::opt<double> taskOverheadOpt(
    "slurm-task-overhead",
    cl::desc("Slurm's cost per task in seconds (bench/RESULTS.md): a task "
             "carries at least ten times this much work"),
    cl::init(1.0), cl::cat(slurmCategory));
static cl::opt<double> variantSecondsOpt(
    "slurm-variant-seconds",
    cl::desc("CPU seconds per variant for shard sizing (default: time one "
             "variant here first)"),
    cl::init(0), cl::cat(slurmCategory));
static cl::opt<std::string> toolOpt(
    "slurm-tool",
    cl::desc("The fly-tune the array tasks run, at the same path on every "
             "node (default: this one)"),
    cl::cat(slurmCategory));
// Set by the sweep coordinator on the fly-tune of each kernel.
static cl::opt<std::string> sweepDirOpt("slurm-sweep", cl::Hidden);
static cl::opt<std::string> sweepSlotOpt("slurm-sweep-slot", cl::Hidden);

namespace fly {

llvm::Expected<SlurmExecutorOptions>
getSlurmExecutorOptions(StringRef cacheDir,
                        std::function<void(StringRef)> progress) {
  SlurmExecutorOptions options;
  // The tasks run elsewhere: every path they get is absolute.
  if (!cacheDir.empty()) {
    llvm::SmallString<256> absolute(cacheDir);
    if (std::error_code ec = llvm::sys::fs::make_absolute(absolute))
      return llvm::createStringError(ec,
                                     "cannot resolve the cache directory '" +
                                         cacheDir + "': " + ec.message());
    options.cacheDir = std::string(absolute);
  }
  if (cacheDir.empty() && workDirOpt.empty())
    return llvm::createStringError(
        "the slurm executor needs a work directory on a file system every "
        "node sees: pass --work-dir, or use a cache (FLY_CACHE_DIR) whose "
        "slurm/ subdirectory is used by default");
  options.workDirParent = workDirOpt;
  if (!options.workDirParent.empty()) {
    llvm::SmallString<256> absolute(options.workDirParent);
    if (std::error_code ec = llvm::sys::fs::make_absolute(absolute))
      return llvm::createStringError(ec, "cannot resolve --work-dir '" +
                                             workDirOpt + "': " + ec.message());
    options.workDirParent = std::string(absolute);
  }
  if (!toolOpt.empty()) {
    llvm::SmallString<256> absolute(toolOpt);
    llvm::sys::fs::make_absolute(absolute);
    if (!llvm::sys::fs::can_execute(absolute))
      return llvm::createStringError("--slurm-tool '" + toolOpt +
                                     "' is not an executable file");
    options.childTool = std::string(absolute);
  } else {
    // This very fly-tune (/proc/self/exe), however it was started.
    options.childTool = llvm::sys::fs::getMainExecutable(
        nullptr, reinterpret_cast<void *>(&getSlurmExecutorOptions));
  }
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver(allocator);
  llvm::SmallVector<const char *> tokens;
  cl::TokenizeGNUCommandLine(slurmOptsOpt, saver, tokens);
  for (const char *token : tokens)
    options.sbatchArgs.push_back(token);
  options.retries = retriesOpt;
  if (timeoutOpt <= 0)
    return llvm::createStringError("--slurm-timeout must be positive");
  options.timeoutSeconds = timeoutOpt;
  if (taskSecondsOpt <= 0 || taskOverheadOpt < 0 || variantSecondsOpt < 0)
    return llvm::createStringError(
        "--slurm-task-seconds must be positive, --slurm-task-overhead and "
        "--slurm-variant-seconds not negative");
  options.shards.targetTaskSeconds = taskSecondsOpt;
  options.shards.taskOverheadSeconds = taskOverheadOpt;
  options.variantSeconds = variantSecondsOpt;
  options.sweepDir = sweepDirOpt;
  options.sweepSlot = sweepSlotOpt;
  options.progress = std::move(progress);
  return options;
}

int runSlurmSweepCommand(int argc, char **argv,
                         llvm::ArrayRef<std::string> inputs, StringRef outDir,
                         StringRef cacheDir,
                         std::function<void(StringRef)> progress) {
  llvm::Expected<SlurmExecutorOptions> executor =
      getSlurmExecutorOptions(cacheDir, progress);
  if (!executor) {
    llvm::errs() << "fly-tune: error: " << toString(executor.takeError())
                 << "\n";
    return 1;
  }
  SlurmSweepOptions sweep;
  sweep.executor = std::move(*executor);
  std::string self = sweep.executor.childTool;
  // The kernel's own command line is this one without the inputs and the
  // out-dir (arguments equal to an input are inputs).
  llvm::StringSet<> inputSet;
  for (const std::string &input : inputs)
    inputSet.insert(input);
  std::vector<std::string> common = {self};
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (inputSet.contains(arg) || arg.starts_with("--out-dir=") ||
        arg.starts_with("-out-dir="))
      continue;
    if ((arg == "--out-dir" || arg == "-out-dir") && i + 1 < argc) {
      ++i;
      continue;
    }
    common.push_back(arg.str());
  }
  llvm::StringSet<> stems;
  for (const std::string &input : inputs) {
    std::string stem = llvm::sys::path::stem(input).str();
    for (unsigned n = 2; !stems.insert(stem).second; ++n)
      stem = (llvm::sys::path::stem(input) + "-" + llvm::Twine(n)).str();
    llvm::SmallString<256> out(outDir);
    llvm::sys::path::append(out, stem);
    SlurmSweepKernel kernel;
    kernel.name = input;
    kernel.argv = common;
    kernel.argv.push_back(input);
    kernel.argv.push_back(("--out-dir=" + out).str());
    sweep.kernels.push_back(std::move(kernel));
  }
  return runSlurmSweep(sweep, llvm::outs());
}

} // namespace fly
