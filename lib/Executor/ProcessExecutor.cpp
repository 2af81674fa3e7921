//===- ProcessExecutor.cpp - Replays in child fly-tune processes ----------===//
//
// The snapshot and the plan go into a fresh work directory (WorkDir.h); the
// entries are split into one shard per job, and each shard is replayed by a
// child `fly-tune --run-plan=<dir> --entries=<shard>`. A child that dies
// (signal, stack overflow, heap corruption, LLVM fatal error, time limit)
// takes only its unfinished entries with it: those are run again one per
// child, so the entry that kills its process is found and fails alone with
// the child's last words, and every other variant is delivered.
//
//===----------------------------------------------------------------------===//

#include "fly/Executor/Executor.h"
#include "fly/Executor/WorkDir.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"

#include <dlfcn.h>

using namespace mlir;
using namespace llvm;

namespace fly {

std::string findChildTool() {
  // ../bin/fly-tune from the file that holds this code: the fly-tune program
  // itself, or libFlySnapshotCAPI.so / the plugin in <prefix>/lib. For code
  // in the main program dladdr gives the name it was started by, which may
  // be a bare name: /proc/self/exe (getMainExecutable) then.
  void *self = reinterpret_cast<void *>(&findChildTool);
  std::string holder;
  Dl_info info;
  if (dladdr(self, &info) && info.dli_fname &&
      sys::path::is_absolute(info.dli_fname))
    holder = info.dli_fname;
  else
    holder = sys::fs::getMainExecutable(nullptr, self);
  SmallString<256> real;
  if (holder.empty() || sys::fs::real_path(holder, real))
    return "";
  SmallString<256> tool(sys::path::parent_path(sys::path::parent_path(real)));
  sys::path::append(tool, "bin", "fly-tune");
  return sys::fs::can_execute(tool) ? std::string(tool) : "";
}

namespace {
class ProcessExecutor : public ReplayExecutor {
public:
  explicit ProcessExecutor(ExecutorOptions options)
      : options(std::move(options)) {}
  StringRef getName() const override { return "process"; }

  FailureOr<std::vector<VariantResult>>
  execute(const ReplayWork &work, ArrayRef<unsigned> entries) override;

private:
  struct Child {
    std::vector<unsigned> entries;
    std::string log;
    sys::ProcessInfo process;
    std::string error; // Could not start.
    std::string statusText;
  };
  /// Runs `shards` as children, `jobs` at a time; fills each Child.
  void runChildren(StringRef tool, StringRef dir, std::vector<Child> &children,
                   unsigned jobs);

  ExecutorOptions options;
};
} // namespace

/// What a dead child said: the first line that reads as an error (LLVM's
/// "LLVM ERROR: ..." or a diagnostic; the backend's own words) and the last
/// lines of its output.
static std::pair<std::string, std::string> lastWordsOf(StringRef path,
                                                       size_t tailLines = 20) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return {};
  StringRef text = (*buffer)->getBuffer().rtrim();
  std::string firstError;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (StringRef line : lines)
    if (line.contains("LLVM ERROR:") || line.contains("error:")) {
      firstError = line.trim().str();
      break;
    }
  size_t from = lines.size() > tailLines ? lines.size() - tailLines : 0;
  std::string tail = llvm::join(ArrayRef(lines).drop_front(from), "\n");
  return {firstError, tail};
}

void ProcessExecutor::runChildren(StringRef tool, StringRef dir,
                                  std::vector<Child> &children, unsigned jobs) {
  for (size_t begin = 0; begin < children.size(); begin += jobs) {
    size_t end = std::min(children.size(), begin + jobs);
    for (size_t c = begin; c < end; ++c) {
      Child &child = children[c];
      std::string planArg = ("--run-plan=" + dir).str();
      std::string entriesArg = "--entries=" + formatEntryList(child.entries);
      SmallVector<StringRef> args = {tool, planArg, entriesArg, "--jobs=1",
                                     "--quiet"};
      std::optional<StringRef> redirects[] = {StringRef(""), child.log,
                                              child.log};
      bool failedToStart = false;
      child.process = sys::ExecuteNoWait(tool, args, std::nullopt, redirects, 0,
                                         &child.error, &failedToStart);
      if (failedToStart && child.error.empty())
        child.error = "cannot start " + tool.str();
    }
    for (size_t c = begin; c < end; ++c) {
      Child &child = children[c];
      if (!child.error.empty())
        continue;
      std::string waitError;
      std::optional<unsigned> limit;
      if (options.childTimeoutSeconds)
        limit = options.childTimeoutSeconds;
      sys::ProcessInfo done = sys::Wait(child.process, limit, &waitError);
      if (done.ReturnCode == -2)
        child.statusText = "was killed: " + waitError;
      else if (done.ReturnCode < 0)
        child.statusText = "died: " + waitError;
      else if (done.ReturnCode != 0)
        child.statusText = formatv("exited with status {0}", done.ReturnCode);
    }
  }
}

