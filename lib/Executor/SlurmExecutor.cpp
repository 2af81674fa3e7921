//===- SlurmExecutor.cpp - Replays as one Slurm job array -----------------===//

#include "fly/Executor/SlurmExecutor.h"
#include "fly/Executor/SlurmSweep.h"
#include "fly/Executor/WorkDir.h"
#include "fly/Support/InstallLocation.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/xxhash.h"

#include <chrono>

using namespace mlir;
using namespace llvm;

namespace fly {

namespace {
class SlurmExecutor : public ReplayExecutor {
public:
  explicit SlurmExecutor(SlurmExecutorOptions options)
      : options(std::move(options)) {}
  StringRef getName() const override { return "slurm"; }

  LogicalResult execute(const ReplayWork &work, ArrayRef<unsigned> entries,
                        const VariantSink &finished) override;

private:
  void say(const Twine &line) {
    if (options.progress)
      options.progress(line.str());
  }

  SlurmExecutorOptions options;
  /// A sweep answers one request per kernel; a second call (entries another
  /// process was compiling, then not cached) gets an array of its own.
  bool askedSweep = false;
};
} // namespace

/// Names the work directory after what it holds: the plan (whose entries
/// carry cache keys over input, pipeline, chip, toolchain and hints) and,
/// without cache keys, the snapshot bytes too. The same sweep run again
/// finds its directory, its results and its running array.
static std::string workDigest(const ReplayWork &work) {
  std::string text = formatv("{0}", json::Value(toJSON(work.plan))).str();
  if (llvm::any_of(work.plan.entries,
                   [](const PlanEntry &e) { return e.cacheKey.empty(); })) {
    raw_string_ostream os(text);
    if (failed(writeBytecodeToFile(work.preBinary, os)))
      os << "unwritable";
  }
  XXH128_hash_t hash = xxh3_128bits(arrayRefFromStringRef(text));
  return formatv("{0:x-16}{1:x-16}", hash.high64, hash.low64).str();
}

static std::string resultPath(StringRef dir, unsigned entry) {
  SmallString<256> path(dir);
  sys::path::append(path, "results", Twine(entry) + ".json");
  return std::string(path);
}

/// Replays one entry here, timed: CPU seconds per variant for shard sizing.
/// Its result counts like any other.
static double measureVariant(StringRef tool, StringRef dir, unsigned entry,
                             const std::function<void(StringRef)> &progress) {
  std::string planArg = ("--run-plan=" + dir).str();
  std::string entriesArg = formatv("--entries={0}", entry).str();
  SmallVector<StringRef> args = {tool, planArg, entriesArg, "--jobs=1",
                                 "--quiet"};
  auto start = std::chrono::steady_clock::now();
  std::optional<StringRef> quiet[] = {StringRef(""), StringRef(""),
                                      std::nullopt};
  sys::ExecuteAndWait(tool, args, std::nullopt, quiet, 600);
  double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::optional<double> ms = readReplayMs(dir, entry);
  double seconds = ms && *ms > 0 ? *ms / 1e3 : wall;
  if (progress)
    progress(formatv("slurm: one variant takes {0:f2} s here ({1:f2} s with "
                     "the process start)",
                     seconds, wall)
                 .str());
  return seconds;
}

Expected<std::vector<std::map<unsigned, std::string>>>
runSlurmReplays(const SlurmExecutorOptions &options, StringRef tool,
                ArrayRef<SlurmReplayRequest> requests, StringRef stateDir) {
  auto say = [&](const Twine &line) {
    if (options.progress)
      options.progress(line.str());
  };
  // Items number the (request, entry) pairs.
  std::vector<std::pair<unsigned, unsigned>> itemOf;
  for (auto [r, request] : llvm::enumerate(requests))
    for (unsigned e : request.entries)
      itemOf.emplace_back(r, e);
  auto isDone = [&](unsigned item) {
    auto [r, e] = itemOf[item];
    return sys::fs::exists(resultPath(requests[r].workDir, e));
  };
  std::vector<unsigned> items;
  for (unsigned item = 0; item < itemOf.size(); ++item)
    if (!isDone(item))
      items.push_back(item);
  std::vector<std::map<unsigned, std::string>> missing(requests.size());
  if (items.empty())
    return missing;

  SlurmShardPolicy policy = options.shards;
  if (!policy.cpusPerTask)
    policy.cpusPerTask = slurmCpusPerTask(options.sbatchArgs);
  if (!policy.slots)
    policy.slots = slurmFreeSlots(options.sbatchArgs, policy.cpusPerTask);
  double variantSeconds = options.variantSeconds;
  if (variantSeconds <= 0) {
    auto [r, e] = itemOf[items.front()];
    variantSeconds =
        measureVariant(tool, requests[r].workDir, e, options.progress);
    if (isDone(items.front()))
      items.erase(items.begin());
  }
  unsigned shard = slurmShardSize(items.size(), variantSeconds, policy);

  SlurmArrayOptions arrayOptions;
  arrayOptions.stateDir = stateDir.str();
  arrayOptions.sbatchArgs = options.sbatchArgs;
  arrayOptions.jobName = "fly-tune";
  arrayOptions.retries = options.retries;
  arrayOptions.timeoutSeconds = options.timeoutSeconds;
  arrayOptions.progress = options.progress;
  if (options.cacheDir.empty())
    arrayOptions.environment.emplace_back("FLY_ENABLE_CACHE", "0");
  else
    arrayOptions.environment.emplace_back("FLY_CACHE_DIR", options.cacheDir);
  say(formatv("slurm: {0} variant(s) of {1} kernel(s), {2} per task, {3} "
              "CPU(s) per task",
              items.size(), requests.size(), shard, policy.cpusPerTask));
  SlurmArrayRunner runner(std::move(arrayOptions));
  Expected<SlurmRunReport> report = runner.run(
      items, shard,
      [&](ArrayRef<unsigned> shardItems) {
        // One child per work directory in the shard.
        std::vector<ShellCommand> commands;
        std::map<unsigned, std::vector<unsigned>> byRequest;
        for (unsigned item : shardItems)
          byRequest[itemOf[item].first].push_back(itemOf[item].second);
        for (const auto &[r, entries] : byRequest)
          commands.push_back({tool.str(), "--run-plan=" + requests[r].workDir,
                              "--entries=" + formatEntryList(entries),
                              ("--jobs=" + kSlurmCpusToken).str(), "--quiet"});
        return commands;
      },
      isDone);
  if (!report)
    return report.takeError();
  say(formatv("slurm: {0} array(s), {1} task(s), {2} variant(s) submitted, "
              "{3} resubmitted, {4} failed",
              report->arrays.size(), report->tasksSubmitted,
              report->itemsSubmitted, report->resubmittedItems,
              report->failed.size()));
  for (const auto &[item, why] : report->failed)
    missing[itemOf[item].first][itemOf[item].second] = why;
  return missing;
}

LogicalResult SlurmExecutor::execute(const ReplayWork &work,
                                     ArrayRef<unsigned> entries,
                                     const VariantSink &finished) {
  Location loc = work.preBinary.getLoc();
  std::string tool =
      options.childTool.empty() ? findChildTool() : options.childTool;
  if (tool.empty() || !sys::fs::can_execute(tool))
    return emitError(loc) << "the slurm executor needs fly-tune at the same "
                             "path on every node ("
                          << (tool.empty() ? "none found in ../bin beside "
                                             "the fly-snapshot library"
                                           : "'" + tool + "' is not executable")
                          << ")";
  SmallString<256> parent(options.workDirParent);
  if (parent.empty()) {
    if (options.cacheDir.empty())
      return emitError(loc)
             << "the slurm executor needs a work directory on a file system "
                "every node sees: pass --work-dir, or use a cache "
                "(FLY_CACHE_DIR) whose slurm/ subdirectory is used by default";
    parent = options.cacheDir;
    sys::path::append(parent, "slurm");
  }
  if (std::error_code ec = sys::fs::make_absolute(parent))
    return emitError(loc) << "cannot resolve '" << parent
                          << "': " << ec.message();
  SmallString<256> dir(parent);
  sys::path::append(dir, workDigest(work));
  if (Error err = writeReplayWorkDir(dir, work.preBinary, work.plan))
    return emitError(loc) << toString(std::move(err));

  // A failure recorded by an earlier run is tried again; a success stays.
  std::vector<unsigned> pending;
  for (unsigned e : entries) {
    std::optional<VariantResult> earlier =
        readReplayResult(dir, e, *work.preBinary.getContext());
    if (earlier && earlier->succeeded())
      continue;
    if (earlier)
      sys::fs::remove(resultPath(dir, e));
    pending.push_back(e);
  }
  // Cancelled (or out of time) before the array starts: nothing is
  // submitted and what had no result is not started (a sweep still gets
  // this kernel's empty request).
  llvm::DenseSet<unsigned> unstarted;
  if (!pending.empty() && work.mayStart && !work.mayStart()) {
    unstarted.insert(pending.begin(), pending.end());
    pending.clear();
  }
  say(formatv("slurm: work directory {0}: {1} of {2} variant(s) to replay", dir,
              pending.size(), entries.size()));

  std::map<unsigned, std::string> missing;
  if (!options.sweepDir.empty() && !askedSweep) {
    // One array for every kernel of the sweep: the coordinator runs it.
    askedSweep = true;
    FailureOr<std::map<unsigned, std::string>> reply =
        requestFromSweep(options.sweepDir, options.sweepSlot, dir, pending,
                         options.timeoutSeconds, options.progress);
    if (failed(reply))
      return emitError(loc) << "the slurm sweep did not answer";
    missing = std::move(*reply);
  } else if (!pending.empty()) {
    SmallString<256> stateDir(dir);
    sys::path::append(stateDir, "slurm");
    Expected<std::vector<std::map<unsigned, std::string>>> report =
        runSlurmReplays(options, tool, {{std::string(dir), pending}}, stateDir);
    if (!report)
      return emitError(loc) << "slurm: " << toString(report.takeError());
    missing = std::move(report->front());
  }

  // The array's results are read once it has ended.
  bool allSucceeded = true;
  for (unsigned e : entries) {
    if (unstarted.contains(e))
      continue;
    std::optional<VariantResult> result =
        readReplayResult(dir, e, *work.preBinary.getContext());
    VariantResult out;
    if (result) {
      out = std::move(*result);
    } else {
      auto it = missing.find(e);
      out.error =
          it != missing.end() ? it->second : std::string("slurm: no result");
    }
    allSucceeded &= out.succeeded();
    finished(e, std::move(out));
  }
  // Everything delivered: the cache holds it, the directory can go. What
  // failed keeps its logs for a look.
  if (options.workDirParent.empty() && allSucceeded)
    sys::fs::remove_directories(dir);
  return success();
}

std::unique_ptr<ReplayExecutor>
createSlurmExecutor(SlurmExecutorOptions options) {
  return std::make_unique<SlurmExecutor>(std::move(options));
}

} // namespace fly
