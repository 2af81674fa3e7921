//===- SweepSchedulerTest.cpp - The heaviest sweep first on one pool ------===//

#include "Executor/SweepScheduler.h"

#include "llvm/Support/ThreadPool.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <optional>
#include <set>
#include <string>
#include <thread>

using namespace fly;

namespace {
/// Tasks that say when they started and return only when released, on a
/// pool of `threads`.
class SweepSchedulerTest : public ::testing::Test {
protected:
  void makePool(unsigned threads) {
    pool.emplace(llvm::hardware_concurrency(threads));
  }

  /// A task logging `name`, then held until release(name).
  std::function<void()> held(std::string name) {
    return [this, name] {
      std::unique_lock<std::mutex> lock(mutex);
      started.push_back(name);
      changed.notify_all();
      changed.wait(lock, [&] { return released.count(name) != 0; });
    };
  }
  /// A task logging `name`.
  std::function<void()> logged(std::string name) {
    return [this, name] {
      std::lock_guard<std::mutex> lock(mutex);
      started.push_back(name);
      changed.notify_all();
    };
  }
  void release(const std::string &name) {
    std::lock_guard<std::mutex> lock(mutex);
    released.insert(name);
    changed.notify_all();
  }
  /// Whether `count` tasks started within a minute (a broken scheduler
  /// fails here instead of hanging).
  bool waitForStarted(size_t count) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, std::chrono::minutes(1),
                            [&] { return started.size() >= count; });
  }
  /// Whether `count` tasks are queued and not taken, within a minute.
  bool waitForWaiting(size_t count) {
    for (int i = 0; i < 60000; ++i) {
      if (scheduler.getWaitingCount() == count)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  /// `tasks` on a queue of `weight` made and waited for on a thread of its
  /// own, as a kernel's driver does.
  void runOnThread(std::vector<std::function<void()>> tasks, uint64_t weight) {
    callers.emplace_back([this, weight, tasks = std::move(tasks)]() mutable {
      SweepScheduler::Queue queue(scheduler, *pool, weight);
      queue.add(std::move(tasks));
    });
  }
  void joinCallers() {
    for (std::thread &caller : callers)
      caller.join();
    callers.clear();
  }

  SweepScheduler scheduler;
  std::optional<llvm::DefaultThreadPool> pool;
  std::vector<std::thread> callers;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> started;
  std::set<std::string> released;
};
} // namespace

TEST_F(SweepSchedulerTest, TheHeaviestSweepWaitingGoesFirst) {
  makePool(1);
  runOnThread({held("gate")}, 1);
  ASSERT_TRUE(waitForStarted(1));
  runOnThread({logged("a0"), logged("a1")}, 10);
  ASSERT_TRUE(waitForWaiting(2));
  runOnThread({logged("b0"), logged("b1")}, 300);
  ASSERT_TRUE(waitForWaiting(4));
  runOnThread({logged("c0"), logged("c1")}, 20);
  ASSERT_TRUE(waitForWaiting(6));
  release("gate");
  joinCallers();
  // First come, first served would run a0 a1 b0 b1 c0 c1.
  EXPECT_EQ(started, (std::vector<std::string>{"gate", "b0", "b1", "c0", "c1",
                                               "a0", "a1"}));
}

TEST_F(SweepSchedulerTest, EqualSweepsGoInTheOrderTheyCame) {
  makePool(1);
  runOnThread({held("gate")}, 1);
  ASSERT_TRUE(waitForStarted(1));
  runOnThread({logged("a0"), logged("a1")}, 7);
  ASSERT_TRUE(waitForWaiting(2));
  runOnThread({logged("b0")}, 7);
  ASSERT_TRUE(waitForWaiting(3));
  release("gate");
  joinCallers();
  EXPECT_EQ(started, (std::vector<std::string>{"gate", "a0", "a1", "b0"}));
}

TEST_F(SweepSchedulerTest, AHeavierSweepTakesTheNextFreeThread) {
  // A lighter sweep's task already running keeps its thread; the next free
  // thread goes to the heavier sweep that came meanwhile.
  makePool(2);
  runOnThread({held("gate0"), held("gate1")}, 1);
  ASSERT_TRUE(waitForStarted(2));
  runOnThread({held("a0"), logged("a1")}, 10);
  ASSERT_TRUE(waitForWaiting(2));
  release("gate0");
  ASSERT_TRUE(waitForStarted(3));
  runOnThread({logged("b0"), logged("b1")}, 20);
  ASSERT_TRUE(waitForWaiting(3));
  release("gate1");
  ASSERT_TRUE(waitForStarted(5));
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(started[2], "a0");
    EXPECT_EQ(started[3], "b0");
    EXPECT_EQ(started[4], "b1");
  }
  release("a0");
  joinCallers();
  EXPECT_EQ(started.size(), 6u);
}

