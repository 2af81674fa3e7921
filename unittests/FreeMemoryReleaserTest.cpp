//===- FreeMemoryReleaserTest.cpp - Trims stay off the hot path -----------===//

#include "Executor/FreeMemoryReleaser.h"

#include "gtest/gtest.h"

#include <atomic>
#include <condition_variable>
#include <thread>

using namespace fly;

TEST(FreeMemoryReleaserTest, TrimsOncePerRoundOfThreads) {
  unsigned trims = 0;
  FreeMemoryReleaser releaser([&] { ++trims; });
  releaser.planStarting();
  EXPECT_EQ(trims, 1u);
  // 4 threads: a trim after every 4th finished variant, not after each.
  for (int i = 0; i < 3; ++i)
    releaser.variantFinished(4);
  EXPECT_EQ(trims, 1u);
  releaser.variantFinished(4);
  EXPECT_EQ(trims, 2u);
  for (int i = 0; i < 8; ++i)
    releaser.variantFinished(4);
  EXPECT_EQ(trims, 4u);
  // One thread: after every variant.
  FreeMemoryReleaser alone([&] { ++trims; });
  alone.variantFinished(1);
  alone.variantFinished(1);
  EXPECT_EQ(trims, 6u);
}

TEST(FreeMemoryReleaserTest, AThreadFindingATrimRunningSkipsItsOwn) {
  std::mutex mutex;
  std::condition_variable changed;
  bool inTrim = false, release = false;
  std::atomic<unsigned> trims{0};
  FreeMemoryReleaser releaser([&] {
    ++trims;
    std::unique_lock<std::mutex> lock(mutex);
    inTrim = true;
    changed.notify_all();
    changed.wait(lock, [&] { return release; });
  });
  std::thread first([&] { releaser.planStarting(); });
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return inTrim; });
  }
  // The first trim is still running: these return at once, trimming nothing.
  releaser.planStarting();
  releaser.variantFinished(1);
  EXPECT_EQ(trims.load(), 1u);
  {
    std::lock_guard<std::mutex> lock(mutex);
    release = true;
  }
  changed.notify_all();
  first.join();
  EXPECT_EQ(trims.load(), 1u);
}
