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
// A kernel's tasks are queued as they become ready: a variant that only
// assembles a shared ISA as soon as that ISA is compiled, not once every
// ISA of its kernel is.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_SWEEPSCHEDULER_H
#define FLY_EXECUTOR_SWEEPSCHEDULER_H

#include "fly/Backend/VariantQueue.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

namespace fly {

/// A task that waits for another's work may lend its thread's place
/// (ThreadLender): while it is lent, a helper thread takes the next waiting
/// tasks, one at a time, so that as many threads as the pool has compute.
/// Helpers are at most as many as the pool's threads; a task that ends its
/// wait computes beside the helper until that one's task ends.
class SweepScheduler : public ThreadLender {
public:
  SweepScheduler() = default;
  /// Joins the helper threads.
  ~SweepScheduler() override;
  void lend() override;
  void reclaim() override;
  /// One sweep's tasks, run on `pool` beside those of the scheduler's other
  /// queues. A free thread takes the first waiting task of the queue with
  /// the largest `weight` (the estimated cost of one of its tasks) among
  /// those with tasks waiting, the earliest made among equals. `pool` must
  /// be the same for every queue of a scheduler.
  class Queue {
  public:
    Queue(SweepScheduler &scheduler, llvm::ThreadPoolInterface &pool,
          uint64_t weight);
    /// Waits for every task added.
    ~Queue();
    Queue(const Queue &) = delete;
    Queue &operator=(const Queue &) = delete;

    /// From the caller, or from one of this queue's tasks while it runs (the
    /// tasks it makes ready); each runs once.
    void add(std::vector<std::function<void()>> tasks);
    /// Returns once every task added has returned; nothing is added after.
    void wait();

  private:
    friend class SweepScheduler;
    SweepScheduler &scheduler;
    llvm::ThreadPoolInterface &pool;
    std::deque<std::function<void()>> waiting;
    size_t unfinished = 0;
    uint64_t weight = 0;
    bool done = false;
    std::condition_variable finished;
  };

  /// Tasks added to queues that no thread has taken yet.
  size_t getWaitingCount();

private:
  void runNext();
  /// The first waiting task of the heaviest queue, taken, and its queue;
  /// null where none waits. Under the lock.
  Queue *takeNext(std::function<void()> &task);
  /// After a task of `queue` returned.
  void finish(Queue *queue);
  /// Helpers while fewer help than places are lent and a task waits.
  /// Under the lock.
  void startHelpers();
  void help();

  std::mutex mutex;
  /// In the order they were made.
  std::list<Queue *> queues;
  size_t lent = 0;
  size_t helping = 0;
  std::list<std::thread> helpers;
  /// Helpers that returned, joined by the next startHelpers (a long-lived
  /// executor, the C API's, lends again and again).
  std::vector<std::thread::id> ended;
};

} // namespace fly

#endif // FLY_EXECUTOR_SWEEPSCHEDULER_H
