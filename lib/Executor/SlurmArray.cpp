//===- SlurmArray.cpp - Work items as one Slurm job array -----------------===//

#include "fly/Executor/SlurmArray.h"
#include "Support/Interrupts.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace fly;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Shard sizing and the task script
//===----------------------------------------------------------------------===//

unsigned fly::slurmShardSize(unsigned numItems, double itemSeconds,
                             const SlurmShardPolicy &policy) {
  if (numItems == 0)
    return 1;
  // A task runs its shard on cpusPerTask threads: items * itemSeconds / cpus
  // of work plus the fixed overhead. Never below ten times the overhead (so
  // Slurm costs at most ~10%), at most the target length, and spread over
  // the free slots when that gives shorter tasks.
  double cpus = std::max(1u, policy.cpusPerTask);
  double perItem = std::max(itemSeconds, 1e-3) / cpus;
  double floorSize = std::ceil(10 * policy.taskOverheadSeconds / perItem);
  double targetSize =
      std::max(1.0, std::floor(policy.targetTaskSeconds / perItem));
  double spreadSize = policy.slots ? std::ceil(double(numItems) / policy.slots)
                                   : double(numItems);
  double size = std::max(floorSize, std::min(targetSize, spreadSize));
  unsigned shard =
      size >= numItems ? numItems : std::max(1u, static_cast<unsigned>(size));
  if (policy.maxTasks != 0)
    shard = std::max(shard, (numItems + policy.maxTasks - 1) / policy.maxTasks);
  // Even out the shards: 10 items of size 4 become 4+3+3, not 4+4+2.
  unsigned tasks = (numItems + shard - 1) / shard;
  return (numItems + tasks - 1) / tasks;
}

static std::string shellQuote(StringRef arg) {
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

/// Quotes `arg`, leaving every kSlurmCpusToken as the expanded "$cpus".
static std::string shellArgument(StringRef arg) {
  llvm::SmallVector<StringRef> pieces;
  arg.split(pieces, kSlurmCpusToken);
  std::string out;
  for (auto [i, piece] : llvm::enumerate(pieces)) {
    if (i != 0)
      out += "\"$cpus\"";
    if (!piece.empty() || pieces.size() == 1)
      out += shellQuote(piece);
  }
  return out;
}

std::string fly::renderSlurmTaskScript(
    llvm::ArrayRef<std::vector<ShellCommand>> shards,
    llvm::ArrayRef<std::pair<std::string, std::string>> environment) {
  std::string script;
  llvm::raw_string_ostream os(script);
  os << "#!/bin/sh\n"
        "# Written by fly (SlurmArray): array task K runs the commands of "
        "shard K.\n";
  for (const auto &[name, value] : environment)
    os << "export " << name << "=" << shellQuote(value) << "\n";
  os << "cpus=${SLURM_CPUS_PER_TASK:-1}\n"
        "status=0\n"
        "run() { \"$@\" || status=$?; }\n"
        "case \"${SLURM_ARRAY_TASK_ID:-}\" in\n";
  for (auto [task, commands] : llvm::enumerate(shards)) {
    os << task << ")";
    for (const ShellCommand &command : commands) {
      os << "\n  run";
      for (const std::string &arg : command)
        os << " " << shellArgument(arg);
    }
    os << " ;;\n";
  }
  os << "*) echo \"fly: no shard for task '${SLURM_ARRAY_TASK_ID:-}'\" >&2; "
        "exit 64 ;;\n"
        "esac\n"
        "exit $status\n";
  return script;
}

//===----------------------------------------------------------------------===//
// squeue's view of an array
//===----------------------------------------------------------------------===//

bool SlurmTaskState::finished() const {
  // Everything else (PENDING, RUNNING, CONFIGURING, COMPLETING, REQUEUED,
  // SUSPENDED, ...) may still run.
  return llvm::is_contained({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                             "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                             "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT", "PURGED"},
                            StringRef(state));
}

std::vector<SlurmTaskState> fly::parseSqueueTasks(StringRef output) {
  std::vector<SlurmTaskState> tasks;
  llvm::SmallVector<StringRef> lines;
  output.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    llvm::SmallVector<StringRef, 4> fields;
    line.trim().split(fields, '|');
    unsigned task;
    // A whole array still pending shows as one "1-5%2" line without -r;
    // with -r every task has its own number.
    if (fields.size() < 2 || fields[0].trim().getAsInteger(10, task))
      continue;
    SlurmTaskState state;
    state.task = task;
    state.state = fields[1].trim().str();
    if (fields.size() > 2)
      state.reason = fields[2].trim().str();
    if (fields.size() > 3)
      state.nodes = fields[3].trim().str();
    tasks.push_back(std::move(state));
  }
  return tasks;
}

//===----------------------------------------------------------------------===//
// Running Slurm's commands
//===----------------------------------------------------------------------===//

namespace {
struct ToolResult {
  int status = -1;
  std::string out, err;
};
} // namespace

static double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/// Runs a Slurm client command and collects its output; `seconds` bounds it.
static Expected<ToolResult> runTool(StringRef name,
                                    llvm::ArrayRef<std::string> args,
                                    unsigned seconds = 60) {
  llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName(name);
  if (!program)
    return llvm::createStringError(
        "'" + name +
        "' not found in PATH: is this a Slurm login node? "
        "(scripts/slurm-local.sh start brings up a single-node cluster)");
  llvm::SmallString<128> outPath, errPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("fly-slurm", "out", outPath))
    return llvm::createStringError(ec, "temporary file: " + ec.message());
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("fly-slurm", "err", errPath)) {
    llvm::sys::fs::remove(outPath);
    return llvm::createStringError(ec, "temporary file: " + ec.message());
  }
  llvm::SmallVector<StringRef> argv = {*program};
  for (const std::string &arg : args)
    argv.push_back(arg);
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(outPath),
                                          StringRef(errPath)};
  ToolResult result;
  std::string error;
  result.status = llvm::sys::ExecuteAndWait(*program, argv, std::nullopt,
                                            redirects, seconds, 0, &error);
  auto slurp = [](StringRef path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  };
  result.out = slurp(outPath);
  result.err = slurp(errPath);
  if (!error.empty())
    result.err += (result.err.empty() ? "" : "\n") + error;
  llvm::sys::fs::remove(outPath);
  llvm::sys::fs::remove(errPath);
  // Without a slurm.conf the client asks DNS for a controller and says only
  // that the lookup failed: name what to set.
  if (result.status != 0 &&
      (StringRef(result.err).contains("resolve_ctls_from_dns_srv") ||
       StringRef(result.err).contains("Could not establish a configuration")))
    result.err += "\n  (" + name.str() +
                  " found no Slurm configuration: set SLURM_CONF to the "
                  "cluster's slurm.conf, or run on a node where '" +
                  name.str() + "' works)";
  return result;
}