TEST_F(SweepSchedulerTest, EveryTaskRunsOnceAndEveryCallReturns) {
  makePool(4);
  constexpr unsigned kCallers = 8, kTasks = 50;
  std::vector<std::atomic<unsigned>> runs(kCallers * kTasks);
  for (unsigned c = 0; c < kCallers; ++c) {
    std::vector<std::function<void()>> tasks;
    for (unsigned t = 0; t < kTasks; ++t)
      tasks.push_back([&runs, i = c * kTasks + t] { ++runs[i]; });
    runOnThread(std::move(tasks), c % 3);
  }
  runOnThread({}, 0);
  joinCallers();
  for (std::atomic<unsigned> &count : runs)
    EXPECT_EQ(count.load(), 1u);
  EXPECT_EQ(scheduler.getWaitingCount(), 0u);
}

TEST_F(SweepSchedulerTest, ATaskAddedByARunningTaskStartsWhileAnotherRuns) {
  // The shared ISA compiles of a kernel: "a" still compiling, "b" done and
  // making its variant "b-variant" ready, which starts on the free thread.
  makePool(2);
  std::optional<SweepScheduler::Queue> queue(std::in_place, scheduler, *pool,
                                             /*weight=*/1);
  queue->add({held("a"), [&] {
                logged("b")();
                queue->add({logged("b-variant")});
              }});
  ASSERT_TRUE(waitForStarted(3));
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(started.back(), "b-variant");
  }
  release("a");
  queue.reset();
  EXPECT_EQ(started.size(), 3u);
  EXPECT_EQ(scheduler.getWaitingCount(), 0u);
}

TEST_F(SweepSchedulerTest, WaitReturnsOnlyOnceTasksAddedByTasksHaveRun) {
  makePool(3);
  std::atomic<unsigned> runs{0};
  SweepScheduler::Queue queue(scheduler, *pool, /*weight=*/0);
  std::function<void(unsigned)> addChain = [&](unsigned depth) {
    queue.add({[&, depth] {
      ++runs;
      if (depth < 20)
        addChain(depth + 1);
    }});
  };
  for (unsigned chain = 0; chain < 4; ++chain)
    addChain(0);
  queue.wait();
  EXPECT_EQ(runs.load(), 4u * 21u);
  EXPECT_EQ(scheduler.getWaitingCount(), 0u);
}

TEST_F(SweepSchedulerTest, TasksAddedLaterQueueBehindTheWaitingOnes) {
  // One thread: the variants a finished ISA compile makes ready wait behind
  // the ISA compiles not yet started (the longest first).
  makePool(1);
  {
    SweepScheduler::Queue queue(scheduler, *pool, /*weight=*/0);
    queue.add({[&] {
                 logged("isa-1")();
                 queue.add({logged("variant-1")});
               },
               logged("isa-2")});
  }
  EXPECT_EQ(started, (std::vector<std::string>{"isa-1", "isa-2", "variant-1"}));
}

TEST_F(SweepSchedulerTest, HeldBackSweepsGoLastTheLightestOfThemFirst) {
  // One thread: the sweeps not held back go first, the heaviest first; then
  // the held-back ones, the lightest first (a task taken from a held-back
  // sweep does without what is being made for it).
  makePool(1);
  SweepScheduler::Queue gate(scheduler, *pool, /*weight=*/1);
  gate.add({held("gate")});
  ASSERT_TRUE(waitForStarted(1));
  SweepScheduler::Queue heavier(scheduler, *pool, /*weight=*/400);
  SweepScheduler::Queue heavy(scheduler, *pool, /*weight=*/300);
  SweepScheduler::Queue light(scheduler, *pool, /*weight=*/10);
  SweepScheduler::Queue middle(scheduler, *pool, /*weight=*/20);
  heavier.holdBack();
  heavy.holdBack();
  heavier.add({logged("heavier")});
  heavy.add({logged("heavy")});
  light.add({logged("light")});
  middle.add({logged("middle")});
  ASSERT_TRUE(waitForWaiting(4));
  release("gate");
  for (SweepScheduler::Queue *queue :
       {&gate, &heavier, &heavy, &light, &middle})
    queue->wait();
  heavier.letGo();
  heavy.letGo();
  EXPECT_EQ(started, (std::vector<std::string>{"gate", "middle", "light",
                                               "heavy", "heavier"}));
}

