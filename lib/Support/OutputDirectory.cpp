//===- OutputDirectory.cpp - Out-dirs written whole or not at all ---------===//

#include "fly/Support/OutputDirectory.h"

#include "Support/Interrupts.h"
#include "fly/Support/FileName.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

using namespace llvm;

namespace fly {

static Error fail(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

static std::string errnoMessage() {
  return std::error_code(errno, std::generic_category()).message();
}

/// The out-dir without trailing separators, split into parent and name.
static Expected<std::pair<std::string, std::string>>
splitOutDir(StringRef path) {
  StringRef trimmed = path;
  while (trimmed.size() > 1 && sys::path::is_separator(trimmed.back()))
    trimmed = trimmed.drop_back();
  StringRef name = sys::path::filename(trimmed);
  if (trimmed.empty() || name == "." || name == ".." || name == "/")
    return fail("out-dir '" + path +
                "' must name a directory of its own (it is replaced as a "
                "whole), e.g. 'out' or 'runs/out'");
  // The next run's clean-up of killed runs would take it for one of them.
  if (name.contains(".fly-staging-") || name.ends_with(".fly-lock"))
    return fail("out-dir '" + path +
                "' has the name of fly's own staging directories or lock "
                "files; choose another name");
  StringRef parent = sys::path::parent_path(trimmed);
  return std::make_pair(parent.empty() ? std::string(".") : parent.str(),
                        name.str());
}

static std::string sibling(StringRef parent, const Twine &name) {
  SmallString<256> path(parent);
  sys::path::append(path, name);
  return std::string(path);
}

static std::string stagingPrefix(StringRef name) {
  return ("." + name + ".fly-staging-").str();
}

//===----------------------------------------------------------------------===//
// Staging directories alive in this process, for the signal handler and for
// the stale-staging sweep.
//===----------------------------------------------------------------------===//

// Taken with interrupts blocked on the thread: a handler there would wait
// for a commit that waits for this mutex.
static std::mutex liveMutex;
static StringSet<> liveStaging;

namespace {
/// A staging path the async-signal-safe interrupt handler empties and
/// removes (rmdir) as a whole: copied here while it is live. A sweep stages
/// one out-dir per kernel at once.
struct SignalStaging {
  char path[4096];
  std::atomic<bool> set{false};
  // Once a commit has swapped the previous out-dir into the path, the
  // handler removes only the names this lists (NUL-terminated, one after
  // the other, then an empty one): the files the previous run recorded and
  // the links carried over, never a file something else wrote there
  // meanwhile. Which directory the path holds is told by the staging
  // directory's inode.
  std::atomic<ino_t> inode{0};
  std::atomic<const char *> previousNames{nullptr};
  std::unique_ptr<char[]> previousNamesBuffer;
  // Where no atomic exchange exists, the previous out-dir is moved aside
  // before the staging directory takes its place: between the two renames
  // the handler moves it back (the out-dir is missing), after them it
  // removes the previous names from it.
  char outDir[4096];
  char aside[4096];
  std::atomic<bool> asideSet{false};
};

/// Slots come in chunks, allocated as staging directories need them and
/// never freed (the handler may be reading one); a sweep of more kernels
/// than kChunks x kChunkSize at once has the files of the others
/// registered one by one with RemoveFileOnSignal.
constexpr size_t kChunkSize = 64;
constexpr size_t kChunks = 256;
std::atomic<SignalStaging *> signalChunks[kChunks];

/// Calls `visit` on each allocated slot until it returns true.
template <typename Visit> bool forEachSignalSlot(Visit visit) {
  for (std::atomic<SignalStaging *> &chunk : signalChunks) {
    SignalStaging *slots = chunk.load();
    if (!slots)
      return false;
    for (size_t i = 0; i < kChunkSize; ++i)
      if (visit(slots[i]))
        return true;
  }
  return false;
}
} // namespace

/// The live slot of `staging` (under liveMutex), if it has one.
static SignalStaging *findSignalStaging(StringRef staging) {
  SignalStaging *found = nullptr;
  forEachSignalSlot([&](SignalStaging &slot) {
    if (slot.set.load() && staging == StringRef(slot.path))
      found = &slot;
    return found != nullptr;
  });
  return found;
}

/// getdents64's record (not exported by glibc).
struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// Writes into a staging directory in progress, and whether an interrupt
// came: the handler waits (briefly) for writes in flight to finish, and a
// write that finishes after the interrupt removes its own file. Without
// this, a thread that creates a file right after the handler emptied the
// directory leaves it behind (seen under load in out-dir-signals.test).
static std::atomic<bool> interrupted{false};
static std::atomic<int> writesInFlight{0};
// Commits between their first change and their end: the handler waits for
// them (a staging directory it empties could become the out-dir under it,
// its hard links to the user's files going with the previous out-dir's),
// and a commit that sees the interrupt first changes nothing.
static std::atomic<int> swapsInFlight{0};

namespace {
/// The interrupts fly handles, blocked on this thread while alive.
class BlockedInterrupts {
public:
  BlockedInterrupts() {
    sigset_t interrupts;
    sigemptyset(&interrupts);
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGUSR2})
      sigaddset(&interrupts, signal);
    ::pthread_sigmask(SIG_BLOCK, &interrupts, &previousMask);
  }
  ~BlockedInterrupts() {
    ::pthread_sigmask(SIG_SETMASK, &previousMask, nullptr);
  }
  BlockedInterrupts(const BlockedInterrupts &) = delete;
  BlockedInterrupts &operator=(const BlockedInterrupts &) = delete;

private:
  sigset_t previousMask;
};
} // namespace

