//===- SweepScheduler.h - The largest sweep first on one pool ---*- C++ -*-===//
//
// The kernels of one fly-tune sweep replay on one pool, each kernel's tasks
// queued as soon as its phase 1 ends, so the kernel that comes first is the
// one whose phase 1 was shortest, and the largest comes last. First come,
// first served, the largest kernel's variants then start last and end the
// sweep on their own: its span is one of them, on threads that have nothing
// else left to take. Here a free thread takes the next task of the largest
// sweep waiting (by what its caller estimates a task costs), so the small
// kernels' variants fill the threads at the end instead (longest processing
// time first).
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
  /// Runs every task of `tasks` once on `pool`, beside the tasks of other
  /// calls on the same scheduler; returns once all have returned. A free
  /// thread takes the first waiting task of the call with the largest
  /// `weight` (the estimated cost of one of its tasks) among those with
  /// tasks waiting, the earliest call among equals. `pool` must be the same
  /// for every call.
  void run(llvm::ThreadPoolInterface &pool,
           std::vector<std::function<void()>> tasks, uint64_t weight);
  /// Tasks queued by run() that no thread has taken yet.
  size_t getWaitingCount();

private:
  struct Sweep {
    std::deque<std::function<void()>> waiting;
    size_t unfinished = 0;
    uint64_t weight = 0;
    std::condition_variable finished;
  };
  void runNext();

  std::mutex mutex;
  /// In the order of their run() calls.
  std::list<Sweep *> sweeps;
};

} // namespace fly

#endif // FLY_EXECUTOR_SWEEPSCHEDULER_H
