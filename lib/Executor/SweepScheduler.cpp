//===- SweepScheduler.cpp - The largest sweep first on one pool -----------===//

#include "Executor/SweepScheduler.h"

#include "llvm/Support/ThreadPool.h"

namespace fly {

void SweepScheduler::run(llvm::ThreadPoolInterface &pool,
                         std::vector<std::function<void()>> tasks,
                         uint64_t weight) {
  if (tasks.empty())
    return;
  Sweep sweep;
  size_t count = tasks.size();
  {
    std::lock_guard<std::mutex> lock(mutex);
    sweep.waiting.assign(std::make_move_iterator(tasks.begin()),
                         std::make_move_iterator(tasks.end()));
    sweep.unfinished = count;
    sweep.weight = weight;
    sweeps.push_back(&sweep);
  }
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
    std::lock_guard<std::mutex> lock(mutex);
    // The first of the heaviest.
    for (Sweep *sweep : sweeps)
      if (!sweep->waiting.empty() && (!next || sweep->weight > next->weight))
        next = sweep;
    if (!next)
      return;
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