/// Sleeps one millisecond, async-signal-safe.
static void sleepOneMs() {
  struct timespec ms = {0, 1000000};
  ::nanosleep(&ms, nullptr);
}

/// Sleeps (async-signal-safe) until `count` is 0, at most `maxMs` ms.
static void waitForNone(const std::atomic<int> &count, int maxMs) {
  for (int i = 0; i < maxMs && count.load() > 0; ++i)
    sleepOneMs();
}

/// Unlinks from directory `dirFd` the NUL-separated `names` (ended by an
/// empty one), async-signal-safe.
static void unlinkNames(int dirFd, const char *names) {
  for (const char *name = names; name && *name; name += std::strlen(name) + 1)
    ::unlinkat(dirFd, name, 0);
}

/// Empties one staging path with async-signal-safe calls only (no malloc,
/// no opendir), then removes it.
static void cleanOnInterrupt(SignalStaging &slot) {
  int fd = ::open(slot.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat held;
  const char *previous = slot.previousNames.load();
  if (fd >= 0 && previous && ::fstat(fd, &held) == 0 &&
      held.st_ino != slot.inode.load()) {
    unlinkNames(fd, previous);
    ::rmdir(slot.path);
    ::close(fd);
    return;
  }
  alignas(8) static char buffer[8192];
  for (int pass = 0; fd >= 0 && pass < 4; ++pass) {
    ::lseek(fd, 0, SEEK_SET);
    long n;
    while ((n = ::syscall(SYS_getdents64, fd, buffer, sizeof(buffer))) > 0)
      for (long at = 0; at < n;) {
        auto *entry = reinterpret_cast<LinuxDirent64 *>(buffer + at);
        at += entry->d_reclen;
        const char *name = entry->d_name;
        if (entry->d_type != DT_DIR && std::strcmp(name, ".") &&
            std::strcmp(name, ".."))
          ::unlinkat(fd, name, 0);
      }
    if (::rmdir(slot.path) == 0)
      break;
  }
  if (fd >= 0)
    ::close(fd);
}

/// The previous out-dir moved aside by a commit without atomic exchange:
/// back into place while the out-dir is missing, else (the new one is in
/// place) rid of the previous names.
static void restoreAsideOnInterrupt(SignalStaging &slot) {
  if (!slot.asideSet.load())
    return;
  struct stat st;
  if (::lstat(slot.outDir, &st) != 0) {
    ::rename(slot.aside, slot.outDir);
    return;
  }
  // Still the previous out-dir (the commit's thread has not moved it yet,
  // and may any moment): what is at the aside path is not to be touched.
  if (st.st_ino != slot.inode.load())
    return;
  int fd = ::open(slot.aside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  unlinkNames(fd, slot.previousNames.load());
  ::close(fd);
  ::rmdir(slot.aside);
}

static void onInterrupt() {
  interrupted.store(true);
  // At most ~200 ms, should a write not finish; a commit's renames and
  // removals, at most ~30 s (a stuck filesystem).
  waitForNone(writesInFlight, 200);
  waitForNone(swapsInFlight, 30000);
  // The staged files are not registered one by one with RemoveFileOnSignal
  // (its list costs O(files) per registration: quadratic out-dirs), and a
  // TempFile registers itself only after creating its file. What a writer
  // creates after the last pass is removed by the next run into the out-dir
  // (removeStaleStaging).
  forEachSignalSlot([](SignalStaging &slot) {
    if (slot.set.load()) {
      restoreAsideOnInterrupt(slot);
      cleanOnInterrupt(slot);
    }
    return false;
  });
}

/// Whether the interrupt handler now cleans `staging` as a whole.
static bool registerLive(StringRef staging) {
  BlockedInterrupts blocked; // see liveMutex
  std::lock_guard<std::mutex> lock(liveMutex);
  liveStaging.insert(staging);
  // No slot is rewritten while the handler may be reading it.
  if (staging.size() >= sizeof(SignalStaging::path) || interrupted.load())
    return false;
  auto take = [&](SignalStaging &slot) {
    if (slot.set.load())
      return false;
    std::memcpy(slot.path, staging.data(), staging.size());
    slot.path[staging.size()] = '\0';
    slot.inode.store(0);
    slot.previousNames.store(nullptr);
    slot.asideSet.store(false);
    slot.set.store(true);
    addInterruptCallback(onInterrupt);
    return true;
  };
  if (forEachSignalSlot(take))
    return true;
  for (std::atomic<SignalStaging *> &chunk : signalChunks)
    if (!chunk.load()) {
      chunk.store(new SignalStaging[kChunkSize]);
      return take(chunk.load()[0]);
    }
  return false;
}

static void unregisterLive(StringRef staging) {
  BlockedInterrupts blocked; // see liveMutex
  std::lock_guard<std::mutex> lock(liveMutex);
  liveStaging.erase(staging);
  if (SignalStaging *slot = findSignalStaging(staging)) {
    slot->set.store(false);
    slot->asideSet.store(false);
    slot->previousNames.store(nullptr);
  }
}

/// Tells the interrupt handler that the previous out-dir `outDir` is being
/// moved to `aside` (see SignalStaging::aside); nothing when the handler
/// does not clean `staging` as a whole.
static void setAsideForSignal(StringRef staging, StringRef outDir,
                              StringRef aside) {
  BlockedInterrupts blocked; // see liveMutex
  std::lock_guard<std::mutex> lock(liveMutex);
  SignalStaging *slot = findSignalStaging(staging);
  if (!slot || outDir.size() >= sizeof(slot->outDir) ||
      aside.size() >= sizeof(slot->aside))
    return;
  std::memcpy(slot->outDir, outDir.data(), outDir.size());
  slot->outDir[outDir.size()] = '\0';
  std::memcpy(slot->aside, aside.data(), aside.size());
  slot->aside[aside.size()] = '\0';
  slot->asideSet.store(true);
}

/// Tells the interrupt handler which `files` to remove should `staging`
/// come to hold the previous out-dir (see SignalStaging::previousNames);
/// nothing when the handler does not clean it as a whole.
static void setPreviousNamesForSignal(StringRef staging,
                                      ArrayRef<std::string> files) {
  BlockedInterrupts blocked; // see liveMutex
  std::lock_guard<std::mutex> lock(liveMutex);
  SignalStaging *slot = findSignalStaging(staging);
  if (!slot)
    return;
  struct stat st;
  if (::stat(slot->path, &st) != 0)
    return;
  std::string names;
  for (const std::string &file : files)
    names += file + '\0';
  // A handler may still be reading the buffer it replaces: that one is
  // kept for the rest of the process.
  slot->previousNames.store(nullptr);
  static std::vector<std::unique_ptr<char[]>> retired;
  if (slot->previousNamesBuffer)
    retired.push_back(std::move(slot->previousNamesBuffer));
  slot->previousNamesBuffer.reset(new char[names.size() + 1]);
  std::memcpy(slot->previousNamesBuffer.get(), names.data(), names.size());
  slot->previousNamesBuffer[names.size()] = '\0';
  slot->inode.store(st.st_ino);
  slot->previousNames.store(slot->previousNamesBuffer.get());
}

/// Removes the regular files (and symlinks) directly inside `dir`, then
/// `dir`; subdirectories are left (and with them `dir`).
static void removeFlatDirectory(StringRef dir) {
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end;
       it != end && !ec; it.increment(ec))
    if (it->type() != sys::fs::file_type::directory_file)
      sys::fs::remove(it->path());
  sys::fs::remove(dir);
}

static Expected<StringSet<>> readRecord(StringRef dir) {
  StringSet<> names;
  std::string recordPath = sibling(dir, OutputDirectory::kRecordName);
  if (!sys::fs::exists(recordPath))
    return names;
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      readRegularFile(recordPath, 64 << 20);
  if (!buffer)
    return buffer.takeError();
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines)
    if (!line.starts_with("#") && isPlainFileName(line))
      names.insert(line);
  return names;
}

