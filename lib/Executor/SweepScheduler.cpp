//===- SweepScheduler.cpp - The largest sweep first on one pool -----------===//

#include "Executor/SweepScheduler.h"

#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <optional>

namespace fly {

SweepScheduler::Expectation::Expectation(SweepScheduler &scheduler,
                                         uint64_t size)
    : scheduler(scheduler) {
  std::lock_guard<std::mutex> lock(scheduler.mutex);
  position = scheduler.expected.insert(size);
}

SweepScheduler::Expectation::~Expectation() { end(); }

void SweepScheduler::Expectation::end() {
  std::lock_guard<std::mutex> lock(scheduler.mutex);
  if (ended)
    return;
  ended = true;
  scheduler.endExpectation(position);
}

void SweepScheduler::endExpectation(
    std::multiset<uint64_t>::iterator position) {
  expected.erase(position);
  changed.notify_all();
}

std::unique_ptr<SweepScheduler::Expectation>
SweepScheduler::expect(uint64_t size) {
  return std::make_unique<Expectation>(*this, size);
}

bool SweepScheduler::isHeld(const Sweep &sweep) const {
  return !expected.empty() && *expected.rbegin() > sweep.size &&
         Clock::now() < sweep.heldUntil;
}

void SweepScheduler::run(llvm::ThreadPoolInterface &pool,
                         std::vector<std::function<void()>> tasks,
                         uint64_t weight, uint64_t size,
                         Clock::duration holdLimit, Expectation *expected) {
  if (tasks.empty()) {
    if (expected)
      expected->end();
    return;
  }
  Sweep sweep;
  size_t count = tasks.size();
  {
    std::lock_guard<std::mutex> lock(mutex);
    sweep.waiting.assign(std::make_move_iterator(tasks.begin()),
                         std::make_move_iterator(tasks.end()));
    sweep.unfinished = count;
    sweep.weight = weight;
    sweep.size = size;
    sweep.heldUntil = Clock::now() + holdLimit;
    sweeps.push_back(&sweep);
    changed.notify_all();
  }
  // Queued: a thread that takes a task of a smaller kernel now finds this
  // one first.
  if (expected)
    expected->end();
  // One pool task per task queued: each takes whichever task is next when it
  // starts, so every queued task is taken by exactly one of them.
  for (size_t i = 0; i < count; ++i)
    pool.async([this] { runNext(); });
  std::unique_lock<std::mutex> lock(mutex);
  sweep.finished.wait(lock, [&] { return sweep.unfinished == 0; });
  sweeps.remove(&sweep);
}

size_t SweepScheduler::getWaitingCount() {
  std::lock_guard<std::mutex> lock(mutex);
  size_t count = 0;
  for (const Sweep *sweep : sweeps)
    count += sweep->waiting.size();
  return count;
}

void SweepScheduler::runNext() {
  Sweep *next = nullptr;
  std::function<void()> task;
  {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      // The first of the heaviest not held; else wait for the first hold to
      // end, or for a change.
      next = nullptr;
      std::optional<Clock::time_point> firstRelease;
      for (Sweep *sweep : sweeps) {
        if (sweep->waiting.empty())
          continue;
        if (isHeld(*sweep)) {
          firstRelease = std::min(firstRelease.value_or(sweep->heldUntil),
                                  sweep->heldUntil);
          continue;
        }
        if (!next || sweep->weight > next->weight)
          next = sweep;
      }
      if (next)
        break;
      if (!firstRelease)
        return;
      changed.wait_until(lock, *firstRelease);
    }
    task = std::move(next->waiting.front());
    next->waiting.pop_front();
  }
  task();
  task = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  // Notified under the lock: run() may return, and its sweep go, as soon
  // as the lock is released.
  if (--next->unfinished == 0)
    next->finished.notify_all();
}

} // namespace fly
