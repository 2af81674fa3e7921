//===- SlurmSweep.cpp - Many kernels, one Slurm job array -----------------===//

#include "fly/Executor/SlurmSweep.h"
#include "fly/Support/BoundedJSON.h"
#include "fly/Support/InstallLocation.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <thread>

#include <unistd.h>

using namespace mlir;
using namespace llvm;

namespace fly {

static double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static std::string pathIn(StringRef dir, const Twine &a, const Twine &b = "") {
  SmallString<256> path(dir);
  sys::path::append(path, a, b);
  return std::string(path);
}

static std::optional<json::Value> readJSONFile(StringRef path) {
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      readRegularFile(path, 256 << 20);
  if (!buffer) {
    consumeError(buffer.takeError());
    return std::nullopt;
  }
  Expected<json::Value> value = parseJSONBounded((*buffer)->getBuffer(), path);
  if (!value) {
    consumeError(value.takeError());
    return std::nullopt;
  }
  return std::move(*value);
}

static Error writeJSONFile(StringRef path, json::Value value) {
  return writeToOutput(path, [&](raw_ostream &os) {
    os << formatv("{0:2}", value) << "\n";
    return Error::success();
  });
}

FailureOr<std::map<unsigned, std::string>>
requestFromSweep(StringRef sweepDir, StringRef slot, StringRef workDir,
                 ArrayRef<unsigned> entries, double timeoutSeconds,
                 const std::function<void(StringRef)> &progress) {
  std::string replyPath = pathIn(sweepDir, "replies", slot + ".json");
  sys::fs::remove(replyPath);
  json::Array list;
  for (unsigned e : entries)
    list.push_back(e);
  pid_t coordinator = getppid();
  if (Error err = writeJSONFile(
          pathIn(sweepDir, "requests", slot + ".json"),
          json::Object{{"work_dir", workDir}, {"entries", std::move(list)}})) {
    WithColor::error(errs(), "fly-tune") << toString(std::move(err)) << "\n";
    return failure();
  }
  if (progress)
    progress(formatv("slurm sweep: {0} variant(s) handed to the sweep's array",
                     entries.size())
                 .str());
  double deadline = now() + timeoutSeconds + 60;
  double pause = 0.05;
  while (now() < deadline) {
    if (std::optional<json::Value> reply = readJSONFile(replyPath)) {
      std::map<unsigned, std::string> failed;
      if (const json::Object *object = reply->getAsObject())
        if (const json::Object *why = object->getObject("failed"))
          for (const auto &[key, value] : *why) {
            unsigned entry;
            if (!StringRef(key).getAsInteger(10, entry))
              failed[entry] = value.getAsString().value_or("failed").str();
          }
      return failed;
    }
    // The coordinator is our parent: if it is gone, nobody will answer.
    if (getppid() != coordinator) {
      WithColor::error(errs(), "fly-tune")
          << "the slurm sweep coordinator (pid " << coordinator
          << ") is gone\n";
      return failure();
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(pause * 1.5, 0.5);
  }
  WithColor::error(errs(), "fly-tune")
      << "no answer from the slurm sweep in " << sweepDir << "\n";
  return failure();
}

namespace {
struct KernelProcess {
  sys::ProcessInfo process;
  std::string outPath, errPath, startError;
  bool exited = false;
  int status = 0;
  bool requested = false;
};
} // namespace

static void dumpFile(StringRef path, raw_ostream &os) {
  if (ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
          MemoryBuffer::getFile(path))
    os << (*buffer)->getBuffer();
}

int runSlurmSweep(const SlurmSweepOptions &options, raw_ostream &os) {
  const SlurmExecutorOptions &executor = options.executor;
  auto fail = [](const Twine &message) {
    WithColor::error(errs(), "fly-tune") << message << "\n";
    return 1;
  };
  auto say = [&](const Twine &line) {
    if (executor.progress)
      executor.progress(line.str());
  };
  SmallString<256> parent(executor.workDirParent);
  if (parent.empty()) {
    if (executor.cacheDir.empty())
      return fail("a slurm sweep needs a directory on a file system every "
                  "node sees: pass --work-dir, or use a cache (FLY_CACHE_DIR)");
    parent = executor.cacheDir;
    sys::path::append(parent, "slurm");
  }
  if (std::error_code ec = sys::fs::make_absolute(parent))
    return fail("cannot resolve '" + parent + "': " + ec.message());
  // Named after the kernels' command lines: a rerun of the same sweep
  // finds the array an interrupted run left behind.
  std::string identity;
  for (const SlurmSweepKernel &kernel : options.kernels)
    identity += join(kernel.argv, "\x1f") + "\x1e";
  XXH128_hash_t hash = xxh3_128bits(arrayRefFromStringRef(identity));
  std::string dir = pathIn(
      parent, formatv("sweep-{0:x-16}{1:x-16}", hash.high64, hash.low64).str());
  for (StringRef sub : {"requests", "replies"}) {
    sys::fs::remove_directories(pathIn(dir, sub));
    if (std::error_code ec = sys::fs::create_directories(pathIn(dir, sub)))
      return fail("cannot create '" + pathIn(dir, sub) + "': " + ec.message());
  }
  if (std::error_code ec = sys::fs::create_directories(pathIn(dir, "logs")))
    return fail("cannot create '" + pathIn(dir, "logs") + "': " + ec.message());
  say(formatv("slurm sweep: {0} kernel(s), directory {1}",
              options.kernels.size(), dir));

  // One fly-tune per kernel, all at once: each blocks in its executor until
  // the array has run.
  std::vector<KernelProcess> kernels(options.kernels.size());
  for (auto [k, kernel] : llvm::enumerate(options.kernels)) {
    KernelProcess &process = kernels[k];
    process.outPath = pathIn(dir, "logs", Twine(k) + ".out");
    process.errPath = pathIn(dir, "logs", Twine(k) + ".err");
    std::vector<std::string> argv = kernel.argv;
    argv.push_back("--slurm-sweep=" + dir);
    argv.push_back(formatv("--slurm-sweep-slot={0}", k).str());
    SmallVector<StringRef> args(argv.begin(), argv.end());
    std::optional<StringRef> redirects[] = {
        StringRef(""), StringRef(process.outPath), StringRef(process.errPath)};
    bool failedToStart = false;
    process.process =
        sys::ExecuteNoWait(argv.front(), args, std::nullopt, redirects, 0,
                           &process.startError, &failedToStart);
    if (failedToStart) {
      process.exited = true;
      process.status = 1;
    }
  }

  auto poll = [&](std::optional<unsigned> seconds) {
    for (auto [k, process] : llvm::enumerate(kernels)) {
      if (!process.requested)
        process.requested =
            sys::fs::exists(pathIn(dir, "requests", Twine(k) + ".json"));
      if (process.exited)
        continue;
      sys::ProcessInfo done = sys::Wait(process.process, seconds);
      if (done.Pid == 0)
        continue; // still running
      process.exited = true;
      process.status = done.ReturnCode;
    }
  };
  double deadline = now() + executor.timeoutSeconds;
  double pause = 0.05;
  while (true) {
    poll(/*seconds=*/0);
    if (llvm::all_of(kernels, [](const KernelProcess &p) {
          return p.requested || p.exited;
        }))
      break;
    if (now() > deadline)
      break;
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(pause * 1.5, 0.5);
  }

  // The requests of every kernel, as one array.
  std::vector<SlurmReplayRequest> requests;
  std::vector<unsigned> requestKernel;
  for (auto [k, process] : llvm::enumerate(kernels)) {
    if (!process.requested)
      continue;
    std::optional<json::Value> request =
        readJSONFile(pathIn(dir, "requests", Twine(k) + ".json"));
    SlurmReplayRequest parsed;
    const json::Object *object = request ? request->getAsObject() : nullptr;
    if (!object || !object->getString("work_dir")) {
      process.requested = false;
      continue;
    }
    parsed.workDir = object->getString("work_dir")->str();
    if (const json::Array *entries = object->getArray("entries"))
      for (const json::Value &entry : *entries)
        if (std::optional<int64_t> e = entry.getAsInteger())
          parsed.entries.push_back(*e);
    requests.push_back(std::move(parsed));
    requestKernel.push_back(k);
  }
  std::string tool =
      executor.childTool.empty() ? findChildTool() : executor.childTool;
  Expected<std::vector<std::map<unsigned, std::string>>> failed =
      runSlurmReplays(executor, tool, requests, pathIn(dir, "slurm"));
  if (!failed) {
    std::string message = toString(failed.takeError());
    WithColor::error(errs(), "fly-tune") << "slurm: " << message << "\n";
    failed = std::vector<std::map<unsigned, std::string>>(requests.size());
    for (auto [r, request] : llvm::enumerate(requests))
      for (unsigned e : request.entries)
        (*failed)[r][e] = "slurm: " + message;
  }
  for (auto [r, k] : llvm::enumerate(requestKernel)) {
    json::Object why;
    for (const auto &[entry, reason] : (*failed)[r])
      why[std::to_string(entry)] = reason;
    if (Error err = writeJSONFile(pathIn(dir, "replies", Twine(k) + ".json"),
                                  json::Object{{"failed", std::move(why)}}))
      WithColor::error(errs(), "fly-tune") << toString(std::move(err)) << "\n";
  }

  // Each kernel finishes like a local run; its output is shown in order.
  int status = 0;
  for (auto [k, process] : llvm::enumerate(kernels)) {
    if (!process.exited) {
      // Bounded like everything else: on expiry Wait kills the child.
      unsigned left = static_cast<unsigned>(std::max(0.0, deadline - now()));
      sys::ProcessInfo done = sys::Wait(process.process, left + 60);
      process.exited = true;
      process.status = done.ReturnCode;
    }
    os << "== " << options.kernels[k].name << " ==\n";
    dumpFile(process.outPath, os);
    os.flush();
    dumpFile(process.errPath, errs());
    if (!process.startError.empty())
      WithColor::error(errs(), "fly-tune")
          << "cannot start the fly-tune of " << options.kernels[k].name << ": "
          << process.startError << "\n";
    int kernelStatus =
        process.status == 0 || process.status == 2 ? process.status : 1;
    if (kernelStatus == 1 || (kernelStatus == 2 && status == 0))
      status = kernelStatus;
  }
  // Everything delivered: nothing to resume, the default directory goes
  // (logs of a sweep with failures stay for a look).
  if (status == 0 && executor.workDirParent.empty())
    sys::fs::remove_directories(dir);
  return status;
}

} // namespace fly
