//===- SweepScheduler.h - Sweeps sharing one thread pool in turn -*- C++ -*-===//
//
// The kernels of one fly-tune sweep replay on one pool, each kernel's tasks
// queued as soon as its phase 1 ends. First come, first served, the kernel
// that comes first takes every free thread: with as many variants as
// threads, all of them start before any has ended, so none continues what
// another kept (RocdlSharedCodegen.h), and the next kernel's do the same.
// Here a free thread takes the next task of the sweep with the fewest
// running, so the kernels queued together share the threads and each
// kernel's later variants start after its first have kept something.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_SWEEPSCHEDULER_H
#define FLY_EXECUTOR_SWEEPSCHEDULER_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <vector>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

namespace fly {

class SweepScheduler {
public:
  /// Runs every task of `tasks` once on `pool`, taking turns with the tasks
  /// of other calls on the same scheduler; returns once all have returned.
  /// Of the sweeps with tasks waiting, a free thread takes the first waiting
  /// task of the one with the fewest running, then the most waiting, then
  /// the one that came first. `pool` must be the same for every call.
  void run(llvm::ThreadPoolInterface &pool,
           std::vector<std::function<void()>> tasks);
  /// Tasks queued by run() that no thread has taken yet.
  size_t getWaitingCount();

private:
  struct Sweep {
    std::deque<std::function<void()>> waiting;
    unsigned running = 0;
    size_t unfinished = 0;
    uint64_t arrival = 0;
    std::condition_variable finished;
  };
  void runNext();

  std::mutex mutex;
  std::list<Sweep *> sweeps;
  uint64_t arrivals = 0;
};

} // namespace fly

#endif // FLY_EXECUTOR_SWEEPSCHEDULER_H
