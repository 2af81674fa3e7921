//===- SweepScheduler.cpp - The largest sweep first on one pool -----------===//

#include "Executor/SweepScheduler.h"

#include "llvm/Support/ThreadPool.h"

#include <cassert>

namespace fly {

SweepScheduler::Queue::Queue(SweepScheduler &scheduler,
                             llvm::ThreadPoolInterface &pool, uint64_t weight)
    : scheduler(scheduler), pool(pool), weight(weight) {
  std::lock_guard<std::mutex> lock(scheduler.mutex);
  scheduler.queues.push_back(this);
}

SweepScheduler::Queue::~Queue() { wait(); }

void SweepScheduler::Queue::add(std::vector<std::function<void()>> tasks) {
  if (tasks.empty())
    return;
  size_t count = tasks.size();
  {
    std::lock_guard<std::mutex> lock(scheduler.mutex);
    assert(!done && "a task added after the queue's wait returned");
    waiting.insert(waiting.end(), std::make_move_iterator(tasks.begin()),
                   std::make_move_iterator(tasks.end()));
    unfinished += count;
  }
  // One pool task per task added: each takes whichever task is next when it
  // starts, so every added task is taken by exactly one of them.
  for (size_t i = 0; i < count; ++i)
    pool.async([&scheduler = scheduler] { scheduler.runNext(); });
}

void SweepScheduler::Queue::wait() {
  std::unique_lock<std::mutex> lock(scheduler.mutex);
  if (done)
    return;
  // A running task adds its successors before it counts as finished, so
  // none is missed here.
  finished.wait(lock, [&] { return unfinished == 0; });
  done = true;
  scheduler.queues.remove(this);
}

size_t SweepScheduler::getWaitingCount() {
  std::lock_guard<std::mutex> lock(mutex);
  size_t count = 0;
  for (const Queue *queue : queues)
    count += queue->waiting.size();
  return count;
}

void SweepScheduler::runNext() {
  Queue *next = nullptr;
  std::function<void()> task;
  {
    std::lock_guard<std::mutex> lock(mutex);
    // The first of the heaviest.
    for (Queue *queue : queues)
      if (!queue->waiting.empty() && (!next || queue->weight > next->weight))
        next = queue;
    if (!next)
      return;
    task = std::move(next->waiting.front());
    next->waiting.pop_front();
  }
  task();
  task = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  // Notified under the lock: wait() may return, and its queue go, as soon
  // as the lock is released.
  if (--next->unfinished == 0)
    next->finished.notify_all();
}

} // namespace fly
