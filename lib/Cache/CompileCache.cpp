//===- CompileCache.cpp - Memory + disk cache of compile stages -----------===//

#include "fly/Cache/CompileCache.h"
#include "Support/Environment.h"
#include "fly/Support/BoundedJSON.h"

#include "fly/Support/SafeFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CachePruning.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/LockFileManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace fly {

// FLYCACHE2: entries carry their key and toolchain (FLYCACHE1 did not).
static constexpr StringLiteral kMagic = "FLYCACHE2\n";

CacheConfig CacheConfig::fromEnvironment() {
  CacheConfig config;
  // Strict: FLY_ENABLE_CACHE=no disables, =maybe warns (fly/Support).
  if (std::optional<bool> enable = getEnvFlag("FLY_ENABLE_CACHE"))
    config.enabled = *enable;
  if (std::optional<bool> always = getEnvFlag("FLY_ALWAYS_COMPILE"))
    config.alwaysCompile = *always;
  if (std::optional<std::string> dir = sys::Process::GetEnv("FLY_CACHE_DIR")) {
    config.directory = *dir;
  } else {
    SmallString<256> path;
    if (std::optional<std::string> xdg = sys::Process::GetEnv("XDG_CACHE_HOME"))
      path = *xdg;
    else if (sys::path::home_directory(path))
      sys::path::append(path, ".cache");
    else
      path = "/tmp";
    sys::path::append(path, "fly-snapshot");
    config.directory = std::string(path);
  }
  if (std::optional<uint64_t> mb = getEnvUnsigned("FLY_CACHE_MAX_MB"))
    config.maxBytes = *mb << 20;
  return config;
}

static uint64_t frameHash(StringRef key, StringRef toolchain,
                          StringRef payload) {
  std::string header = (key + "\n" + toolchain + "\n").str();
  return xxh3_64bits(header) ^ xxh3_64bits(payload);
}

std::string frameCacheEntry(StringRef key, StringRef payload,
                            std::optional<StringRef> toolchain) {
  std::string chain = toolchain ? toolchain->str() : getToolchainFingerprint();
  return (kMagic + key + "\n" + chain + "\n" +
          formatv("{0:x-16} {1}\n", frameHash(key, chain, payload),
                  payload.size()) +
          payload)
      .str();
}

std::optional<CacheEntryFrame> unframeCacheEntry(StringRef data) {
  if (!data.consume_front(kMagic))
    return std::nullopt;
  CacheEntryFrame frame;
  StringRef header;
  std::tie(frame.key, data) = data.split('\n');
  std::tie(frame.toolchain, data) = data.split('\n');
  std::tie(header, frame.payload) = data.split('\n');
  auto [hashText, sizeText] = header.split(' ');
  uint64_t hash, size;
  if (hashText.getAsInteger(16, hash) || sizeText.getAsInteger(10, size) ||
      frame.payload.size() != size ||
      frameHash(frame.key, frame.toolchain, frame.payload) != hash)
    return std::nullopt;
  return frame;
}

CompileCache::CompileCache(CacheConfig config) : config(std::move(config)) {
  Expected<unsigned> timeout = CacheKeyLock::timeoutFromEnvironment();
  if (timeout)
    lockTimeoutSeconds = *timeout;
  else
    warn(toString(timeout.takeError()));
}

void CompileCache::warn(std::string message) {
  warnings.push_back(std::move(message));
}

std::vector<std::string> CompileCache::takeWarnings() {
  std::lock_guard<std::mutex> lock(mutex);
  return std::exchange(warnings, {});
}

/// Why a cache file or directory with `status` cannot be trusted: owned by
/// another user or writable by others; "" when it can.
static std::string whyUntrusted(const sys::fs::file_status &status) {
  if (status.getUser() != ::getuid())
    return formatv("it is owned by another user (uid {0})", status.getUser());
  if (status.permissions() & (sys::fs::group_write | sys::fs::others_write)) {
    char mode[16];
    std::snprintf(mode, sizeof(mode), "%04o",
                  static_cast<unsigned>(status.permissions()));
    return formatv("it is writable by other users (mode {0})", mode);
  }
  return "";
}