/// The value of option `longName` (--x=V, --x V) or `shortName` (-xV, -x V).
static std::optional<std::string>
findSbatchOption(llvm::ArrayRef<std::string> args, StringRef longName,
                 StringRef shortName) {
  std::optional<std::string> value;
  for (size_t i = 0; i < args.size(); ++i) {
    StringRef arg = args[i];
    bool hasNext = i + 1 < args.size();
    if (arg.consume_front(longName)) {
      if (arg.consume_front("="))
        value = arg.str();
      else if (arg.empty() && hasNext)
        value = args[++i];
    } else if (arg.consume_front(shortName)) {
      if (!arg.empty())
        value = arg.str();
      else if (hasNext)
        value = args[++i];
    }
  }
  return value;
}

unsigned fly::slurmCpusPerTask(llvm::ArrayRef<std::string> sbatchArgs) {
  unsigned cpus;
  std::optional<std::string> value =
      findSbatchOption(sbatchArgs, "--cpus-per-task", "-c");
  if (!value || StringRef(*value).getAsInteger(10, cpus) || cpus == 0)
    return 1;
  return cpus;
}

unsigned fly::slurmFreeSlots(llvm::ArrayRef<std::string> sbatchArgs,
                             unsigned cpusPerTask) {
  // %C is "allocated/idle/other/total" CPUs, one line per partition.
  std::vector<std::string> args = {"-h", "-o", "%C"};
  if (std::optional<std::string> partition =
          findSbatchOption(sbatchArgs, "--partition", "-p"))
    args.push_back("--partition=" + *partition);
  Expected<ToolResult> result = runTool("sinfo", args, 30);
  if (!result) {
    llvm::consumeError(result.takeError());
    return 0;
  }
  if (result->status != 0)
    return 0;
  unsigned long long idle = 0;
  llvm::SmallVector<StringRef> lines;
  StringRef(result->out).split(lines, '\n', -1, false);
  for (StringRef line : lines) {
    llvm::SmallVector<StringRef, 4> fields;
    line.trim().split(fields, '/');
    unsigned long long cpus;
    if (fields.size() == 4 && !fields[1].getAsInteger(10, cpus))
      idle += cpus;
  }
  return idle / std::max(1u, cpusPerTask);
}