/// Whether `file` in `dir` is the same file as the one of its name in
/// `outDir` (a link carried over).
static bool isLinkedFrom(StringRef dir, StringRef outDir, StringRef file) {
  struct stat here, there;
  return ::lstat(sibling(dir, file).c_str(), &here) == 0 &&
         ::lstat(sibling(outDir, file).c_str(), &there) == 0 &&
         here.st_dev == there.st_dev && here.st_ino == there.st_ino;
}

/// A killed run's directory `dir` that holds an out-dir (a previous one, or
/// a new one not yet swapped in): its recorded files, its record and the
/// links carried over into `outDir` go; any other file (a user's, not
/// carried) stays, and with it the directory.
static void removeStaleOutDir(StringRef dir, StringRef outDir) {
  StringSet<> record;
  if (Expected<StringSet<>> read = readRecord(dir))
    record = std::move(*read);
  else
    consumeError(read.takeError());
  std::error_code ec;
  std::vector<std::string> doomed;
  for (sys::fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end;
       it != end && !ec; it.increment(ec)) {
    StringRef entry = sys::path::filename(it->path());
    if (it->type() != sys::fs::file_type::directory_file &&
        (record.contains(entry) || isLinkedFrom(dir, outDir, entry)))
      doomed.push_back(entry.str());
  }
  for (const std::string &file : doomed)
    sys::fs::remove(sibling(dir, file));
  sys::fs::remove(sibling(dir, OutputDirectory::kRecordName));
  sys::fs::remove(dir);
}

