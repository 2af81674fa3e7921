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

void SweepScheduler::Queue::holdBack() {
  std::lock_guard<std::mutex> lock(scheduler.mutex);
  ++holds;
}

void SweepScheduler::Queue::letGo() {
  std::lock_guard<std::mutex> lock(scheduler.mutex);
  assert(holds && "let go more often than held back");
  --holds;
}

void SweepScheduler::Queue::openHeldBack() {
  std::lock_guard<std::mutex> lock(scheduler.mutex);
  assert(!unfinished && "a queue opened held back after a task was added");
  opensHeldBack = true;
}

void SweepScheduler::Queue::letGoOpening() {
  std::lock_guard<std::mutex> lock(scheduler.mutex);
  if (!openingHeld)
    return;
  openingHeld = false;
  --holds;
}

size_t SweepScheduler::getWaitingCount() {
  std::lock_guard<std::mutex> lock(mutex);
  size_t count = 0;
  for (const Queue *queue : queues)
    count += queue->waiting.size();
  return count;
}

SweepScheduler::Queue *SweepScheduler::takeNext(std::function<void()> &task,
                                                bool &opens) {
  Queue *next = nullptr;
  // The first of the heaviest not held back, else the first of the lightest.
  auto goesBefore = [](const Queue &queue, const Queue &other) {
    if (bool(queue.holds) != bool(other.holds))
      return !queue.holds;
    return queue.holds ? queue.weight < other.weight
                       : queue.weight > other.weight;
  };
  for (Queue *queue : queues)
    if (!queue->waiting.empty() && (!next || goesBefore(*queue, *next)))
      next = queue;
  if (!next)
    return nullptr;
  task = std::move(next->waiting.front());
  next->waiting.pop_front();
  opens = next->opensHeldBack;
  if (opens) {
    next->opensHeldBack = false;
    next->openingHeld = true;
    ++next->holds;
  }
  return next;
}

void SweepScheduler::finish(Queue *queue, bool opened) {
  if (opened)
    queue->letGoOpening();
  std::lock_guard<std::mutex> lock(mutex);
  // Notified under the lock: wait() may return, and its queue go, as soon
  // as the lock is released.
  if (--queue->unfinished == 0)
    queue->finished.notify_all();
}

void SweepScheduler::runNext() {
  std::function<void()> task;
  Queue *next;
  bool opens = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    next = takeNext(task, opens);
  }
  if (!next)
    return;
  task();
  task = nullptr;
  finish(next, opens);
}

} // namespace fly
