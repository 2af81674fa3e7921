//===- SweepScheduler.cpp - The largest sweep first on one pool -----------===//

#include "Executor/SweepScheduler.h"

#include "llvm/ADT/STLExtras.h"
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
  // starts (none where a helper took it), so every added task is taken by
  // exactly one of them or a helper.
  for (size_t i = 0; i < count; ++i)
    pool.async([&scheduler = scheduler] { scheduler.runNext(); });
  std::lock_guard<std::mutex> lock(scheduler.mutex);
  scheduler.startHelpers();
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

SweepScheduler::Queue *SweepScheduler::takeNext(std::function<void()> &task) {
  Queue *next = nullptr;
  // The first of the heaviest.
  for (Queue *queue : queues)
    if (!queue->waiting.empty() && (!next || queue->weight > next->weight))
      next = queue;
  if (!next)
    return nullptr;
  task = std::move(next->waiting.front());
  next->waiting.pop_front();
  return next;
}

void SweepScheduler::finish(Queue *queue) {
  std::lock_guard<std::mutex> lock(mutex);
  // Notified under the lock: wait() may return, and its queue go, as soon
  // as the lock is released.
  if (--queue->unfinished == 0)
    queue->finished.notify_all();
}

void SweepScheduler::runNext() {
  std::function<void()> task;
  Queue *next;
  {
    std::lock_guard<std::mutex> lock(mutex);
    next = takeNext(task);
  }
  if (!next)
    return;
  task();
  task = nullptr;
  finish(next);
}

SweepScheduler::~SweepScheduler() {
  std::list<std::thread> started;
  {
    std::lock_guard<std::mutex> lock(mutex);
    started = std::move(helpers);
  }
  for (std::thread &helper : started)
    helper.join();
}

void SweepScheduler::lend() {
  std::lock_guard<std::mutex> lock(mutex);
  ++lent;
  startHelpers();
}

void SweepScheduler::reclaim() {
  std::lock_guard<std::mutex> lock(mutex);
  --lent;
}

void SweepScheduler::startHelpers() {
  // An ended helper only releases the lock and returns: joined under it.
  for (std::thread::id id : ended)
    for (auto it = helpers.begin(); it != helpers.end(); ++it)
      if (it->get_id() == id) {
        it->join();
        helpers.erase(it);
        break;
      }
  ended.clear();
  if (llvm::none_of(queues,
                    [](const Queue *queue) { return !queue->waiting.empty(); }))
    return;
  // At most as many helpers as the pool has threads: places lent beyond
  // that stay idle (a wait ends once a state is made).
  size_t most = queues.front()->pool.getMaxConcurrency();
  while (helping < lent && helping < most) {
    ++helping;
    helpers.emplace_back([this] { help(); });
  }
}

void SweepScheduler::help() {
  for (;;) {
    std::function<void()> task;
    Queue *next;
    {
      std::lock_guard<std::mutex> lock(mutex);
      next = helping > lent ? nullptr : takeNext(task);
      if (!next) {
        --helping;
        ended.push_back(std::this_thread::get_id());
        return;
      }
    }
    task();
    task = nullptr;
    finish(next);
  }
}

} // namespace fly