/// Staging markers this process holds open and locked, at most
/// kMaxLockedMarkers.
static constexpr int kMaxLockedMarkers = 64;
static std::atomic<int> lockedMarkers{0};

/// Whether another open file description holds the staging marker of `dir`
/// locked, or whether that cannot be told (another user's marker): its run
/// may be alive. A shared lock, which its run's exclusive one refuses, needs
/// only read access, on NFS too.
static bool isMarkerLocked(StringRef dir) {
  int fd = ::open(sibling(dir, OutputDirectory::kStagingMarkerName).c_str(),
                  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno != ENOENT;
  bool locked = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return locked;
}

/// Staging directories of `name` whose run is gone (killed runs) are
/// cleaned up, called under the out-dir's lock: one with a record but no
/// marker always (only a commit makes those), one with the marker where
/// nothing holds it locked and its pid is not a live process (or, for this
/// process's pid, not one of its own stagings). Only what fly made:
/// a staging directory (its marker) goes as a whole; one that holds an
/// out-dir (its record) loses only what fly wrote or carried over, after
/// the previous out-dir a run without atomic exchange moved aside
/// (`-old-`) has been moved back where the out-dir is missing; an empty
/// one goes. A user's directory of a matching name is left alone.
static void removeStaleStaging(StringRef parent, StringRef name) {
  std::string prefix = stagingPrefix(name);
  std::string outDir = sibling(parent, name);
  auto has = [](StringRef dir, StringRef file) {
    sys::fs::file_status status;
    return !sys::fs::status(sibling(dir, file), status, /*Follow=*/false) &&
           status.type() == sys::fs::file_type::regular_file;
  };
  auto isAside = [&](StringRef dir) {
    return sys::path::filename(dir).drop_front(prefix.size()).contains("-old-");
  };
  std::vector<std::string> stale;
  std::error_code ec;
  for (sys::fs::directory_iterator it(parent, ec, /*follow_symlinks=*/false),
       end;
       it != end && !ec; it.increment(ec)) {
    StringRef entry = sys::path::filename(it->path());
    if (!entry.starts_with(prefix) ||
        it->type() != sys::fs::file_type::directory_file)
      continue;
    int pid;
    if (entry.drop_front(prefix.size()).split('-').first.getAsInteger(10, pid))
      continue;
    bool marked = has(it->path(), OutputDirectory::kStagingMarkerName);
    // Without the marker, a directory that holds a record, and a previous
    // out-dir moved aside, are only ever made and removed by a commit,
    // under the lock this one holds: their run is gone, whatever process
    // now has its pid.
    if (!marked && (has(it->path(), OutputDirectory::kRecordName) ||
                    isAside(it->path()))) {
      stale.push_back(it->path());
      continue;
    }
    // A staging directory's run holds its marker locked while it lives
    // (seen from another pid namespace or NFS client too); its pid tells
    // of runs that have not locked it, yet or beyond kMaxLockedMarkers.
    bool alive = (marked && isMarkerLocked(it->path())) ||
                 (pid != sys::Process::getProcessId()
                      ? (::kill(pid, 0) == 0 || errno == EPERM)
                      : [&] {
                          BlockedInterrupts blocked; // see liveMutex
                          std::lock_guard<std::mutex> lock(liveMutex);
                          return liveStaging.contains(it->path());
                        }());
    if (!alive)
      stale.push_back(it->path());
  }
  // The previous out-dir first: the links of the others are checked
  // against it.
  std::stable_partition(stale.begin(), stale.end(), isAside);
  for (const std::string &dir : stale) {
    if (has(dir, OutputDirectory::kStagingMarkerName))
      removeFlatDirectory(dir);
    else if (isAside(dir) && !sys::fs::exists(outDir))
      ::rename(dir.c_str(), outDir.c_str());
    else
      removeStaleOutDir(dir, outDir);
  }
}

/// The name of an entry of `dir`, if any.
static std::optional<std::string> findAnyEntry(StringRef dir) {
  std::error_code ec;
  sys::fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end;
  if (ec || it == end)
    return std::nullopt;
  return sys::path::filename(it->path()).str();
}

/// A subdirectory of the out-dir, if any: fly writes only files there.
static std::optional<std::string> findDirectory(StringRef dir) {
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end;
       it != end && !ec; it.increment(ec))
    if (it->type() == sys::fs::file_type::directory_file)
      return sys::path::filename(it->path()).str();
  return std::nullopt;
}

