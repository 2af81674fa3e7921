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
// The largest kernel's phase 1 also ends last: its variants are queued once
// the small kernels' have taken every thread, and those that still run then
// (the larger of the small kernels') delay some of them by a whole variant.
// So while a kernel is in phase 1 (expect), the tasks of smaller kernels
// wait for it, each at most its own hold limit: long enough for a kernel a
// few times larger to end its phase 1, short enough that a long one leaves
// the threads idle no longer than that. The isolated executor opens
// expectations only with FLY_HOLD_FOR_LARGER_KERNELS=1 (unmeasured on the
// 16-core node so far).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_SWEEPSCHEDULER_H
#define FLY_EXECUTOR_SWEEPSCHEDULER_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

namespace fly {

class SweepScheduler {
public:
  using Clock = std::chrono::steady_clock;

  /// A kernel of `size` in phase 1 (Expectation::end when it is over).
  class Expectation {
  public:
    Expectation(SweepScheduler &scheduler, uint64_t size);
    ~Expectation();
    /// Idempotent.
    void end();

  private:
    SweepScheduler &scheduler;
    std::multiset<uint64_t>::iterator position;
    bool ended = false;
  };
  std::unique_ptr<Expectation> expect(uint64_t size);

  /// Runs every task of `tasks` once on `pool`, beside the tasks of other
  /// calls on the same scheduler; returns once all have returned. A free
  /// thread takes the first waiting task of the call with the largest
  /// `weight` (the estimated cost of one of its tasks) among those with
  /// tasks waiting, the earliest call among equals; while an expectation of
  /// a larger `size` than that call's is open, it waits, until `holdLimit`
  /// after this call. `expected`, if given, ends as the tasks are queued.
  /// `pool` must be the same for every call.
  void run(llvm::ThreadPoolInterface &pool,
           std::vector<std::function<void()>> tasks, uint64_t weight,
           uint64_t size = 0, Clock::duration holdLimit = {},
           Expectation *expected = nullptr);
  /// Tasks queued by run() that no thread has taken yet.
  size_t getWaitingCount();

private:
  struct Sweep {
    std::deque<std::function<void()>> waiting;
    size_t unfinished = 0;
    uint64_t weight = 0;
    uint64_t size = 0;
    Clock::time_point heldUntil;
    std::condition_variable finished;
  };
  void runNext();
  /// Under the lock.
  bool isHeld(const Sweep &sweep) const;
  void endExpectation(std::multiset<uint64_t>::iterator position);

  std::mutex mutex;
  /// In the order of their run() calls.
  std::list<Sweep *> sweeps;
  /// The sizes of the kernels in phase 1.
  std::multiset<uint64_t> expected;
  /// A sweep queued or an expectation ended: held threads look again.
  std::condition_variable changed;
};

} // namespace fly

#endif // FLY_EXECUTOR_SWEEPSCHEDULER_H