TEST_F(SweepSchedulerTest, ASweepLetGoTakesItsPlaceAgain) {
  // Held back twice and let go once, the heavy sweep still goes after the
  // lighter ones; let go again, before them.
  makePool(1);
  SweepScheduler::Queue gates(scheduler, *pool, /*weight=*/5);
  SweepScheduler::Queue heavy(scheduler, *pool, /*weight=*/300);
  SweepScheduler::Queue light(scheduler, *pool, /*weight=*/10);
  heavy.holdBack();
  heavy.holdBack();
  heavy.letGo();
  gates.add({held("gate 1")});
  ASSERT_TRUE(waitForStarted(1));
  gates.add({held("gate 2")});
  heavy.add({logged("heavy 1")});
  light.add({logged("light 1")});
  ASSERT_TRUE(waitForWaiting(3));
  release("gate 1");
  ASSERT_TRUE(waitForStarted(3));
  heavy.letGo();
  heavy.add({logged("heavy 2")});
  light.add({logged("light 2")});
  ASSERT_TRUE(waitForWaiting(3));
  release("gate 2");
  for (SweepScheduler::Queue *queue : {&gates, &heavy, &light})
    queue->wait();
  EXPECT_EQ(started,
            (std::vector<std::string>{"gate 1", "light 1", "gate 2", "heavy 1",
                                      "heavy 2", "light 2"}));
}

TEST_F(SweepSchedulerTest, AQueueOpenedHeldBackWaitsForItsFirstTaskToReturn) {
  // The heavy sweep's first task holds it back while it runs: the free
  // thread takes the light sweep's tasks first. Once it has returned, the
  // heavy sweep takes its place again.
  makePool(2);
  SweepScheduler::Queue gates(scheduler, *pool, /*weight=*/1);
  SweepScheduler::Queue heavy(scheduler, *pool, /*weight=*/300);
  SweepScheduler::Queue light(scheduler, *pool, /*weight=*/10);
  heavy.openHeldBack();
  gates.add({held("gate 1")});
  ASSERT_TRUE(waitForStarted(1));
  heavy.add({held("heavy 1"), logged("heavy 2")});
  ASSERT_TRUE(waitForStarted(2));
  light.add({logged("light 1"), held("light 2")});
  ASSERT_TRUE(waitForWaiting(3));
  release("gate 1");
  ASSERT_TRUE(waitForStarted(4));
  release("heavy 1");
  ASSERT_TRUE(waitForStarted(5));
  // A second gate, then tasks of both: the heavy sweep no longer held back.
  gates.add({held("gate 2")});
  ASSERT_TRUE(waitForStarted(6));
  heavy.add({logged("heavy 3")});
  light.add({logged("light 3")});
  ASSERT_TRUE(waitForWaiting(2));
  release("light 2");
  ASSERT_TRUE(waitForStarted(8));
  release("gate 2");
  for (SweepScheduler::Queue *queue : {&gates, &heavy, &light})
    queue->wait();
  // Opened as a plain queue: gate 1, heavy 1, heavy 2, light 1, ...
  EXPECT_EQ(started, (std::vector<std::string>{"gate 1", "heavy 1", "light 1",
                                               "light 2", "heavy 2", "gate 2",
                                               "heavy 3", "light 3"}));
}

TEST_F(SweepSchedulerTest, AnOpeningTaskThatLetsGoLetsItsQueueTakeItsPlace) {
  // The first task lets go of the opening hold while it still runs (it knows
  // it makes nothing the others wait for); once is enough, and only the
  // opening hold goes: one of holdBack's stays.
  makePool(2);
  SweepScheduler::Queue gates(scheduler, *pool, /*weight=*/1);
  SweepScheduler::Queue heavy(scheduler, *pool, /*weight=*/300);
  SweepScheduler::Queue light(scheduler, *pool, /*weight=*/10);
  heavy.openHeldBack();
  gates.add({held("gate 1")});
  ASSERT_TRUE(waitForStarted(1));
  heavy.add({[&] {
               heavy.letGoOpening();
               heavy.letGoOpening();
               held("heavy 1")();
             },
             logged("heavy 2")});
  ASSERT_TRUE(waitForStarted(2));
  light.add({logged("light 1")});
  ASSERT_TRUE(waitForWaiting(2));
  release("gate 1");
  ASSERT_TRUE(waitForStarted(4));
  heavy.holdBack();
  gates.add({held("gate 2")});
  ASSERT_TRUE(waitForStarted(5));
  heavy.add({logged("heavy 3")});
  light.add({logged("light 2")});
  ASSERT_TRUE(waitForWaiting(2));
  release("gate 2");
  ASSERT_TRUE(waitForStarted(7));
  heavy.letGo();
  release("heavy 1");
  for (SweepScheduler::Queue *queue : {&gates, &heavy, &light})
    queue->wait();
  EXPECT_EQ(started,
            (std::vector<std::string>{"gate 1", "heavy 1", "heavy 2", "light 1",
                                      "gate 2", "light 2", "heavy 3"}));
}