Error OutputDirectory::check(StringRef path) {
  Expected<std::pair<std::string, std::string>> split = splitOutDir(path);
  if (!split)
    return split.takeError();
  auto &[parent, name] = *split;
  // Found here, not when the out-dir is replaced after the whole sweep.
  SmallString<256> target;
  if (sys::fs::is_symlink_file(path) && sys::fs::real_path(path, target))
    return fail("out-dir '" + path +
                "' is a symlink that leads nowhere (dangling, or a loop); "
                "remove it or point it at a directory");
  sys::fs::file_status status;
  if (!sys::fs::status(path, status) && sys::fs::exists(status)) {
    if (!sys::fs::is_directory(status))
      return fail("out-dir '" + path + "' exists and is not a directory");
    if (sys::fs::access(path, sys::fs::AccessMode::Write))
      return fail("out-dir '" + path + "' is not writable");
    // Replaced, it would leave the shell and the user in a deleted one.
    bool current = false;
    if (!sys::fs::equivalent(path, ".", current) && current)
      return fail("out-dir '" + path +
                  "' is the current directory; name a directory of its own "
                  "(fly replaces the out-dir as a whole), e.g. 'out'");
    Expected<StringSet<>> record = readRecord(path);
    if (!record)
      return fail("out-dir '" + path + "': " + toString(record.takeError()));
    if (std::optional<std::string> foreign = findDirectory(path))
      return fail("out-dir '" + path + "' holds a directory '" + *foreign +
                  "' that fly did not write; move it or choose another "
                  "out-dir (fly replaces the out-dir as a whole)");
  }
  if (std::error_code ec = sys::fs::create_directories(parent))
    return fail("cannot create '" + parent + "' for out-dir '" + path +
                "': " + ec.message());
  if (sys::fs::access(parent, sys::fs::AccessMode::Write))
    return fail("out-dir '" + path + "' cannot be replaced: its parent '" +
                parent + "' is not writable");
  return Error::success();
}

OutputDirectory::OutputDirectory(std::string path, std::string staging)
    : path(std::move(path)), staging(std::move(staging)) {}

