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
#include <vector>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

namespace fly {

/// A queue is held back while one of its tasks makes what its other tasks
/// had better start after (VariantQueue.h's SweepHold): a free thread takes
/// the next task of the heaviest queue not held back, and only where every
/// queue with tasks waiting is held back, the next of the lightest of those
/// (a task taken from a held-back queue does without what is being made,
/// and the lightest loses least by it). A queue may open held back: from
/// when its first task is taken until that task lets go (letGoOpening) or
/// returns.
class SweepScheduler {
public:
  SweepScheduler() = default;
  /// One sweep's tasks, run on `pool` beside those of the scheduler's other
  /// queues. A free thread takes the first waiting task of the queue with
  /// the largest `weight` (the estimated cost of one of its tasks) among
  /// those with tasks waiting, the earliest made among equals. `pool` must
  /// be the same for every queue of a scheduler.
  class Queue : public SweepHold {
  public:
    Queue(SweepScheduler &scheduler, llvm::ThreadPoolInterface &pool,
          uint64_t weight);
    /// Waits for every task added.
    ~Queue() override;
    Queue(const Queue &) = delete;
    Queue &operator=(const Queue &) = delete;

    /// From the caller, or from one of this queue's tasks while it runs (the
    /// tasks it makes ready); each runs once.
    void add(std::vector<std::function<void()>> tasks);
    /// Returns once every task added has returned; nothing is added after.
    void wait();
    /// Counted: held back until every holdBack is let go.
    void holdBack() override;
    void letGo() override;
    /// Before any task is added: the first task taken holds the queue back
    /// (one more holdBack) until it lets go, or returns.
    void openHeldBack();
    void letGoOpening() override;

  private:
    friend class SweepScheduler;
    SweepScheduler &scheduler;
    llvm::ThreadPoolInterface &pool;
    std::deque<std::function<void()>> waiting;
    size_t unfinished = 0;
    uint64_t weight = 0;
    size_t holds = 0;
    /// openHeldBack(), and whether the opening hold is still held.
    bool opensHeldBack = false;
    bool openingHeld = false;
    bool done = false;
    std::condition_variable finished;
  };

  /// Tasks added to queues that no thread has taken yet.
  size_t getWaitingCount();

private:
  void runNext();
  /// The first waiting task of the queue to take from next, taken, and its
  /// queue; null where none waits. `opens`: the task is its queue's first
  /// and holds it back (openHeldBack). Under the lock.
  Queue *takeNext(std::function<void()> &task, bool &opens);
  /// After a task of `queue` returned; `opened`: its first (takeNext).
  void finish(Queue *queue, bool opened);

  std::mutex mutex;
  /// In the order they were made.
  std::list<Queue *> queues;
};

} // namespace fly

#endif // FLY_EXECUTOR_SWEEPSCHEDULER_H