bool CompileCache::ensureDirectory() {
  if (!config.useDisk || !diskUsable)
    return false;
  // A new cache directory is private to its user.
  if (std::error_code ec = sys::fs::create_directories(
          config.directory, /*IgnoreExisting=*/true, sys::fs::owner_all)) {
    warn(formatv("cache directory '{0}' is unusable ({1}); continuing without "
                 "the disk cache",
                 config.directory, ec.message()));
    diskUsable = false;
    return false;
  }
  // Anyone who can write the directory can plant entries: only the user's
  // own, not group- or world-writable directory is trusted.
  sys::fs::file_status status;
  std::string why;
  if (std::error_code ec = sys::fs::status(config.directory, status))
    why = ec.message();
  else if (!sys::fs::is_directory(status))
    why = "it is not a directory";
  else
    why = whyUntrusted(status);
  if (!why.empty()) {
    warn(formatv("cache directory '{0}' is not trusted: {1}; continuing "
                 "without the disk cache (use a directory of your own, "
                 "mode 0700 or 0755)",
                 config.directory, why));
    diskUsable = false;
    return false;
  }
  return true;
}

std::string CompileCache::entryPath(StringRef kind, const CacheKey &key) const {
  // The llvmcache- prefix lets llvm::pruneCache manage the entries.
  SmallString<256> path(config.directory);
  sys::path::append(path, "llvmcache-" + kind + "-" + key.digest());
  return std::string(path);
}

std::optional<std::string> CompileCache::lookup(StringRef kind,
                                                const CacheKey &key) {
  // FLY_ALWAYS_COMPILE: every lookup misses; entries are still written.
  if (!enabled() || config.alwaysCompile)
    return std::nullopt;
  std::string id = (kind + ":" + key.digest()).str();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = memory.find(id); it != memory.end())
    return it->second;
  if (!config.useDisk || !diskUsable)
    return std::nullopt;
  if (!ensureDirectory())
    return std::nullopt;
  std::string path = entryPath(kind, key);
  if (!sys::fs::exists(path))
    return std::nullopt;
  // Bounded, regular files only: a FIFO or /dev/zero under an entry's name
  // neither hangs nor exhausts memory.
  sys::fs::file_status status;
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      readRegularFile(path,
                      std::min<uint64_t>(kMaxCacheEntryBytes,
                                         config.maxBytes ? config.maxBytes
                                                         : kMaxCacheEntryBytes),
                      &status);
  if (!buffer) {
    warn(formatv("ignoring cache entry: {0}; it will be rebuilt",
                 toString(buffer.takeError())));
    return std::nullopt;
  }
  if (std::string why = whyUntrusted(status); !why.empty()) {
    warn(formatv("refusing cache entry '{0}': {1}; it will be rebuilt", path,
                 why));
    return std::nullopt;
  }
  std::optional<CacheEntryFrame> frame =
      unframeCacheEntry((*buffer)->getBuffer());
  std::string problem;
  if (!frame)
    problem = "truncated or corrupt";
  else if (frame->key != id)
    problem = "it holds the entry of another key (copied or planted under "
              "this name)";
  else if (frame->toolchain != getToolchainFingerprint())
    problem =
        "it was written by another toolchain (" + frame->toolchain.str() + ")";
  if (!problem.empty()) {
    warn(formatv("discarding cache entry '{0}': {1}; it will be rebuilt", path,
                 problem));
    sys::fs::remove(path);
    return std::nullopt;
  }
  memory[id] = frame->payload.str();
  return frame->payload.str();
}

void CompileCache::store(StringRef kind, const CacheKey &key,
                         StringRef payload) {
  if (!enabled())
    return;
  std::lock_guard<std::mutex> lock(mutex);
  memory[(kind + ":" + key.digest()).str()] = payload.str();
  if (!ensureDirectory())
    return;
  std::string path = entryPath(kind, key);
  // A temporary renamed into place once complete: readers (other processes
  // too) see the old state or the whole entry, never a part; a full disk
  // leaves no entry at all. Mode 0644: readable, writable only by its owner.
  if (Error err = writeFileAtomically(
          path, frameCacheEntry((kind + ":" + key.digest()).str(), payload),
          sys::fs::all_read | sys::fs::owner_write))
    warn(formatv("cannot store cache entry: {0}; continuing without it",
                 toString(std::move(err))));
}