Expected<std::unique_ptr<OutputDirectory>>
OutputDirectory::create(StringRef outDir) {
  if (Error err = check(outDir))
    return std::move(err);
  // Absolute: unique names are made under the temporary directory
  // otherwise. A symlinked out-dir is replaced where it points.
  SmallString<256> real(outDir);
  if (std::error_code ec = sys::fs::make_absolute(real))
    return fail("out-dir '" + outDir + "': " + ec.message());
  while (real.size() > 1 && sys::path::is_separator(real.back()))
    real.pop_back();
  if (sys::fs::is_symlink_file(real) && sys::fs::real_path(outDir, real))
    return fail("cannot resolve the out-dir symlink '" + outDir + "'");
  outDir = real;
  auto [parent, name] = cantFail(splitOutDir(outDir));
  // The name is known to the signal handler before the directory exists:
  // an interrupt at any point after mkdir removes it.
  std::string prefix = sibling(parent, stagingPrefix(name) +
                                           Twine(sys::Process::getProcessId()));
  std::string staging;
  bool asAWhole = false;
  std::error_code ec = std::make_error_code(std::errc::file_exists);
  for (int attempt = 0; attempt < 100 && ec == std::errc::file_exists;
       ++attempt) {
    staging = prefix + "-" +
              utohexstr(sys::Process::GetRandomNumber() & 0xffffff, true, 6);
    asAWhole = registerLive(staging);
    ec = sys::fs::create_directory(staging, /*IgnoreExisting=*/false);
    if (ec)
      unregisterLive(staging);
  }
  if (ec)
    return fail("cannot create a staging directory beside out-dir '" + outDir +
                "': " + ec.message());
  int markerFd;
  if (std::error_code mec = sys::fs::openFileForWrite(
          sibling(staging, kStagingMarkerName), markerFd, sys::fs::CD_CreateNew,
          sys::fs::OF_None)) {
    removeFlatDirectory(staging);
    unregisterLive(staging);
    return fail("cannot create a staging directory beside out-dir '" + outDir +
                "': " + mec.message());
  }
  // Held until the marker goes: how other runs tell this one is alive. An
  // open file each, so only so many at once (a sweep of thousands of
  // kernels stages as many out-dirs); the others have their pid.
  if (lockedMarkers.fetch_add(1) < kMaxLockedMarkers) {
    // Another run's probe holds a shared lock for an instant.
    for (int i = 0; i < 1000 && ::flock(markerFd, LOCK_EX | LOCK_NB) != 0 &&
                    errno == EWOULDBLOCK;
         ++i)
      sleepOneMs();
  } else {
    --lockedMarkers;
    ::close(markerFd);
    markerFd = -1;
  }
  // The new out-dir takes the place of the old one with its mode and group
  // (a group-shared or 0755 out-dir stays so).
  struct stat existing;
  if (::stat(outDir.str().c_str(), &existing) == 0 &&
      S_ISDIR(existing.st_mode)) {
    ::chmod(staging.c_str(), existing.st_mode & 07777);
    if (existing.st_gid != ::getegid())
      (void)!::chown(staging.c_str(), static_cast<uid_t>(-1), existing.st_gid);
  }
  std::unique_ptr<OutputDirectory> out(
      new OutputDirectory(outDir.str(), std::string(staging)));
  out->cleanedAsAWhole = asAWhole;
  out->markerFd = markerFd;
  return out;
}

OutputDirectory::~OutputDirectory() {
  if (!committed)
    removeStaging();
  closeMarker();
}

void OutputDirectory::closeMarker() {
  if (markerFd < 0)
    return;
  ::close(markerFd);
  markerFd = -1;
  --lockedMarkers;
}

void OutputDirectory::removeStaging() {
  for (const std::string &file : written) {
    std::string full = sibling(staging, file);
    sys::fs::remove(full);
    if (!cleanedAsAWhole)
      sys::DontRemoveFileOnSignal(full);
  }
  removeFlatDirectory(staging);
  unregisterLive(staging);
}

Error OutputDirectory::write(StringRef name, StringRef contents) {
  return writePrinted(name, [&](raw_ostream &os) { os << contents; });
}

