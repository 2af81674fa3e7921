//===- SlurmOptions.cpp - fly-tune's --executor=slurm options -------------===//

#include "SlurmOptions.h"

#include "fly/Cache/CacheKey.h"
#include "fly/Executor/SlurmSweep.h"
#include "fly/Hints/HintSet.h"
#include "fly/Hints/HintSetSources.h"
#include "fly/Support/BoundedJSON.h"
#include "fly/Support/InstallLocation.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/xxhash.h"

namespace cl = llvm::cl;
using llvm::StringRef;

static cl::OptionCategory slurmCategory("Slurm (--executor=slurm)");
// Where and how jobs run, never what they compile.
[[maybe_unused]] static const bool slurmOptionsOutOfCacheKey =
    (fly::excludeFromCacheKey(slurmCategory), true);

cl::OptionCategory &fly::getSlurmOptionCategory() { return slurmCategory; }
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
static cl::opt<std::string> sweepFileOpt(
    "sweep",
    cl::desc("A sweep file: [{\"input\": \"a.mlir\", \"hints\": [...] or "
             "\"hints_file\": \"h.json\"}, ...] (paths relative to it; no "
             "hints: the command line's); with --executor=slurm, one array "
             "for all"),
    cl::value_desc("sweep.json"), cl::cat(slurmCategory));
// Set by the sweep coordinator on the fly-tune of each kernel.
static cl::opt<std::string> sweepDirOpt("slurm-sweep", cl::Hidden);
static cl::opt<std::string> sweepSlotOpt("slurm-sweep-slot", cl::Hidden);

namespace {
/// One kernel of a sweep file.
struct SweepFileEntry {
  std::string input;
  std::optional<llvm::json::Array> hints;
  std::optional<std::string> hintsFile;
  /// `hints` or `hintsFile`, parsed (readSweepEntries).
  std::optional<std::vector<fly::HintSet>> hintSets;
};

bool fromJSON(const llvm::json::Value &value, SweepFileEntry &entry,
              llvm::json::Path path) {
  llvm::json::ObjectMapper mapper(value, path);
  if (!mapper || !mapper.map("input", entry.input) ||
      !mapper.mapOptional("hints_file", entry.hintsFile))
    return false;
  if (const llvm::json::Value *hints = value.getAsObject()->get("hints")) {
    if (!hints->getAsArray()) {
      path.field("hints").report("expected a list of hint-set objects");
      return false;
    }
    entry.hints = *hints->getAsArray();
  }
  if (entry.hints && entry.hintsFile) {
    path.report("give \"hints\" or \"hints_file\", not both");
    return false;
  }
  return true;
}
} // namespace

namespace fly {

bool slurmSweepFileGiven() { return !sweepFileOpt.empty(); }

/// The kernels of a sweep: the inputs (with the command line's hints), then
/// the entries of the sweep file, paths resolved and each checked before
/// anything runs.
static llvm::Expected<std::vector<SweepFileEntry>>
readSweepEntries(llvm::ArrayRef<std::string> inputs) {
  auto fail = [](const llvm::Twine &message) {
    return llvm::createStringError(message);
  };
  std::vector<SweepFileEntry> entries;
  for (const std::string &input : inputs)
    entries.push_back({input, std::nullopt, std::nullopt});
  if (!sweepFileOpt.empty()) {
    auto buffer = fly::readRegularFile(sweepFileOpt, 64 << 20);
    if (!buffer)
      return fail("the sweep file: " + toString(buffer.takeError()));
    auto parsed = fly::parseJSONBoundedAs<std::vector<SweepFileEntry>>(
        (*buffer)->getBuffer(), sweepFileOpt);
    if (!parsed)
      return parsed.takeError();
    StringRef base = llvm::sys::path::parent_path(sweepFileOpt);
    for (SweepFileEntry &entry : *parsed) {
      auto resolve = [&](std::string &path) {
        if (!base.empty() && llvm::sys::path::is_relative(path)) {
          llvm::SmallString<256> full(base);
          llvm::sys::path::append(full, path);
          path = std::string(full);
        }
      };
      resolve(entry.input);
      if (entry.hintsFile)
        resolve(*entry.hintsFile);
      entries.push_back(std::move(entry));
    }
  }
  if (entries.empty())
    return fail("the sweep file '" + sweepFileOpt + "' lists no kernel");
  for (SweepFileEntry &entry : entries) {
    if (!llvm::sys::fs::is_regular_file(entry.input))
      return fail("cannot read the input '" + entry.input + "'");
    if (!entry.hintsFile && !entry.hints)
      continue;
    HintSetSources sources;
    if (entry.hintsFile) {
      sources.file = *entry.hintsFile;
    } else {
      sources.json =
          llvm::formatv("{0}",
                        llvm::json::Value(llvm::json::Array(*entry.hints)))
              .str();
      sources.jsonName = sweepFileOpt + ": kernel '" + entry.input + "'";
    }
    auto hints = collectHintSets(sources);
    if (!hints)
      return hints.takeError();
    entry.hintSets = std::move(*hints);
  }
  return entries;
}

/// The folder name an input's stem gives: without leading dots (no hidden
/// folder, and none named '.' or '..'), 'kernel' where nothing is left.
static std::string folderStem(llvm::StringRef input) {
  llvm::StringRef stem = llvm::sys::path::stem(input).ltrim('.');
  return stem.empty() ? "kernel" : stem.str();
}

/// Each kernel's folder under the out-dir: its input's stem, `-2`, `-3`...
/// after stems already taken (and after the sweep's index, sweep.json).
static std::vector<std::string>
uniqueStems(llvm::ArrayRef<SweepFileEntry> entries) {
  llvm::StringSet<> taken = {"sweep.json"};
  std::vector<std::string> stems;
  for (const SweepFileEntry &entry : entries) {
    std::string base = folderStem(entry.input), stem = base;
    for (unsigned n = 2; !taken.insert(stem).second; ++n)
      stem = (base + "-" + llvm::Twine(n)).str();
    stems.push_back(std::move(stem));
  }
  return stems;
}

llvm::Expected<std::vector<SweepKernel>>
readSweepKernels(llvm::ArrayRef<std::string> inputs) {
  llvm::Expected<std::vector<SweepFileEntry>> entries =
      readSweepEntries(inputs);
  if (!entries)
    return entries.takeError();
  std::vector<std::string> stems = uniqueStems(*entries);
  std::vector<SweepKernel> kernels;
  for (auto [entry, stem] : llvm::zip(*entries, stems)) {
    kernels.push_back(
        {entry.input, std::move(stem), std::move(entry.hintSets)});
  }
  return kernels;
}

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
    options.childTool = getProgramPath();
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

/// `argv` without the options in `drop` (--x=v and --x v forms) and the
/// arguments in `inputs`.
static std::vector<std::string>
commonArguments(int argc, char **argv, const llvm::StringSet<> &inputs,
                llvm::ArrayRef<StringRef> drop) {
  std::vector<std::string> common;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (inputs.contains(arg))
      continue;
    StringRef name = arg.ltrim('-').split('=').first;
    if (arg.starts_with("-") && llvm::is_contained(drop, name)) {
      if (!arg.contains('=') && i + 1 < argc)
        ++i;
      continue;
    }
    common.push_back(arg.str());
  }
  return common;
}