FailureOr<std::vector<VariantResult>>
ProcessExecutor::execute(const ReplayWork &work, ArrayRef<unsigned> entries) {
  Location loc = work.preBinary.getLoc();
  std::string tool =
      options.childTool.empty() ? findChildTool() : options.childTool;
  if (tool.empty() || !sys::fs::can_execute(tool))
    return emitError(loc) << "the process executor needs fly-tune ("
                          << (tool.empty() ? "none found in ../bin beside "
                                             "the fly-snapshot library"
                                           : "'" + tool + "' is not executable")
                          << ")";
  SmallString<256> parent(options.workDirParent);
  if (parent.empty())
    sys::path::system_temp_directory(/*ErasedOnReboot=*/true, parent);
  SmallString<256> dir;
  if (std::error_code ec = sys::fs::create_directories(parent))
    return emitError(loc) << "cannot create '" << parent
                          << "': " << ec.message();
  // Work directories of killed runs (SIGKILL, SIGINT) go with the next run.
  removeStaleWorkDirs(parent);
  SmallString<256> model(parent);
  sys::path::append(model, "fly-replay-%%%%%%%%");
  if (std::error_code ec = sys::fs::createUniqueDirectory(model, dir))
    return emitError(loc) << "cannot create a work directory in '" << parent
                          << "': " << ec.message();
  auto removeDir =
      llvm::make_scope_exit([&] { sys::fs::remove_directories(dir); });
  // The owner first: a child started from this directory dies with us.
  if (Error err = markWorkDirOwner(dir))
    return emitError(loc) << toString(std::move(err));
  if (Error err = writeReplayWorkDir(dir, work.preBinary, work.plan))
    return emitError(loc) << toString(std::move(err));

  unsigned jobs = options.jobs ? options.jobs
                               : hardware_concurrency().compute_thread_count();
  jobs = std::max<unsigned>(1, std::min<size_t>(jobs, entries.size()));
  auto logPath = [&](const Twine &name) {
    SmallString<256> path(dir);
    sys::path::append(path, name + ".log");
    return std::string(path);
  };
  // Contiguous shards keep entries of one ISA group together.
  std::vector<Child> shards(jobs);
  for (auto [k, e] : llvm::enumerate(entries))
    shards[k * jobs / entries.size()].entries.push_back(e);
  for (auto [c, child] : llvm::enumerate(shards))
    child.log = logPath("shard-" + Twine(c));
  runChildren(tool, dir, shards, jobs);

  std::vector<std::optional<VariantResult>> found(entries.size());
  llvm::DenseMap<unsigned, unsigned> positionOf;
  for (auto [k, e] : llvm::enumerate(entries))
    positionOf.try_emplace(e, k);
  auto collect = [&](const Child &child, std::vector<unsigned> &missing) {
    for (unsigned e : child.entries) {
      std::optional<VariantResult> result =
          readReplayResult(dir, e, *work.preBinary.getContext());
      if (result)
        found[positionOf.lookup(e)] = std::move(result);
      else
        missing.push_back(e);
    }
  };
  // What a dead shard did not finish runs again, one entry per child: the
  // entry that kills its process fails alone, with that child's last words.
  auto failMissing = [&](const Child &child, ArrayRef<unsigned> missing) {
    std::string why = !child.error.empty() ? child.error
                      : !child.statusText.empty()
                          ? "the replay process " + child.statusText
                          : std::string("the replay process wrote no result");
    auto [firstError, last] = lastWordsOf(child.log);
    // The backend's own words go on the first line (what tables show).
    if (!firstError.empty())
      why += ": " + firstError;
    for (unsigned e : missing) {
      const PlanEntry &entry = work.plan.entries[e];
      VariantResult &failed = found[positionOf.lookup(e)].emplace();
      failed.binaryPass = entry.binaryPass;
      failed.error = last.empty() ? why : why + "\nits last output:\n" + last;
    }
  };
  std::vector<Child> retries;
  for (const Child &shard : shards) {
    std::vector<unsigned> missing;
    collect(shard, missing);
    if (shard.entries.size() == 1) {
      failMissing(shard, missing);
      continue;
    }
    for (unsigned e : missing) {
      Child single;
      single.entries = {e};
      single.log = logPath("entry-" + Twine(e));
      retries.push_back(std::move(single));
    }
  }
  runChildren(tool, dir, retries, jobs);
  for (const Child &single : retries) {
    std::vector<unsigned> missing;
    collect(single, missing);
    failMissing(single, missing);
  }

  std::vector<VariantResult> results;
  for (auto [k, e] : llvm::enumerate(entries)) {
    VariantResult &result = *found[k];
    const PlanEntry &entry = work.plan.entries[e];
    result.index = entry.index;
    result.id = entry.id;
    result.hints = entry.hints;
    results.push_back(std::move(result));
  }
  return results;
}

std::unique_ptr<ReplayExecutor> createProcessExecutor(ExecutorOptions options) {
  return std::make_unique<ProcessExecutor>(std::move(options));
}

} // namespace fly