Error OutputDirectory::writePrinted(StringRef name,
                                    function_ref<void(raw_ostream &)> print) {
  if (!isPlainFileName(name) || name == kRecordName ||
      name == kStagingMarkerName)
    return fail("refusing to write '" + name + "' in out-dir '" + path +
                "': not a plain file name");
  std::string full = sibling(staging, name);
  {
    std::lock_guard<std::mutex> lock(writtenMutex);
    if (!writtenNames.insert(name).second)
      return fail("two outputs are named '" + name + "' in out-dir '" + path +
                  "'");
    written.push_back(name.str());
  }
  // An interrupt is handled on another thread while this one writes (the
  // handler waits for writes in flight), or here once the write is over:
  // never in the middle of it, where the handler would wait for itself.
  BlockedInterrupts blocked;
  ++writesInFlight;
  llvm::scope_exit inFlight([&] {
    // After an interrupt the handler may already have emptied the staging
    // directory: what this write made goes too.
    if (interrupted.load())
      ::unlink(full.c_str());
    --writesInFlight;
  });
  if (interrupted.load())
    return fail("interrupted while writing out-dir '" + path + "'");
  if (!cleanedAsAWhole)
    sys::RemoveFileOnSignal(full);
  int fd;
  if (std::error_code ec = sys::fs::openFileForWrite(
          full, fd, sys::fs::CD_CreateNew, sys::fs::OF_None))
    return fail("cannot write '" + full + "': " + ec.message());
  raw_fd_ostream os(fd, /*shouldClose=*/true);
  print(os);
  os.close();
  if (os.has_error()) {
    std::error_code ec = os.error();
    // Cleared: a stream destroyed with an error is a fatal error.
    os.clear_error();
    return fail("cannot write '" + full + "': " + ec.message());
  }
  // The file goes with the staging directory (inFlight above).
  if (interrupted.load())
    return fail("interrupted while writing out-dir '" + path + "'");
  return Error::success();
}