int runSlurmSweepCommand(int argc, char **argv,
                         llvm::ArrayRef<std::string> inputs, StringRef outDir,
                         StringRef cacheDir,
                         std::function<void(StringRef)> progress) {
  auto fail = [](const llvm::Twine &message) {
    llvm::errs() << "fly-tune: error: " << message << "\n";
    return 1;
  };
  llvm::Expected<SlurmExecutorOptions> executor =
      getSlurmExecutorOptions(cacheDir, progress);
  if (!executor)
    return fail(toString(executor.takeError()));
  SlurmSweepOptions sweep;
  sweep.executor = std::move(*executor);
  std::string self = sweep.executor.childTool;

  llvm::Expected<std::vector<SweepFileEntry>> read = readSweepEntries(inputs);
  if (!read)
    return fail(toString(read.takeError()));
  std::vector<SweepFileEntry> &entries = *read;

  llvm::StringSet<> inputSet;
  for (const std::string &input : inputs)
    inputSet.insert(input);
  std::vector<std::string> common =
      commonArguments(argc, argv, inputSet, {"out-dir", "sweep"});
  std::vector<std::string> commonWithoutHints = commonArguments(
      argc, argv, inputSet, {"out-dir", "sweep", "hints", "hints-file"});
  // Inline hint sets go to a file of their own beside the work directories.
  llvm::SmallString<256> hintsDir(sweep.executor.workDirParent);
  if (hintsDir.empty()) {
    hintsDir = sweep.executor.cacheDir;
    llvm::sys::path::append(hintsDir, "slurm");
  }
  llvm::sys::path::append(hintsDir, "sweep-hints");

  std::vector<std::string> stems = uniqueStems(entries);
  for (auto [entry, stem] : llvm::zip(entries, stems)) {
    llvm::SmallString<256> out(outDir);
    llvm::sys::path::append(out, stem);
    SlurmSweepKernel kernel;
    kernel.name = entry.input;
    kernel.argv = {self};
    const std::vector<std::string> &args =
        entry.hints || entry.hintsFile ? commonWithoutHints : common;
    llvm::append_range(kernel.argv, args);
    kernel.argv.push_back(entry.input);
    kernel.argv.push_back(("--out-dir=" + out).str());
    if (entry.hintsFile) {
      kernel.argv.push_back("--hints-file=" + *entry.hintsFile);
    } else if (entry.hints) {
      std::string text =
          llvm::formatv("{0:2}",
                        llvm::json::Value(llvm::json::Array(*entry.hints)))
              .str();
      llvm::SmallString<256> file(hintsDir);
      llvm::sys::path::append(
          file,
          llvm::formatv("{0:x-16}.json",
                        llvm::xxh3_64bits(llvm::arrayRefFromStringRef(text)))
              .str());
      if (std::error_code ec = llvm::sys::fs::create_directories(hintsDir))
        return fail("cannot create '" + hintsDir + "': " + ec.message());
      if (llvm::Error err =
              llvm::writeToOutput(file, [&](llvm::raw_ostream &os) {
                os << text << "\n";
                return llvm::Error::success();
              }))
        return fail(toString(std::move(err)));
      kernel.argv.push_back(("--hints-file=" + file).str());
    }
    sweep.kernels.push_back(std::move(kernel));
  }
  return runSlurmSweep(sweep, llvm::outs());
}

} // namespace fly