//===----------------------------------------------------------------------===//
// Cancelling on SIGINT/SIGTERM
//===----------------------------------------------------------------------===//

// The interrupt handler can only use what is async-signal-safe: fixed
// buffers filled before the signal, fork/execve/waitpid.
namespace {
constexpr unsigned kMaxLiveArrays = 8;
char scancelPath[4096];
char liveArrays[kMaxLiveArrays][32];
std::atomic<bool> liveSlot[kMaxLiveArrays];

void cancelLiveArrays() {
  for (unsigned i = 0; i < kMaxLiveArrays; ++i) {
    if (!liveSlot[i].load() || !scancelPath[0])
      continue;
    char *argv[] = {scancelPath, liveArrays[i], nullptr};
    pid_t pid = fork();
    if (pid == 0) {
      execve(scancelPath, argv, environ);
      _exit(127);
    }
    if (pid > 0)
      waitpid(pid, nullptr, 0);
  }
}

/// Registers `arrayId` for cancellation on SIGINT/SIGTERM; -1 when full.
int registerLiveArray(StringRef arrayId) {
  if (!scancelPath[0]) {
    llvm::ErrorOr<std::string> scancel =
        llvm::sys::findProgramByName("scancel");
    if (!scancel || scancel->size() >= sizeof(scancelPath))
      return -1;
    std::memcpy(scancelPath, scancel->c_str(), scancel->size() + 1);
  }
  if (arrayId.size() >= sizeof(liveArrays[0]))
    return -1;
  for (unsigned i = 0; i < kMaxLiveArrays; ++i) {
    if (liveSlot[i].load())
      continue;
    std::memcpy(liveArrays[i], arrayId.data(), arrayId.size());
    liveArrays[i][arrayId.size()] = 0;
    liveSlot[i].store(true);
    addInterruptCallback(cancelLiveArrays);
    return i;
  }
  return -1;
}

void unregisterLiveArray(int slot) {
  if (slot >= 0)
    liveSlot[slot].store(false);
}
} // namespace

//===----------------------------------------------------------------------===//
// SlurmArrayRunner
//===----------------------------------------------------------------------===//

SlurmArrayRunner::SlurmArrayRunner(SlurmArrayOptions options)
    : options(std::move(options)) {}

void SlurmArrayRunner::say(const llvm::Twine &line) {
  if (options.progress)
    options.progress(line.str());
}

std::string SlurmArrayRunner::taskLogPath(StringRef arrayId,
                                          unsigned task) const {
  llvm::SmallString<256> path(options.stateDir);
  llvm::sys::path::append(path, "logs",
                          llvm::formatv("{0}_{1}.log", arrayId, task).str());
  return std::string(path);
}

/// The file naming the array this state directory is waiting for; it
/// outlives a killed fly-tune, so the next run can wait for that array.
static std::string recordPath(StringRef stateDir) {
  llvm::SmallString<256> path(stateDir);
  llvm::sys::path::append(path, "running-array");
  return std::string(path);
}

Expected<std::string>
SlurmArrayRunner::submit(llvm::ArrayRef<std::vector<ShellCommand>> shards,
                         unsigned round) {
  llvm::SmallString<256> logs(options.stateDir);
  llvm::sys::path::append(logs, "logs");
  if (std::error_code ec = llvm::sys::fs::create_directories(logs))
    return llvm::createStringError(ec, "cannot create '" + logs +
                                           "': " + ec.message());
  // sbatch copies the script at submission: rewriting it later is harmless.
  llvm::SmallString<256> script(options.stateDir);
  llvm::sys::path::append(script, llvm::formatv("tasks-{0}.sh", round).str());
  std::string text = renderSlurmTaskScript(shards, options.environment);
  if (Error err = llvm::writeToOutput(script, [&](llvm::raw_ostream &os) {
        os << text;
        return Error::success();
      }))
    return std::move(err);

  llvm::SmallString<256> logPattern(logs);
  llvm::sys::path::append(logPattern, "%A_%a.log");
  std::vector<std::string> args = {
      "--parsable",
      llvm::formatv("--array=0-{0}", shards.size() - 1).str(),
      "--job-name=" + options.jobName,
      "--output=" + std::string(logPattern),
      "--error=" + std::string(logPattern),
      // A requeued task (node failure) appends to its log.
      "--open-mode=append",
      "--chdir=" + options.stateDir,
  };
  llvm::append_range(args, options.sbatchArgs);
  args.push_back(std::string(script));
  double start = now();
  Expected<ToolResult> result = runTool("sbatch", args);
  if (!result)
    return result.takeError();
  if (result->status != 0)
    return llvm::createStringError("sbatch refused the array (exit " +
                                   llvm::Twine(result->status) +
                                   "): " + StringRef(result->err).trim() +
                                   "\n  sbatch " + llvm::join(args, " "));
  // --parsable prints "<id>" or "<id>;<cluster>".
  StringRef id = StringRef(result->out).trim().split(';').first;
  unsigned long long number;
  if (id.getAsInteger(10, number))
    return llvm::createStringError("sbatch printed no job id: '" +
                                   StringRef(result->out).trim() + "'");
  if (Error err = llvm::writeToOutput(recordPath(options.stateDir),
                                      [&](llvm::raw_ostream &os) {
                                        os << id << "\n";
                                        return Error::success();
                                      }))
    return std::move(err);
  say(llvm::formatv("submitted array {0}: {1} task(s) ({2:f2} s)", id,
                    shards.size(), now() - start));
  return id.str();
}

