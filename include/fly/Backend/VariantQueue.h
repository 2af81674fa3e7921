//===- VariantQueue.h - What is left of a thread's sweep --------*- C++ -*-===//
//
// What a backend keeps from one variant's compile for later ones (the machine
// functions of RocdlSharedCodegen.h) costs time and memory in that compile,
// and pays only where later variants of the same sweep are still to start.
// An executor that runs a sweep's variants on a pool (the isolated one, a
// process executor's child) publishes how many have not started and how many
// are running, for the duration of each variant's replay on its thread; the
// backend reads it where it decides what to keep.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_VARIANTQUEUE_H
#define FLY_BACKEND_VARIANTQUEUE_H

#include <atomic>
#include <cstddef>
#include <optional>

namespace fly {

/// What an executor lets a variant of its pool do while it waits for
/// another's work (a kept state being made, RocdlSharedCodegen.h): lend its
/// thread's place, so that another task runs meanwhile, and reclaim it.
class ThreadLender {
public:
  virtual ~ThreadLender() = default;
  virtual void lend() = 0;
  virtual void reclaim() = 0;
};

/// One sweep's variants, counted by the executor that runs them.
struct VariantQueue {
  explicit VariantQueue(size_t notStarted) : notStarted(notStarted) {}
  std::atomic<size_t> notStarted;
  std::atomic<size_t> running{0};
  /// Where the executor lends places; none: waits keep the thread.
  ThreadLender *lender = nullptr;
};

/// What VariantQueue said when read.
struct VariantQueueCounts {
  size_t notStarted = 0;
  /// The calling thread's variant included.
  size_t running = 0;
};

/// Publishes `queue` to the calling thread's replay while it lives, and
/// counts that variant as running (not as waiting any more).
class ScopedVariantQueue {
public:
  explicit ScopedVariantQueue(VariantQueue &queue);
  ~ScopedVariantQueue();
  ScopedVariantQueue(const ScopedVariantQueue &) = delete;
  ScopedVariantQueue &operator=(const ScopedVariantQueue &) = delete;

private:
  VariantQueue &queue;
  VariantQueue *outer;
};

/// Lends the calling thread's place in the pool of the sweep whose variant
/// it replays, while it lives (where that executor can).
class LentThread {
public:
  LentThread();
  ~LentThread();
  LentThread(const LentThread &) = delete;
  LentThread &operator=(const LentThread &) = delete;

private:
  ThreadLender *lender;
};

/// The counts of the sweep whose variant the calling thread replays; nullopt
/// where no executor said (a replay of its own, the batch executor's
/// threads).
std::optional<VariantQueueCounts> getCurrentVariantQueue();

} // namespace fly

#endif // FLY_BACKEND_VARIANTQUEUE_H