Expected<unsigned> CacheKeyLock::timeoutFromEnvironment() {
  std::optional<std::string> text =
      sys::Process::GetEnv("FLY_CACHE_LOCK_TIMEOUT");
  if (!text)
    return kDefaultTimeoutSeconds;
  unsigned seconds;
  if (StringRef(*text).getAsInteger(10, seconds) || seconds > 86400)
    return createStringError(
        std::errc::invalid_argument,
        "FLY_CACHE_LOCK_TIMEOUT='%s' is not a whole number of seconds from 0 "
        "to 86400; using %u",
        text->c_str(), kDefaultTimeoutSeconds);
  return seconds;
}

namespace {
/// The locks this process holds, by entry path.
struct HeldLocks {
  std::mutex mutex;
  StringSet<> paths;
};
} // namespace

static HeldLocks &heldLocks() {
  static HeldLocks held;
  return held;
}

namespace {
/// What a LockFileManager lock file says: "<host> <pid>".
struct LockOwner {
  std::string host;
  int pid = 0;
  std::chrono::seconds age{0};
};
} // namespace

static std::optional<LockOwner> readLockOwner(StringRef entryPath) {
  std::string lockPath = (entryPath + ".lock").str();
  sys::fs::file_status status;
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      readRegularFile(lockPath, 4096, &status);
  if (!buffer) {
    consumeError(buffer.takeError());
    return std::nullopt;
  }
  LockOwner owner;
  auto [host, pid] = (*buffer)->getBuffer().trim().split(' ');
  if (host.empty() || pid.trim().getAsInteger(10, owner.pid))
    return std::nullopt;
  owner.host = host.str();
  owner.age = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::system_clock::now() - status.getLastModificationTime());
  return owner;
}

CacheKeyLock::CacheKeyLock() = default;

CacheKeyLock::CacheKeyLock(std::string entryPath, unsigned timeoutSeconds)
    : path(std::move(entryPath)), timeoutSeconds(timeoutSeconds) {
  tryLock();
}

CacheKeyLock::~CacheKeyLock() { release(); }

void CacheKeyLock::release() {
  HeldLocks &held = heldLocks();
  std::lock_guard<std::mutex> guard(held.mutex);
  // The lock file goes before the registry entry: no other thread of this
  // process sees our lock file unregistered and takes it for stale.
  bool owned = state == State::Owned;
  manager.reset();
  if (owned)
    held.paths.erase(path);
  state = State::Unavailable;
}

void CacheKeyLock::tryLock() {
  HeldLocks &held = heldLocks();
  std::lock_guard<std::mutex> guard(held.mutex);
  manager.reset();
  // Held by this process (another thread, a repeated key): never wait on
  // ourselves; compute without the lock. A lock name that is not a regular
  // file (a FIFO, a link to /dev/zero) would block or exhaust memory in
  // LockFileManager's read of it. LockFileManager's own lock is a symbolic
  // link to a regular file, so the link is followed.
  if (held.paths.contains(path) ||
      existsAsNonRegularFile(path + ".lock", FinalSymlink::Follow)) {
    state = State::Unavailable;
    return;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    manager = std::make_unique<LockFileManager>(path);
    Expected<bool> owned = manager->tryLock();
    if (!owned) {
      // No lock file possible (read-only directory, ...): work alone.
      consumeError(owned.takeError());
      manager.reset();
      state = State::Unavailable;
      return;
    }
    if (*owned) {
      held.paths.insert(path);
      state = State::Owned;
      return;
    }
    // A lock naming this process that the registry does not hold was left
    // by a killed process with our pid: stale.
    std::optional<LockOwner> owner = readLockOwner(path);
    if (attempt == 0 && owner &&
        owner->pid == static_cast<int>(sys::Process::getProcessId()) &&
        owner->host == getHostName()) {
      manager.reset();
      sys::fs::remove(path + ".lock");
      continue;
    }
    break;
  }
  state = State::OwnedByOther;
}