Error SlurmArrayRunner::cancel(StringRef arrayId) {
  Expected<ToolResult> result = runTool("scancel", {arrayId.str()});
  if (!result)
    return result.takeError();
  if (result->status != 0)
    return llvm::createStringError("scancel " + arrayId + ": " +
                                   StringRef(result->err).trim());
  return Error::success();
}

Expected<std::vector<SlurmTaskState>> SlurmArrayRunner::wait(StringRef arrayId,
                                                             double deadline) {
  int slot = registerLiveArray(arrayId);
  llvm::scope_exit unregister([&] { unregisterLiveArray(slot); });
  double pause = options.minPollSeconds;
  std::string lastSummary, lastError;
  bool cancelled = false;
  double cancelledAt = 0;
  unsigned emptyAnswers = 0;
  std::vector<SlurmTaskState> tasks;
  while (true) {
    Expected<ToolResult> result =
        runTool("squeue", {"-h", "-r", "-t", "all", "-j", arrayId.str(), "-o",
                           "%K|%T|%r|%N"});
    if (!result)
      return result.takeError();
    if (result->status == 0) {
      std::vector<SlurmTaskState> listed = parseSqueueTasks(result->out);
      // No line at all for an array that was just submitted or adopted:
      // not an answer yet; after a while, the array is long gone.
      if (listed.empty() && ++emptyAnswers < 20) {
        std::this_thread::sleep_for(std::chrono::duration<double>(pause));
        continue;
      }
      if (!listed.empty())
        tasks = std::move(listed);
      else
        for (SlurmTaskState &task : tasks)
          if (!task.finished())
            task.state = "PURGED";
      lastError.clear();
    } else if (StringRef(result->err).contains("Invalid job id")) {
      // Forgotten by the controller (MinJobAge after the end): finished.
      for (SlurmTaskState &task : tasks)
        if (!task.finished())
          task.state = "PURGED";
      return tasks;
    } else {
      lastError = StringRef(result->err).trim().str();
    }

    unsigned running = 0, pending = 0, done = 0;
    for (const SlurmTaskState &task : tasks) {
      if (task.finished())
        ++done;
      else if (task.state == "PENDING")
        ++pending;
      else
        ++running;
    }
    if (lastError.empty() && done == tasks.size())
      return tasks;

    std::string summary =
        lastError.empty()
            ? llvm::formatv("array {0}: {1} pending, {2} running, {3} done",
                            arrayId, pending, running, done)
                  .str()
            : "squeue: " + lastError;
    if (summary != lastSummary) {
      say(summary);
      lastSummary = summary;
      pause = options.minPollSeconds;
    } else {
      pause = std::min(pause * 1.5, options.maxPollSeconds);
    }

    if (now() >= deadline) {
      if (!cancelled) {
        say(llvm::formatv("slurm timeout: cancelling array {0}", arrayId));
        if (Error err = cancel(arrayId))
          say(llvm::toString(std::move(err)));
        cancelled = true;
        cancelledAt = now();
      } else if (now() - cancelledAt > 30) {
        // Give up waiting for the cancellation itself.
        if (!lastError.empty())
          return llvm::createStringError("squeue failed until the timeout: " +
                                         lastError);
        for (SlurmTaskState &task : tasks)
          if (!task.finished())
            task.state = "TIMEOUT";
        return tasks;
      }
      pause = std::min(pause, 1.0);
    } else {
      pause = std::min(pause, std::max(0.05, deadline - now()));
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  }
}

Expected<SlurmRunReport> SlurmArrayRunner::run(
    llvm::ArrayRef<unsigned> items, unsigned itemsPerShard,
    llvm::function_ref<std::vector<ShellCommand>(llvm::ArrayRef<unsigned>)>
        commandsFor,
    llvm::function_ref<bool(unsigned)> isDone) {
  SlurmRunReport report;
  double deadline = now() + options.timeoutSeconds;
  itemsPerShard = std::max(1u, itemsPerShard);
  if (std::error_code ec = llvm::sys::fs::create_directories(options.stateDir))
    return llvm::createStringError(ec, "cannot create '" + options.stateDir +
                                           "': " + ec.message());

  // An earlier run killed before its array ended: wait for that array
  // rather than submitting its items twice.
  std::string record = recordPath(options.stateDir);
  if (auto buffer = llvm::MemoryBuffer::getFile(record)) {
    std::string earlier = (*buffer)->getBuffer().trim().str();
    if (!earlier.empty()) {
      say("waiting for array " + earlier + " of an earlier run");
      report.arrays.push_back(earlier);
      double start = now();
      Expected<std::vector<SlurmTaskState>> states = wait(earlier, deadline);
      report.waitSeconds += now() - start;
      if (!states)
        return states.takeError();
    }
    llvm::sys::fs::remove(record);
  }

  // Why each item's last task did not deliver it.
  std::map<unsigned, std::string> why;
  for (unsigned round = 0; round <= options.retries; ++round) {
    std::vector<unsigned> pending;
    for (unsigned item : items)
      if (!isDone(item))
        pending.push_back(item);
    if (pending.empty())
      break;
    if (now() >= deadline) {
      for (unsigned item : pending)
        why.try_emplace(item, "slurm timeout before it was submitted");
      break;
    }
    if (round > 0) {
      say(llvm::formatv("resubmitting {0} item(s) of failed tasks (retry {1} "
                        "of {2})",
                        pending.size(), round, options.retries));
      report.resubmittedItems += pending.size();
    }
    // A retry runs each item in a task of its own, as the process executor
    // does: a variant that crashed its task would otherwise kill the
    // survivors it shares a shard with again.
    size_t shardSize = round == 0 ? itemsPerShard : 1;
    std::vector<std::vector<unsigned>> shardItems;
    for (size_t i = 0; i < pending.size(); i += shardSize)
      shardItems.emplace_back(pending.begin() + i,
                              pending.begin() +
                                  std::min(pending.size(), i + shardSize));
    std::vector<std::vector<ShellCommand>> shards;
    for (const std::vector<unsigned> &shard : shardItems)
      shards.push_back(commandsFor(shard));

    double start = now();
    Expected<std::string> arrayId = submit(shards, round);
    report.submitSeconds += now() - start;
    if (!arrayId)
      return arrayId.takeError();
    report.arrays.push_back(*arrayId);
    report.tasksSubmitted += shards.size();
    report.itemsSubmitted += pending.size();

    start = now();
    Expected<std::vector<SlurmTaskState>> states = wait(*arrayId, deadline);
    report.waitSeconds += now() - start;
    if (!states)
      return states.takeError();
    llvm::sys::fs::remove(record);

    std::map<unsigned, const SlurmTaskState *> byTask;
    for (const SlurmTaskState &state : *states)
      byTask[state.task] = &state;
    for (auto [task, shard] : llvm::enumerate(shardItems)) {
      auto it = byTask.find(task);
      std::string state =
          it == byTask.end() ? std::string("UNKNOWN") : it->second->state;
      if (it != byTask.end() && !it->second->reason.empty() &&
          it->second->reason != "None")
        state += " (" + it->second->reason + ")";
      bool reported = false;
      for (unsigned item : shard) {
        if (isDone(item))
          continue;
        why[item] =
            llvm::formatv("slurm task {0}_{1} ended {2} without it; "
                          "log: {3}",
                          *arrayId, task, state, taskLogPath(*arrayId, task))
                .str();
        if (!reported)
          say(llvm::formatv("task {0}_{1} ended {2} with items missing "
                            "(log: {3})",
                            *arrayId, task, state,
                            taskLogPath(*arrayId, task)));
        reported = true;
      }
    }
  }
  for (unsigned item : items)
    if (!isDone(item))
      report.failed[item] =
          why.count(item) ? why[item] : std::string("not delivered");
  return report;
}
