//===- KernelTurnsTest.cpp - The kernels of a sweep take turns ------------===//

#include "Executor/KernelTurns.h"

#include "gtest/gtest.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace fly;

namespace {
/// Tasks that say when they start and run until released.
struct Recorder {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> started;
  bool released = false;

  std::function<void()> task(std::string name) {
    return [this, name] {
      std::unique_lock<std::mutex> lock(mutex);
      started.push_back(name);
      changed.notify_all();
      changed.wait(lock, [&] { return released; });
    };
  }
  std::vector<std::function<void()>> tasks(const std::string &kernel, int n) {
    std::vector<std::function<void()>> out;
    for (int i = 0; i < n; ++i)
      out.push_back(task(kernel + std::to_string(i)));
    return out;
  }
  /// Until `n` tasks have started.
  void awaitStarted(size_t n) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return started.size() >= n; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    released = true;
    changed.notify_all();
  }
};
} // namespace

TEST(KernelTurnsTest, ThreadsSpreadOverTheKernels) {
  KernelTurns turns;
  Recorder recorder;
  KernelTurns::Kernel a, b, c;
  turns.queue(a, recorder.tasks("a", 4));
  turns.queue(b, recorder.tasks("b", 4));
  turns.queue(c, recorder.tasks("c", 1));
  // Five workers, one after another: each takes the kernel with the fewest
  // running, the earliest queued on ties.
  std::vector<std::thread> workers;
  for (size_t i = 1; i <= 5; ++i) {
    workers.emplace_back([&] { turns.runNext(); });
    recorder.awaitStarted(i);
  }
  EXPECT_EQ(recorder.started,
            (std::vector<std::string>{"a0", "b0", "c0", "a1", "b1"}));
  recorder.release();
  for (std::thread &worker : workers)
    worker.join();
  turns.wait(c);
  // What is left runs in turns, one kernel's tasks in their order.
  for (int i = 0; i < 4; ++i)
    turns.runNext();
  turns.wait(a);
  turns.wait(b);
  EXPECT_EQ(recorder.started,
            (std::vector<std::string>{"a0", "b0", "c0", "a1", "b1", "a2", "a3",
                                      "b2", "b3"}));
}

TEST(KernelTurnsTest, OneWorkerKeepsTheQueueOrder) {
  KernelTurns turns;
  std::vector<std::string> ran;
  KernelTurns::Kernel a, b;
  turns.queue(a, {[&] { ran.push_back("a0"); }, [&] { ran.push_back("a1"); }});
  turns.queue(b, {[&] { ran.push_back("b0"); }});
  turns.queue(a, {[&] { ran.push_back("a2"); }});
  for (int i = 0; i < 4; ++i)
    turns.runNext();
  turns.wait(a);
  turns.wait(b);
  EXPECT_EQ(ran, (std::vector<std::string>{"a0", "a1", "a2", "b0"}));
  // Nothing waits: a call runs nothing.
  turns.runNext();
  EXPECT_EQ(ran.size(), 4u);
}

TEST(KernelTurnsTest, WaitReturnsOnceTheKernelsTasksRan) {
  KernelTurns turns;
  Recorder recorder;
  KernelTurns::Kernel a, b;
  turns.queue(a, recorder.tasks("a", 2));
  turns.queue(b, recorder.tasks("b", 1));
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; ++i)
    workers.emplace_back([&] { turns.runNext(); });
  recorder.awaitStarted(3);
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    turns.wait(a);
    waited = true;
  });
  // Every task still runs: the waiter cannot have returned.
  EXPECT_FALSE(waited.load());
  recorder.release();
  waiter.join();
  EXPECT_TRUE(waited.load());
  for (std::thread &worker : workers)
    worker.join();
  turns.wait(b);
}
