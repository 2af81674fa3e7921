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
#include "llvm/Support/Error.h"

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
/// taken over. The locks this process holds are kept in a process-wide
/// registry: a key this process already holds (another thread, a repeated
/// hint set) is never waited on, and a lock file naming this process that
/// the registry does not know (left by a killed process whose pid this one
/// reuses, as in containers) is stale and taken over.
class CacheKeyLock {
public:
  enum class State {
    Owned,        // We compute the entry.
    OwnedByOther, // Another process computes it: wait(), then look it up.
    Unavailable,  // No lock (cache off, directory unusable, held by this
                  // process, or waiting timed out): compute without it.
  };
  /// FLY_CACHE_LOCK_TIMEOUT's default, in seconds.
  static constexpr unsigned kDefaultTimeoutSeconds = 120;

  explicit CacheKeyLock(std::string entryPath,
                        unsigned timeoutSeconds = kDefaultTimeoutSeconds);
  CacheKeyLock(); // Unavailable.
  ~CacheKeyLock();

  State getState() const { return state; }
  /// Waits for the other owner to finish, saying on stderr who holds the
  /// lock (pid, host) and for how long, at most `maxSeconds` (default: the
  /// timeout given at construction). Afterwards the lock is tried again: the
  /// state says whether it is now ours; after a timeout it is Unavailable
  /// (compute without the lock).
  void wait(std::optional<unsigned> maxSeconds = std::nullopt);

  /// wait() for all of `locks` at once: each that another process holds is
  /// polled until it is released or its timeout passes, so N held keys take
  /// as long as the slowest, not the sum. `ready(i)` is called as lock i is
  /// settled (now Owned, or Unavailable), in the order they settle.
  static void waitAll(llvm::ArrayRef<CacheKeyLock *> locks,
                      std::optional<unsigned> maxSeconds = std::nullopt,
                      llvm::function_ref<void(size_t)> ready = nullptr);

  /// FLY_CACHE_LOCK_TIMEOUT: whole seconds, 0-86400. A malformed value is
  /// an error (the caller warns and uses the default).
  static llvm::Expected<unsigned> timeoutFromEnvironment();

private:
  void tryLock();
  void release();
  /// Whether the lock file is gone or names a process of this host that no
  /// longer runs (non-blocking).
  bool mayBeFree() const;
  std::string describeOwner() const;

  std::string path;
  std::unique_ptr<llvm::LockFileManager> manager;
  State state = State::Unavailable;
  unsigned timeoutSeconds = kDefaultTimeoutSeconds;
};

struct CacheConfig {
  bool enabled = true;
  bool useDisk = true;
  std::string directory;
  /// Disk size cap enforced by pruning; 0 = no cap.
  uint64_t maxBytes = 2ull << 30;
  /// Never use an entry (compile everything) but still write them, like
  /// TRITON_ALWAYS_COMPILE.
  bool alwaysCompile = false;

  /// FLY_ENABLE_CACHE, FLY_ALWAYS_COMPILE, FLY_CACHE_DIR, XDG_CACHE_HOME,
  /// FLY_CACHE_MAX_MB; a value that means nothing is a warning.
  static CacheConfig fromEnvironment();
};

class CompileCache {
public:
  explicit CompileCache(CacheConfig config);

  bool enabled() const { return config.enabled && !bypassed; }
  /// Leaves the cache alone (no lookup, no store) until called with false:
  /// for a compile whose inputs the key cannot cover.
  void setBypassed(bool bypass) { bypassed = bypass; }
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
  /// getOrCompute once its lookup missed: under the key's lock, what another
  /// process stored in the meantime is read, not computed again.
  std::optional<std::string>
  computeAfterMiss(llvm::StringRef kind, const CacheKey &key,
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
  bool bypassed = false;
  unsigned lockTimeoutSeconds = CacheKeyLock::kDefaultTimeoutSeconds;
};

/// The parts of a disk entry: the key it was stored under
/// ("<kind>:<digest>"), the toolchain that wrote it, and the payload.
struct CacheEntryFrame {
  llvm::StringRef key;
  llvm::StringRef toolchain;
  llvm::StringRef payload;
};

/// Frames `payload` for disk under `key` ("<kind>:<digest>", no newline)
/// with `toolchain` (default: getToolchainFingerprint()); the checksum
/// covers key, toolchain and payload.
std::string frameCacheEntry(llvm::StringRef key, llvm::StringRef payload,
                            std::optional<llvm::StringRef> toolchain = {});
/// Checks a frame (magic, length, checksum) and splits it.
std::optional<CacheEntryFrame> unframeCacheEntry(llvm::StringRef data);

/// The largest disk entry read (1 GiB): larger files are refused unread.
constexpr uint64_t kMaxCacheEntryBytes = 1ull << 30;

} // namespace fly

#endif // FLY_CACHE_COMPILECACHE_H
