//===- FreeMemoryReleaser.h - Heap pages back to the system -----*- C++ -*-===//
//
// Each pool thread allocates from its own glibc arena, which never reuses
// what phase 1 or another thread freed, so without trimming the peak RSS of
// a big sweep is the sum of every arena's high-water mark. A trim locks
// every arena in turn and drops pages from every thread's TLB: trimming
// after every variant made sixteen threads that finish together wait on each
// other's trims. One trim at a time (a thread that finds one running skips
// its own), and at most one per `threads` finished variants: each thread's
// arena then holds at most one finished variant's garbage.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_FREEMEMORYRELEASER_H
#define FLY_EXECUTOR_FREEMEMORYRELEASER_H

#include <atomic>
#include <functional>
#include <mutex>

namespace fly {

/// Gives the allocator's free pages back to the system (malloc_trim).
void releaseFreeHeapPages();

class FreeMemoryReleaser {
public:
  explicit FreeMemoryReleaser(std::function<void()> trim)
      : trim(std::move(trim)) {}

  /// A variant finished on a pool of `threads` threads.
  void variantFinished(unsigned threads) {
    if (finishedSinceTrim.fetch_add(1) + 1 < threads)
      return;
    tryTrim();
  }

  /// Before a plan's replays: what phase 1 freed.
  void planStarting() { tryTrim(); }

private:
  void tryTrim() {
    std::unique_lock<std::mutex> lock(mutex, std::try_to_lock);
    if (!lock.owns_lock())
      return;
    finishedSinceTrim = 0;
    trim();
  }

  std::function<void()> trim;
  std::mutex mutex;
  std::atomic<unsigned> finishedSinceTrim{0};
};

} // namespace fly

#endif // FLY_EXECUTOR_FREEMEMORYRELEASER_H
