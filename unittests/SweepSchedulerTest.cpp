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
  /// run(tasks, weight) on a thread of its own, as a kernel's driver calls
  /// it.
  void runOnThread(std::vector<std::function<void()>> tasks, uint64_t weight) {
    callers.emplace_back([this, weight, tasks = std::move(tasks)]() mutable {
      scheduler.run(*pool, std::move(tasks), weight);
    });
  }
  /// The same with a kernel size, a hold limit and the caller's expectation.
  void runSizedOnThread(std::vector<std::function<void()>> tasks,
                        uint64_t weight, uint64_t size,
                        SweepScheduler::Clock::duration holdLimit,
                        SweepScheduler::Expectation *expected = nullptr) {
    callers.emplace_back([=, tasks = std::move(tasks)]() mutable {
      scheduler.run(*pool, std::move(tasks), weight, size, holdLimit, expected);
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

// Holds are long enough here that a broken release shows as a test that
// takes minutes; none is ever waited out.
constexpr std::chrono::minutes kLongHold{2};

TEST_F(SweepSchedulerTest, SmallerKernelsWaitForALargerOneInPhaseOne) {
  makePool(1);
  std::unique_ptr<SweepScheduler::Expectation> large = scheduler.expect(100);
  runSizedOnThread({logged("s0"), logged("s1")}, /*weight=*/10, /*size=*/10,
                   kLongHold);
  ASSERT_TRUE(waitForWaiting(2));
  // Not held (larger than every kernel in phase 1): it runs while the
  // smaller sweep waits, though that one's tasks weigh more.
  runSizedOnThread({logged("b0")}, /*weight=*/1, /*size=*/200, kLongHold);
  ASSERT_TRUE(waitForStarted(1));
  EXPECT_EQ(scheduler.getWaitingCount(), 2u);
  large.reset();
  joinCallers();
  EXPECT_EQ(started, (std::vector<std::string>{"b0", "s0", "s1"}));
}

TEST_F(SweepSchedulerTest, AKernelsOwnExpectationEndsWhenItsTasksAreQueued) {
  makePool(1);
  runOnThread({held("gate")}, 1);
  ASSERT_TRUE(waitForStarted(1));
  std::unique_ptr<SweepScheduler::Expectation> large = scheduler.expect(100);
  runSizedOnThread({logged("s0")}, 10, 10, kLongHold);
  ASSERT_TRUE(waitForWaiting(1));
  runSizedOnThread({logged("b0")}, 50, 100, kLongHold, large.get());
  ASSERT_TRUE(waitForWaiting(2));
  release("gate");
  // s0 runs once b0's tasks are queued, without `large` being destroyed.
  joinCallers();
  EXPECT_EQ(started, (std::vector<std::string>{"gate", "b0", "s0"}));
}

TEST_F(SweepSchedulerTest, NoHoldWithoutALimitOrALargerKernel) {
  makePool(1);
  std::unique_ptr<SweepScheduler::Expectation> large = scheduler.expect(100);
  // A hold limit of zero: runs at once.
  runSizedOnThread({logged("a0")}, 10, 10, SweepScheduler::Clock::duration{});
  joinCallers();
  // Only kernels larger than this one in phase 1 hold it.
  runSizedOnThread({logged("b0")}, 10, 100, kLongHold);
  joinCallers();
  std::unique_ptr<SweepScheduler::Expectation> small = scheduler.expect(5);
  runSizedOnThread({logged("c0")}, 10, 150, kLongHold);
  joinCallers();
  EXPECT_EQ(started, (std::vector<std::string>{"a0", "b0", "c0"}));
}
