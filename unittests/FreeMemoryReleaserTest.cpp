//===- FreeMemoryReleaserTest.cpp - Trims stay off the hot path -----------===//

#include "Executor/FreeMemoryReleaser.h"

#include "gtest/gtest.h"

#include <atomic>
#include <condition_variable>
#include <thread>

using namespace fly;

/// Queues `n` variants on `releaser`.
static void queue(FreeMemoryReleaser &releaser, int n) {
  for (int i = 0; i < n; ++i)
    releaser.variantQueued();
}

/// `n` variants finish on a pool of `threads`.
static void finish(FreeMemoryReleaser &releaser, int n, unsigned threads) {
  for (int i = 0; i < n; ++i)
    releaser.variantFinished(threads);
}

TEST(FreeMemoryReleaserTest, TrimsOncePerRoundOfThreads) {
  unsigned trims = 0;
  FreeMemoryReleaser releaser([&] { ++trims; });
  releaser.planStarting();
  EXPECT_EQ(trims, 1u);
  queue(releaser, 13);
  // 4 threads: a trim after every 4th finished variant, not after each.
  finish(releaser, 3, 4);
  EXPECT_EQ(trims, 1u);
  releaser.variantFinished(4);
  EXPECT_EQ(trims, 2u);
  finish(releaser, 8, 4);
  EXPECT_EQ(trims, 4u);
  // One thread: after every variant.
  FreeMemoryReleaser alone([&] { ++trims; });
  queue(alone, 3);
  finish(alone, 2, 1);
  EXPECT_EQ(trims, 6u);
}

TEST(FreeMemoryReleaserTest, NoTrimOnceNoVariantIsLeft) {
  unsigned trims = 0;
  FreeMemoryReleaser releaser([&] { ++trims; });
  // The last of a round that is also the last variant: nothing would reuse
  // the pages, and the results would wait for the trim.
  queue(releaser, 4);
  finish(releaser, 4, 4);
  EXPECT_EQ(trims, 0u);
  // A variant queued meanwhile (another kernel of a sweep) is still to come.
  queue(releaser, 5);
  finish(releaser, 4, 4);
  EXPECT_EQ(trims, 1u);
  releaser.variantFinished(4);
  EXPECT_EQ(trims, 1u);
}

TEST(FreeMemoryReleaserTest, NoTrimAfterAVariantThatDidNotReturn) {
  unsigned trims = 0;
  FreeMemoryReleaser releaser([&] { ++trims; });
  queue(releaser, 3);
  releaser.variantFinished(1, /*mayTrim=*/false);
  EXPECT_EQ(trims, 0u);
  releaser.variantFinished(1);
  EXPECT_EQ(trims, 1u);
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
  queue(releaser, 2);
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