bool CacheKeyLock::mayBeFree() const {
  if (!sys::fs::exists(path + ".lock"))
    return true;
  std::optional<LockOwner> owner = readLockOwner(path);
  return owner && owner->host == getHostName() && ::kill(owner->pid, 0) != 0 &&
         errno == ESRCH;
}

std::string CacheKeyLock::describeOwner() const {
  std::optional<LockOwner> owner = readLockOwner(path);
  if (!owner)
    return "another process";
  return formatv("pid {0} on {1} (lock taken {2} s ago)", owner->pid,
                 owner->host, owner->age.count())
      .str();
}

void CacheKeyLock::wait(std::optional<unsigned> maxSeconds) {
  CacheKeyLock *self = this;
  waitAll(ArrayRef(&self, 1), maxSeconds);
}

void CacheKeyLock::waitAll(ArrayRef<CacheKeyLock *> locks,
                           std::optional<unsigned> maxSeconds,
                           function_ref<void(size_t)> ready) {
  using namespace std::chrono;
  const steady_clock::time_point start = steady_clock::now();
  std::vector<size_t> held;
  for (auto [i, lock] : llvm::enumerate(locks)) {
    if (lock->state == State::OwnedByOther)
      held.push_back(i);
    else if (ready)
      ready(i);
  }
  // Said per key for a few, then counted: a sweep may wait for thousands.
  constexpr size_t kNamed = 8;
  auto entry = [&](size_t i) {
    return sys::path::filename(locks[i]->path).str();
  };
  auto limitOf = [&](size_t i) {
    return seconds(maxSeconds.value_or(locks[i]->timeoutSeconds));
  };
  for (auto [n, i] : llvm::enumerate(held)) {
    if (n == kNamed) {
      errs() << formatv("fly: ... and {0} more cache entries held by other "
                        "processes; waiting for all of them at once\n",
                        held.size() - kNamed);
      break;
    }
    errs() << formatv("fly: cache entry {0} is being compiled by {1}; waiting "
                      "at most {2} s (FLY_CACHE_LOCK_TIMEOUT)\n",
                      entry(i), locks[i]->describeOwner(), limitOf(i).count());
  }
  milliseconds interval(10);
  steady_clock::time_point nextReport = start + seconds(10);
  size_t gaveUpCount = 0;
  while (!held.empty()) {
    std::vector<size_t> still;
    for (size_t i : held) {
      CacheKeyLock &lock = *locks[i];
      if (lock.mayBeFree()) {
        // The owner finished or died: try again, taking over a stale lock.
        lock.tryLock();
        if (lock.state != State::OwnedByOther) {
          if (ready)
            ready(i);
          continue;
        }
      }
      if (steady_clock::now() - start >= limitOf(i)) {
        if (gaveUpCount++ < kNamed)
          errs() << formatv("fly: gave up waiting {0} s for cache entry {1} "
                            "held by {2}; compiling it here without the lock\n",
                            limitOf(i).count(), entry(i), lock.describeOwner());
        lock.manager.reset();
        lock.state = State::Unavailable;
        if (ready)
          ready(i);
        continue;
      }
      still.push_back(i);
    }
    held = std::move(still);
    if (held.empty())
      break;
    steady_clock::time_point now = steady_clock::now();
    if (now >= nextReport) {
      errs() << formatv("fly: still waiting for {0} cache entr{1} ({2} s): "
                        "held by {3}\n",
                        held.size(), held.size() == 1 ? "y" : "ies",
                        duration_cast<seconds>(now - start).count(),
                        locks[held.front()]->describeOwner());
      nextReport = now + seconds(10);
    }
    std::this_thread::sleep_for(interval);
    interval = std::min(interval * 2, milliseconds(500));
  }
  if (gaveUpCount > kNamed)
    errs() << formatv("fly: gave up waiting for {0} more cache entries; "
                      "compiling them here without their locks\n",
                      gaveUpCount - kNamed);
}

std::unique_ptr<CacheKeyLock> CompileCache::lock(StringRef kind,
                                                 const CacheKey &key) {
  std::lock_guard<std::mutex> guard(mutex);
  if (!enabled() || !ensureDirectory())
    return std::make_unique<CacheKeyLock>();
  std::string path = entryPath(kind, key);
  if (existsAsNonRegularFile(path + ".lock", FinalSymlink::Follow)) {
    warn(formatv("cache lock '{0}.lock' is not a regular file; compiling "
                 "without the lock",
                 path));
    return std::make_unique<CacheKeyLock>();
  }
  return std::make_unique<CacheKeyLock>(path, lockTimeoutSeconds);
}

