//===- CompileCache.cpp - Memory + disk cache of compile stages -----------===//

#include "fly/Cache/CompileCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CachePruning.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/LockFileManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace llvm;

namespace fly {

static constexpr StringLiteral kMagic = "FLYCACHE1\n";

CacheConfig CacheConfig::fromEnvironment() {
  CacheConfig config;
  if (std::optional<std::string> enable = sys::Process::GetEnv("FLY_ENABLE_CACHE"))
    config.enabled = !(*enable == "0" || StringRef(*enable).equals_insensitive("false") ||
                       StringRef(*enable).equals_insensitive("off"));
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
  if (std::optional<std::string> mb = sys::Process::GetEnv("FLY_CACHE_MAX_MB")) {
    uint64_t value;
    if (!StringRef(*mb).getAsInteger(10, value))
      config.maxBytes = value << 20;
  }
  return config;
}

std::string frameCacheEntry(StringRef payload) {
  return (kMagic + formatv("{0:x-16} {1}\n", xxh3_64bits(payload), payload.size()) +
          payload)
      .str();
}

std::optional<StringRef> unframeCacheEntry(StringRef data) {
  if (!data.consume_front(kMagic))
    return std::nullopt;
  auto [header, payload] = data.split('\n');
  auto [hashText, sizeText] = header.split(' ');
  uint64_t hash, size;
  if (hashText.getAsInteger(16, hash) || sizeText.getAsInteger(10, size) ||
      payload.size() != size || xxh3_64bits(payload) != hash)
    return std::nullopt;
  return payload;
}

CompileCache::CompileCache(CacheConfig config) : config(std::move(config)) {}

void CompileCache::warn(std::string message) {
  warnings.push_back(std::move(message));
}

std::vector<std::string> CompileCache::takeWarnings() {
  std::lock_guard<std::mutex> lock(mutex);
  return std::exchange(warnings, {});
}

bool CompileCache::ensureDirectory() {
  if (!config.useDisk || !diskUsable)
    return false;
  if (std::error_code ec = sys::fs::create_directories(config.directory)) {
    warn(formatv("cache directory '{0}' is unusable ({1}); continuing without "
                 "the disk cache",
                 config.directory, ec.message()));
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
  if (!config.enabled)
    return std::nullopt;
  std::string id = (kind + ":" + key.digest()).str();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = memory.find(id); it != memory.end())
    return it->second;
  if (!config.useDisk || !diskUsable)
    return std::nullopt;
  std::string path = entryPath(kind, key);
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  std::optional<StringRef> payload = unframeCacheEntry((*buffer)->getBuffer());
  if (!payload) {
    warn(formatv("discarding damaged cache entry '{0}' (truncated or "
                 "corrupt); it will be rebuilt",
                 path));
    sys::fs::remove(path);
    return std::nullopt;
  }
  memory[id] = payload->str();
  return payload->str();
}

void CompileCache::store(StringRef kind, const CacheKey &key,
                         StringRef payload) {
  if (!config.enabled)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  memory[(kind + ":" + key.digest()).str()] = payload.str();
  if (!ensureDirectory())
    return;
  std::string path = entryPath(kind, key);
  // writeToOutput writes a temporary and renames it: readers (other
  // processes too) see the old state or the whole entry, never a part.
  if (Error err = writeToOutput(path, [&](raw_ostream &os) {
        os << frameCacheEntry(payload);
        return Error::success();
      }))
    warn(formatv("cannot write cache entry '{0}': {1}; continuing without it",
                 path, toString(std::move(err))));
}

CacheKeyLock::CacheKeyLock() = default;

CacheKeyLock::CacheKeyLock(std::string entryPath) : path(std::move(entryPath)) {
  tryLock();
}

CacheKeyLock::~CacheKeyLock() = default;

void CacheKeyLock::tryLock() {
  manager = std::make_unique<LockFileManager>(path);
  Expected<bool> owned = manager->tryLock();
  if (!owned) {
    // No lock file possible (read-only directory, ...): work alone.
    consumeError(owned.takeError());
    manager.reset();
    state = State::Unavailable;
    return;
  }
  state = *owned ? State::Owned : State::OwnedByOther;
}

void CacheKeyLock::wait(unsigned maxSeconds) {
  if (state != State::OwnedByOther)
    return;
  // Success: the owner finished; otherwise it died or timed out. Either way
  // try again, taking over a stale lock.
  (void)manager->waitForUnlockFor(std::chrono::seconds(maxSeconds));
  tryLock();
}

std::unique_ptr<CacheKeyLock> CompileCache::lock(StringRef kind,
                                                 const CacheKey &key) {
  std::lock_guard<std::mutex> guard(mutex);
  if (!config.enabled || !ensureDirectory())
    return std::make_unique<CacheKeyLock>();
  return std::make_unique<CacheKeyLock>(entryPath(kind, key));
}

std::optional<std::string> CompileCache::getOrCompute(
    StringRef kind, const CacheKey &key,
    function_ref<std::optional<std::string>()> compute, bool &hit) {
  hit = false;
  if (std::optional<std::string> cached = lookup(kind, key)) {
    hit = true;
    return cached;
  }
  std::unique_ptr<CacheKeyLock> keyLock = lock(kind, key);
  while (keyLock->getState() == CacheKeyLock::State::OwnedByOther) {
    // Another process computes this key: wait, then take its result.
    keyLock->wait();
    if (std::optional<std::string> cached = lookup(kind, key)) {
      hit = true;
      return cached;
    }
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
  if (!config.enabled || !config.useDisk)
    return "";
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(slotPath(config.directory, slot));
  if (!buffer)
    return "no earlier compile of this input is recorded";
  Expected<json::Value> previous = json::parse((*buffer)->getBuffer());
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
  if (!config.enabled || !ensureDirectory())
    return;
  std::string text;
  raw_string_ostream(text) << json::Value(key.explain());
  if (Error err = writeToOutput(slotPath(config.directory, slot),
                                [&](raw_ostream &os) {
                                  os << text;
                                  return Error::success();
                                }))
    consumeError(std::move(err));
}

void CompileCache::prune() {
  if (!config.enabled || !config.useDisk || !diskUsable || !config.maxBytes)
    return;
  CachePruningPolicy policy;
  policy.Interval = std::chrono::seconds(0);
  policy.MaxSizeBytes = config.maxBytes;
  pruneCache(config.directory, policy);
}

} // namespace fly
