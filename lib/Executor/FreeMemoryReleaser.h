//===- FreeMemoryReleaser.h - Heap pages back to the system -----*- C++ -*-===//
//
// Each pool thread allocates from its own glibc arena, which never reuses
// what phase 1 or another thread freed, so without trimming the peak RSS of
// a big sweep is the sum of every arena's high-water mark. A trim locks
// every arena in turn and drops pages from every thread's TLB: trimming
// after every variant made sixteen threads that finish together wait on each
// other's trims. One trim at a time (a thread that finds one running skips
// its own), at most one per `threads` finished variants, and none once no
// variant is left to reuse the pages: each thread's arena then holds at most
// one finished variant's garbage, and the last variant's thread does not
// trim while the results wait for it.
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

/// Makes the allocator grow a thread's heap in large steps, once per
/// process. glibc grows a thread's arena by what each allocation lacks, with
/// an mprotect that holds the process's memory-map lock for writing: threads
/// compiling their first variants at once wait on each other's thousands of
/// small steps, which separate processes do not. Leaves the allocator as it
/// is where the user tuned it (GLIBC_TUNABLES, MALLOC_*_).
void growHeapsInLargeSteps();

class FreeMemoryReleaser {
public:
  explicit FreeMemoryReleaser(std::function<void()> trim)
      : trim(std::move(trim)) {}

  /// A variant was handed to a pool.
  void variantQueued() { ++unfinished; }

  /// A queued variant finished on a pool of `threads` threads. `mayTrim`
  /// false: it did not run, or crashed and its heap is not to be walked.
  void variantFinished(unsigned threads, bool mayTrim = true) {
    bool othersLeft = unfinished.fetch_sub(1) > 1;
    if (!mayTrim)
      return;
    if (finishedSinceTrim.fetch_add(1) + 1 < threads || !othersLeft)
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
  std::atomic<unsigned> unfinished{0};
};

} // namespace fly

#endif // FLY_EXECUTOR_FREEMEMORYRELEASER_H