Error OutputDirectory::commit(unsigned lockTimeoutSeconds) {
  auto [parent, name] = cantFail(splitOutDir(path));

  // The record of what this run wrote, for the next run's clean-up.
  std::string record = "# files written by fly into this out-dir; files not "
                       "listed here are never deleted\n";
  // In name order: variants are staged in the order they finish.
  std::vector<std::string> recorded = written;
  llvm::sort(recorded);
  for (const std::string &file : recorded)
    record += file + "\n";
  {
    std::string full = sibling(staging, kRecordName);
    if (!cleanedAsAWhole)
      sys::RemoveFileOnSignal(full);
    written.push_back(kRecordName.str());
    if (Error err = writeFileAtomically(full, record))
      return err;
  }

  // One writer at a time from here on: one commit at a time in this
  // process (the lock below is the process's: fcntl), and one process at a
  // time on this out-dir.
  static std::mutex commitMutex;
  std::lock_guard<std::mutex> oneCommit(commitMutex);
  std::string lockPath = sibling(parent, "." + name + ".fly-lock");
  // Never through a link planted there, nor blocking on a FIFO.
  int lockFd =
      ::open(lockPath.c_str(),
             O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (lockFd < 0)
    return fail("cannot create the lock file '" + lockPath +
                "': " + errnoMessage() + "; nothing was replaced");
  llvm::scope_exit closeLock([&] { ::close(lockFd); });
  struct stat lockStatus;
  if (::fstat(lockFd, &lockStatus) != 0 || !S_ISREG(lockStatus.st_mode))
    return fail("the lock file '" + lockPath +
                "' is not a regular file; remove it; nothing was replaced");
  if (sys::fs::tryLockFile(lockFd)) {
    errs() << "fly: another run is writing out-dir '" << path
           << "'; waiting for it (at most " << lockTimeoutSeconds << " s)\n";
    if (std::error_code ec = sys::fs::tryLockFile(
            lockFd, std::chrono::seconds(lockTimeoutSeconds)))
      return fail("another run kept out-dir '" + path + "' locked ('" +
                  lockPath + "') for " + Twine(lockTimeoutSeconds) +
                  " s; nothing was replaced");
  }
  llvm::scope_exit unlock([&] { sys::fs::unlockFile(lockFd); });
  removeStaleStaging(parent, name);

  // Foreign files of the current out-dir are carried over by hard link.
  bool exists = sys::fs::is_directory(path);
  StringSet<> previous;
  std::vector<std::string> carried;
  if (exists) {
    Expected<StringSet<>> read = readRecord(path);
    if (!read)
      return fail("out-dir '" + path + "': " + toString(read.takeError()));
    previous = std::move(*read);
    std::error_code ec;
    for (sys::fs::directory_iterator it(path, ec, /*follow_symlinks=*/false),
         end;
         it != end && !ec; it.increment(ec)) {
      StringRef entry = sys::path::filename(it->path());
      if (it->type() == sys::fs::file_type::directory_file)
        return fail("out-dir '" + path + "' holds a directory '" + entry +
                    "' that fly did not write; nothing was replaced");
      if (entry == kRecordName || previous.contains(entry))
        continue;
      if (writtenNames.contains(entry))
        return fail("out-dir '" + path + "' holds '" + entry +
                    "', which fly did not write, and a new output has that "
                    "name; move it or choose another out-dir; nothing was "
                    "replaced");
      std::string link = sibling(staging, entry);
      if (!cleanedAsAWhole)
        sys::RemoveFileOnSignal(link);
      if (std::error_code lec = sys::fs::create_hard_link(it->path(), link)) {
        if (!cleanedAsAWhole)
          sys::DontRemoveFileOnSignal(link);
        return fail("out-dir '" + path + "' holds '" + entry +
                    "', which fly did not write and cannot carry over (" +
                    lec.message() + "); nothing was replaced");
      }
      carried.push_back(entry.str());
    }
    if (ec)
      return fail("cannot list out-dir '" + path + "': " + ec.message());
  }

  // From here to the end the interrupt handler waits for this commit,
  // which an interrupt that came first stops here, before any change. The
  // handler does not run on this thread meanwhile: it would wait for itself.
  BlockedInterrupts blocked;
  ++swapsInFlight;
  llvm::scope_exit swapDone([] { --swapsInFlight; });
  if (interrupted.load())
    return fail("interrupted before out-dir '" + path +
                "' was replaced; nothing was replaced");

  // The out-dir does not keep the marker; the record written above still
  // marks the directory as fly's if this process dies before the rename.
  sys::fs::remove(sibling(staging, kStagingMarkerName));
  closeMarker();
  // What goes with the previous version: its recorded files, the record,
  // and the links of the files carried over (alive in the new out-dir).
  std::vector<std::string> previousFiles;
  if (exists) {
    for (const auto &entry : previous)
      previousFiles.push_back(entry.getKey().str());
    previousFiles.insert(previousFiles.end(), carried.begin(), carried.end());
    previousFiles.push_back(kRecordName.str());
    setPreviousNamesForSignal(staging, previousFiles);
  }
  std::string old;
  if (!exists) {
    if (::rename(staging.c_str(), path.c_str()))
      return fail("cannot move the new out-dir into place at '" + path +
                  "': " + errnoMessage());
  } else if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, path.c_str(),
                         RENAME_EXCHANGE) == 0) {
    old = staging; // now holds the previous out-dir
  } else {
    // No atomic exchange on this filesystem: move the old one aside first.
    SmallString<256> aside;
    if (std::error_code ec = sys::fs::createUniqueDirectory(
            sibling(parent, stagingPrefix(name) +
                                Twine(sys::Process::getProcessId()) + "-old"),
            aside))
      return fail("cannot replace out-dir '" + path + "': " + ec.message());
    sys::fs::remove(aside);
    // Between the two renames the out-dir is missing: the handler waits for
    // both; should it stop waiting, it moves the previous out-dir back (or,
    // after both, cleans it as the exchange's); a kill leaves it to the
    // next run (removeStaleStaging).
    setAsideForSignal(staging, path, aside);
    if (::rename(path.c_str(), aside.c_str()))
      return fail("cannot replace out-dir '" + path + "': " + errnoMessage());
    if (::rename(staging.c_str(), path.c_str())) {
      std::string message = errnoMessage();
      ::rename(aside.c_str(), path.c_str());
      return fail("cannot replace out-dir '" + path + "': " + message);
    }
    old = std::string(aside);
  }
  committed = true;
  if (!cleanedAsAWhole) {
    for (const std::string &file : written)
      sys::DontRemoveFileOnSignal(sibling(staging, file));
    for (const std::string &file : carried)
      sys::DontRemoveFileOnSignal(sibling(staging, file));
  }
  // The staging path, when it now holds the previous out-dir, stays the
  // interrupt handler's until that is removed: an interrupt meanwhile
  // removes what the previous run wrote there, not a staging directory's
  // worth of everything.
  llvm::scope_exit unregister([&] { unregisterLive(staging); });

  if (!old.empty()) {
    std::string kept;
    for (const std::string &file : previousFiles)
      if (std::error_code ec = sys::fs::remove(sibling(old, file));
          ec && kept.empty())
        kept = "'" + file + "' (" + ec.message() + ")";
    if (sys::fs::remove(old)) {
      if (kept.empty())
        if (std::optional<std::string> other = findAnyEntry(old))
          kept = "'" + *other + "', which something else wrote there";
      errs() << "fly: warning: the previous out-dir, kept at '" << old
             << "', could not be removed: it holds " << kept << "\n";
    }
  }
  return Error::success();
}

} // namespace fly
