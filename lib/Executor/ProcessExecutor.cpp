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

#include "Support/ChildProcess.h"
#include "fly/Executor/Executor.h"
#include "fly/Executor/WorkDir.h"
#include "fly/Support/InstallLocation.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"

#include <atomic>
#include <chrono>
#include <thread>

using namespace mlir;
using namespace llvm;

namespace fly {

namespace {
class ProcessExecutor : public ReplayExecutor {
public:
  explicit ProcessExecutor(ExecutorOptions options)
      : options(std::move(options)) {}
  StringRef getName() const override { return "process"; }

  LogicalResult execute(const ReplayWork &work, ArrayRef<unsigned> entries,
                        const VariantSink &finished) override;

private:
  using Clock = std::chrono::steady_clock;
  struct Child {
    std::vector<unsigned> entries;
    std::string log;
    ChildProcess process;
    std::string error; // Could not start.
    std::string statusText;
    /// Whether it was started (a spent budget starts none).
    bool started = false;
    /// When it started, or last delivered a result.
    Clock::time_point lastProgress;
  };
  /// Runs `children`, `jobs` at a time, until every one has ended; `poll`
  /// hands over what they finished so far, called every few milliseconds.
  /// A child that goes `variantTimeout` seconds (0 = no limit) without
  /// finishing a variant is killed.
  void runChildren(StringRef tool, StringRef dir, std::vector<Child> &children,
                   unsigned jobs, unsigned variantTimeout,
                   const std::function<bool()> &mayStart,
                   llvm::function_ref<void(Child &)> poll);
  /// A place for one more child among all of this executor's, whichever
  /// execute call (kernel of a sweep) starts it: `jobs` bounds them all.
  bool takeSlot() {
    unsigned limit = options.jobs
                         ? options.jobs
                         : hardware_concurrency().compute_thread_count();
    unsigned now = childrenRunning.load();
    while (now < std::max(1u, limit))
      if (childrenRunning.compare_exchange_weak(now, now + 1))
        return true;
    return false;
  }
  void releaseSlot() { --childrenRunning; }

  ExecutorOptions options;
  std::atomic<unsigned> childrenRunning{0};
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
                                  std::vector<Child> &children, unsigned jobs,
                                  unsigned variantTimeout,
                                  const std::function<bool()> &mayStart,
                                  llvm::function_ref<void(Child &)> poll) {
  std::string planArg = ("--run-plan=" + dir).str();
  auto start = [&](Child &child) {
    std::string entriesArg = "--entries=" + formatEntryList(child.entries);
    SmallVector<StringRef> args = {tool, planArg, entriesArg, "--jobs=1",
                                   "--quiet"};
    std::optional<StringRef> redirects[] = {StringRef(""), child.log,
                                            child.log};
    child.started = true;
    child.process = ChildProcess::start(tool, args, redirects);
    if (!child.process.hasStarted())
      child.error = child.process.poll()->describe();
    child.lastProgress = Clock::now();
    return child.error.empty();
  };
  size_t next = 0;
  std::vector<size_t> running;
  while (next < children.size() || !running.empty()) {
    while (running.size() < jobs && next < children.size() && takeSlot()) {
      // A spent budget starts no child: its entries stay unstarted.
      if (mayStart && !mayStart()) {
        releaseSlot();
        next = children.size();
        break;
      }
      if (start(children[next]))
        running.push_back(next);
      else
        releaseSlot();
      ++next;
    }
    bool ended = false;
    for (auto it = running.begin(); it != running.end();) {
      Child &child = children[*it];
      poll(child);
      std::optional<ChildExit> done = child.process.poll();
      unsigned limit = variantTimeout;
      if (!done) {
        // The child compiles one variant at a time: a variant over the
        // limit is one that long without a new result. Its process group
        // goes with it (the ptxas it ran, too).
        if (!limit ||
            Clock::now() - child.lastProgress < std::chrono::seconds(limit)) {
          ++it;
          continue;
        }
        done = child.process.kill(/*timedOut=*/true);
      }
      if (done->timedOut)
        child.statusText = formatv("was killed: the variant did not finish "
                                   "within the variant timeout of {0} s",
                                   limit);
      else if (!done->succeeded())
        child.statusText = done->describe();
      poll(child);
      it = running.erase(it);
      releaseSlot();
      ended = true;
    }
    // Nothing running here yet: the slots are other kernels' children.
    if (!ended && (!running.empty() || next < children.size()))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

LogicalResult ProcessExecutor::execute(const ReplayWork &work,
                                       ArrayRef<unsigned> entries,
                                       const VariantSink &finished) {
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
  llvm::scope_exit removeDir([&] { sys::fs::remove_directories(dir); });
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

  // Each result is handed over as soon as its child wrote it.
  llvm::DenseSet<unsigned> delivered;
  auto poll = [&](Child &child) {
    for (unsigned e : child.entries) {
      if (delivered.contains(e))
        continue;
      std::optional<VariantResult> result =
          readReplayResult(dir, e, *work.preBinary.getContext());
      if (!result)
        continue;
      delivered.insert(e);
      child.lastProgress = Clock::now();
      finished(e, std::move(*result));
    }
  };
  runChildren(tool, dir, shards, jobs, work.plan.variantTimeoutSeconds,
              work.mayStart, poll);

  // What a dead shard did not finish runs again, one entry per child: the
  // entry that kills its process fails alone, with that child's last words.
  auto failMissing = [&](const Child &child) {
    // Entries of a child never started are left to executePlan (skipped).
    if (!child.started)
      return;
    std::string why = !child.error.empty() ? child.error
                      : !child.statusText.empty()
                          ? "the replay process " + child.statusText
                          : std::string("the replay process wrote no result");
    auto [firstError, last] = lastWordsOf(child.log);
    // The backend's own words go on the first line (what tables show).
    if (!firstError.empty())
      why += ": " + firstError;
    for (unsigned e : child.entries) {
      if (!delivered.insert(e).second)
        continue;
      VariantResult failed;
      failed.error = last.empty() ? why : why + "\nits last output:\n" + last;
      finished(e, std::move(failed));
    }
  };
  std::vector<Child> retries;
  for (Child &shard : shards) {
    if (shard.entries.size() == 1) {
      failMissing(shard);
      continue;
    }
    for (unsigned e : shard.entries) {
      if (delivered.contains(e))
        continue;
      Child single;
      single.entries = {e};
      single.log = logPath("entry-" + Twine(e));
      retries.push_back(std::move(single));
    }
  }
  runChildren(tool, dir, retries, jobs, work.plan.variantTimeoutSeconds,
              work.mayStart, poll);
  for (const Child &single : retries)
    failMissing(single);
  return success();
}

std::unique_ptr<ReplayExecutor> createProcessExecutor(ExecutorOptions options) {
  return std::make_unique<ProcessExecutor>(std::move(options));
}

} // namespace fly