std::optional<std::string>
CompileCache::getOrCompute(StringRef kind, const CacheKey &key,
                           function_ref<std::optional<std::string>()> compute,
                           bool &hit) {
  hit = false;
  if (std::optional<std::string> cached = lookup(kind, key)) {
    hit = true;
    return cached;
  }
  return computeAfterMiss(kind, key, compute, hit);
}

std::optional<std::string> CompileCache::computeAfterMiss(
    StringRef kind, const CacheKey &key,
    function_ref<std::optional<std::string>()> compute, bool &hit) {
  hit = false;
  std::unique_ptr<CacheKeyLock> keyLock = lock(kind, key);
  while (keyLock->getState() == CacheKeyLock::State::OwnedByOther) {
    // Another process computes this key: wait, then take its result.
    keyLock->wait();
    if (std::optional<std::string> cached = lookup(kind, key)) {
      hit = true;
      return cached;
    }
  }
  // Another process may have stored the key and let go of its lock between
  // the caller's lookup and our lock.
  if (keyLock->getState() == CacheKeyLock::State::Owned)
    if (std::optional<std::string> cached = lookup(kind, key)) {
      hit = true;
      return cached;
    }
  std::optional<std::string> payload = compute();
  if (payload)
    store(kind, key, *payload);
  return payload;
}

static std::string slotPath(StringRef dir, StringRef slot) {
  SmallString<256> path(dir);
  sys::path::append(path, "llvmcache-slot-" +
                              utohexstr(xxh3_64bits(slot), /*LowerCase=*/true));
  return std::string(path);
}

std::string CompileCache::explainMiss(StringRef slot, const CacheKey &key) {
  if (!enabled() || !config.useDisk)
    return "";
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      readRegularFile(slotPath(config.directory, slot), 1 << 20);
  if (!buffer) {
    consumeError(buffer.takeError());
    return "no earlier compile of this input is recorded";
  }
  Expected<json::Value> previous =
      parseJSONBounded((*buffer)->getBuffer(), "cache slot record");
  const json::Object *prevParts = previous ? previous->getAsObject() : nullptr;
  if (!previous)
    consumeError(previous.takeError());
  if (!prevParts)
    return "the earlier record is unreadable";
  std::string changed;
  json::Object now = key.explain();
  for (const auto &[name, value] : now) {
    const json::Value *before = prevParts->get(name);
    if (!before || *before != value)
      changed += (changed.empty() ? "" : ", ") + name.str();
  }
  return changed.empty() ? "key unchanged (entry was pruned or damaged)"
                         : "changed: " + changed;
}

void CompileCache::recordSlot(StringRef slot, const CacheKey &key) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!enabled() || !ensureDirectory())
    return;
  std::string text;
  raw_string_ostream(text) << json::Value(key.explain());
  if (Error err = writeFileAtomically(slotPath(config.directory, slot), text))
    consumeError(std::move(err));
}

void CompileCache::prune() {
  if (!config.enabled || !config.useDisk || !diskUsable || !config.maxBytes)
    return;
  // pruneCache opens the timestamp for writing: a FIFO there would block
  // forever, a symbolic link would write outside the cache. The name is the
  // cache's own, so whatever else is there goes.
  SmallString<256> timestamp(config.directory);
  sys::path::append(timestamp, "llvmcache.timestamp");
  // ::unlink, not sys::fs::remove, which refuses to remove a FIFO.
  if (existsAsNonRegularFile(timestamp) && ::unlink(timestamp.c_str()) != 0) {
    std::lock_guard<std::mutex> lock(mutex);
    warn(formatv("not pruning the cache: '{0}' is not a regular file and "
                 "cannot be removed",
                 timestamp));
    return;
  }
  CachePruningPolicy policy;
  policy.Interval = std::chrono::seconds(0);
  policy.MaxSizeBytes = config.maxBytes;
  pruneCache(config.directory, policy);
}

} // namespace fly
