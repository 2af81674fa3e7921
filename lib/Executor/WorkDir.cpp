//===- WorkDir.cpp - A replay plan on disk, for other processes -----------===//

#include "fly/Executor/WorkDir.h"

#include "Support/Environment.h"
#include "fly/Backend/VariantQueue.h"
#include "fly/Cache/VariantCodec.h"
#include "fly/Snapshot/Snapshot.h"
#include "fly/Support/BoundedJSON.h"
#include "fly/Support/SafeFile.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <cerrno>
#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

using namespace mlir;
using namespace llvm;

namespace fly {

static std::string pathIn(StringRef dir, const Twine &a, const Twine &b = "") {
  SmallString<256> path(dir);
  sys::path::append(path, a, b);
  return std::string(path);
}

// Snapshots and results are far below this; a larger file is not ours.
static constexpr uint64_t kMaxFileBytes = 4ull << 30;

Error writeReplayWorkDir(StringRef dir, ModuleOp preBinary,
                         const ReplayPlan &plan) {
  if (std::error_code ec = sys::fs::create_directories(pathIn(dir, "results")))
    return createStringError(ec, "cannot create the work directory '" + dir +
                                     "': " + ec.message());
  if (failed(writeSnapshot(preBinary, pathIn(dir, "snapshot.mlirbc"),
                           SnapshotFormat::Bytecode)))
    return createStringError(inconvertibleErrorCode(),
                             "cannot write the snapshot into '" + dir + "'");
  return writeFileAtomically(pathIn(dir, "plan.json"),
                             formatv("{0:2}", json::Value(toJSON(plan))).str());
}

Expected<LoadedWorkDir> readReplayWorkDir(StringRef dir, MLIRContext *context) {
  LoadedWorkDir loaded;
  std::string planPath = pathIn(dir, "plan.json");
  Expected<std::unique_ptr<MemoryBuffer>> planText =
      readRegularFile(planPath, kMaxFileBytes);
  if (!planText)
    return planText.takeError();
  Expected<ReplayPlan> plan = parseReplayPlan((*planText)->getBuffer());
  if (!plan)
    return createStringError(inconvertibleErrorCode(),
                             planPath + ": " + toString(plan.takeError()));
  loaded.plan = std::move(*plan);
  std::string snapshotPath = pathIn(dir, "snapshot.mlirbc");
  Expected<std::unique_ptr<MemoryBuffer>> snapshot =
      readRegularFile(snapshotPath, kMaxFileBytes);
  if (!snapshot)
    return snapshot.takeError();
  loaded.preBinary =
      readSnapshotBuffer((*snapshot)->getBuffer(), snapshotPath, context);
  if (!loaded.preBinary)
    return createStringError(inconvertibleErrorCode(),
                             "'" + snapshotPath + "' is not a usable snapshot");
  return std::move(loaded);
}

static std::string resultPath(StringRef dir, unsigned entry) {
  return pathIn(dir, "results", Twine(entry) + ".json");
}

Error writeReplayResult(StringRef dir, unsigned entry,
                        const VariantResult &result) {
  return writeFileAtomically(resultPath(dir, entry),
                             encodeVariant(result, /*withIntermediates=*/true));
}

/// The text of results/<entry>.json, if it is there and a regular file.
static std::unique_ptr<MemoryBuffer> readResultFile(StringRef dir,
                                                    unsigned entry) {
  Expected<std::unique_ptr<MemoryBuffer>> text =
      readRegularFile(resultPath(dir, entry), kMaxFileBytes);
  if (!text) {
    consumeError(text.takeError());
    return nullptr;
  }
  return std::move(*text);
}

std::optional<VariantResult> readReplayResult(StringRef dir, unsigned entry,
                                              MLIRContext &context) {
  std::unique_ptr<MemoryBuffer> text = readResultFile(dir, entry);
  if (!text)
    return std::nullopt;
  return decodeVariant(text->getBuffer(), context);
}

std::optional<double> readReplayMs(StringRef dir, unsigned entry) {
  std::unique_ptr<MemoryBuffer> text = readResultFile(dir, entry);
  if (!text)
    return std::nullopt;
  Expected<json::Value> root = parseJSONBounded(text->getBuffer(), "");
  if (!root) {
    consumeError(root.takeError());
    return std::nullopt;
  }
  const json::Object *object = root->getAsObject();
  return object ? object->getNumber("replay_ms") : std::nullopt;
}

namespace {
struct WorkDirOwner {
  int pid = 0;
  std::string host;
};
} // namespace

static std::optional<WorkDirOwner> readWorkDirOwner(StringRef dir) {
  Expected<std::unique_ptr<MemoryBuffer>> text =
      readRegularFile(pathIn(dir, "owner"), 4096);
  if (!text) {
    consumeError(text.takeError());
    return std::nullopt;
  }
  auto [pid, host] = (*text)->getBuffer().trim().split(' ');
  WorkDirOwner owner;
  if (pid.getAsInteger(10, owner.pid) || owner.pid <= 0 || host.empty())
    return std::nullopt;
  owner.host = host.str();
  return owner;
}

Error markWorkDirOwner(StringRef dir) {
  return writeFileAtomically(
      pathIn(dir, "owner"),
      formatv("{0} {1}\n", sys::Process::getProcessId(), getHostName()).str());
}

void removeStaleWorkDirs(StringRef parent) {
  std::error_code ec;
  std::string host = getHostName();
  for (sys::fs::directory_iterator it(parent, ec, /*follow_symlinks=*/false),
       end;
       it != end && !ec; it.increment(ec)) {
    if (!sys::path::filename(it->path()).starts_with("fly-replay-") ||
        it->type() != sys::fs::file_type::directory_file)
      continue;
    std::optional<WorkDirOwner> owner = readWorkDirOwner(it->path());
    if (owner && owner->host == host && ::kill(owner->pid, 0) != 0 &&
        errno == ESRCH)
      sys::fs::remove_directories(it->path());
  }
}

bool dieWithWorkDirOwner(StringRef dir) {
  std::optional<WorkDirOwner> owner = readWorkDirOwner(dir);
  if (!owner || owner->host != getHostName() || owner->pid != ::getppid())
    return true; // Not a process-executor child (a Slurm task, a user).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before the line above: then this process was
  // reparented and no signal comes.
  return ::getppid() == owner->pid;
}

LogicalResult replayWorkDirEntries(StringRef dir, StringRef entryList,
                                   MLIRContext &context, unsigned jobs,
                                   PipelineRunner runPipeline) {
  Location loc = FileLineColLoc::get(&context, dir, 0, 0);
  // A parent killed (SIGKILL, OOM) must not leave its children compiling.
  if (!dieWithWorkDirOwner(dir))
    return emitError(loc) << "the process that started this replay is gone";
  Expected<LoadedWorkDir> loaded = readReplayWorkDir(dir, &context);
  if (!loaded)
    return emitError(loc) << toString(loaded.takeError());
  const ReplayPlan &plan = loaded->plan;
  Expected<std::vector<unsigned>> entries =
      parseEntryList(entryList, plan.entries.size());
  if (!entries)
    return emitError(loc) << toString(entries.takeError());
  ReplayOptions options;
  options.maxParallel = std::max(1u, jobs);
  // Shared ISA compiled for one entry serves the later ones of its group.
  options.sharedIsa = std::make_shared<SharedIsaTable>();
  size_t chunk = jobs <= 1 ? 1 : 4 * size_t(jobs);
  // One at a time on this thread: what is left of the shard is known here
  // (VariantQueue.h), not on the context's threads.
  VariantQueue queue(entries->size());
  for (size_t begin = 0; begin < entries->size(); begin += chunk) {
    ArrayRef<unsigned> part = ArrayRef<unsigned>(*entries).slice(
        begin, std::min(chunk, entries->size() - begin));
    std::optional<ScopedVariantQueue> started;
    if (chunk == 1)
      started.emplace(queue);
    // Each result is written the moment its variant is done: the parent
    // streams them, and a crash loses only the variants in flight.
    std::string writeError;
    if (failed(replayPlanned(*loaded->preBinary, plan, part, options,
                             /*nestInSource=*/false, runPipeline,
                             [&](unsigned e, VariantResult result) {
                               if (Error err =
                                       writeReplayResult(dir, e, result))
                                 writeError = toString(std::move(err));
                             })))
      return failure();
    if (!writeError.empty())
      return emitError(loc) << writeError;
  }
  return success();
}

} // namespace fly
