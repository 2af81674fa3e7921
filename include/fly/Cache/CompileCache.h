//===- CompileCache.h - Memory + disk cache of compile stages ---*- C++ -*-===//
//
// Entries live in memory and under FLY_CACHE_DIR (default
// $XDG_CACHE_HOME/fly-snapshot). On disk each entry is one file, written to a
// temporary and renamed into place, framed with a magic, its length and an
// xxh3 checksum: a truncated or garbage entry is discarded with a warning and
// rebuilt, never trusted. A lock file per key makes N processes that miss the
// same key compute it once. FLY_ENABLE_CACHE=0 turns both levels off.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_CACHE_COMPILECACHE_H
#define FLY_CACHE_COMPILECACHE_H

#include "fly/Cache/CacheKey.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class LockFileManager;
} // namespace llvm

namespace fly {

/// A per-key lock shared with other processes (a LockFileManager lock file
/// beside the entry). Released when destroyed; a lock whose owner died is
/// taken over.
class CacheKeyLock {
public:
  enum class State {
    Owned,        // We compute the entry.
    OwnedByOther, // Another process computes it: wait(), then look it up.
    Unavailable,  // No lock possible (cache off, directory unusable).
  };
  explicit CacheKeyLock(std::string entryPath);
  CacheKeyLock(); // Unavailable.
  ~CacheKeyLock();

  State getState() const { return state; }
  /// Waits for the other owner to finish (at most `maxSeconds`). Afterwards
  /// the lock is tried again: the state says whether it is now ours.
  void wait(unsigned maxSeconds = 600);

private:
  void tryLock();

  std::string path;
  std::unique_ptr<llvm::LockFileManager> manager;
  State state = State::Unavailable;
};

struct CacheConfig {
  bool enabled = true;
  bool useDisk = true;
  std::string directory;
  /// Disk size cap enforced by pruning; 0 = no cap.
  uint64_t maxBytes = 2ull << 30;

  /// FLY_ENABLE_CACHE, FLY_CACHE_DIR, XDG_CACHE_HOME, FLY_CACHE_MAX_MB.
  static CacheConfig fromEnvironment();
};

class CompileCache {
public:
  explicit CompileCache(CacheConfig config);

  bool enabled() const { return config.enabled; }
  const CacheConfig &getConfig() const { return config; }

  /// The payload stored under (kind, key), if present and intact.
  std::optional<std::string> lookup(llvm::StringRef kind, const CacheKey &key);
  void store(llvm::StringRef kind, const CacheKey &key,
             llvm::StringRef payload);

  /// Takes the per-key lock of (kind, key).
  std::unique_ptr<CacheKeyLock> lock(llvm::StringRef kind, const CacheKey &key);

  /// Looks up (kind, key); on a miss computes it under a per-key lock shared
  /// with other processes, so concurrent misses compute once. `compute`
  /// returns nullopt on failure (nothing is stored). `hit` says whether the
  /// payload came from the cache.
  std::optional<std::string>
  getOrCompute(llvm::StringRef kind, const CacheKey &key,
               llvm::function_ref<std::optional<std::string>()> compute,
               bool &hit);

  /// Which key parts differ from the last entry stored for `slot` (e.g. the
  /// input file and chip); "" when nothing is known.
  std::string explainMiss(llvm::StringRef slot, const CacheKey &key);
  /// Remembers `key` as the latest for `slot`, for explainMiss.
  void recordSlot(llvm::StringRef slot, const CacheKey &key);

  /// Warnings (damaged entries, unusable directory) since the last call.
  std::vector<std::string> takeWarnings();

  /// Applies the size cap.
  void prune();

private:
  std::string entryPath(llvm::StringRef kind, const CacheKey &key) const;
  void warn(std::string message);
  bool ensureDirectory();

  CacheConfig config;
  std::mutex mutex;
  llvm::StringMap<std::string> memory;
  std::vector<std::string> warnings;
  bool diskUsable = true;
};

/// Frames `payload` for disk, and checks and unframes it.
std::string frameCacheEntry(llvm::StringRef payload);
std::optional<llvm::StringRef> unframeCacheEntry(llvm::StringRef data);

} // namespace fly

#endif // FLY_CACHE_COMPILECACHE_H
