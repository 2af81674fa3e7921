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
#include <memory>
#include <optional>

namespace fly {

class ReleaseOnUnwind;

/// What an executor lets a variant of its pool do while it makes what the
/// other variants of its sweep had better start after (a kept state,
/// RocdlSharedCodegen.h): hold the sweep's waiting variants back, so that a
/// free thread takes another sweep's first, and let them go again.
///
/// An executor may also hold a sweep back from the moment its first variant
/// starts (the opening hold), before that variant knows whether it will make
/// anything: the free threads of a pool take a sweep's variants within
/// microseconds of each other, long before its first one gets to code
/// generation. The opening variant lets go of it once it knows (or the
/// executor does, once it returns).
class SweepHold {
public:
  virtual ~SweepHold() = default;
  virtual void holdBack() = 0;
  virtual void letGo() = 0;
  /// Lets go of the opening hold, where it still holds; any later call does
  /// nothing.
  virtual void letGoOpening() = 0;
};

/// One sweep's variants, counted by the executor that runs them.
struct VariantQueue {
  explicit VariantQueue(size_t notStarted, size_t threads = 1)
      : notStarted(notStarted), total(notStarted), threads(threads) {}
  std::atomic<size_t> notStarted;
  std::atomic<size_t> running{0};
  /// All of its variants.
  const size_t total;
  /// How many of its variants may run at once (the pool's threads).
  const size_t threads;
  /// Where the executor holds the sweep back; none: it cannot.
  SweepHold *hold = nullptr;
};

/// What VariantQueue said when read.
struct VariantQueueCounts {
  size_t notStarted = 0;
  /// The calling thread's variant included.
  size_t running = 0;
  /// VariantQueue::total and ::threads.
  size_t total = 0;
  size_t threads = 1;
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

/// Holds back the sweep whose variant the calling thread replays, while it
/// lives (where that executor can), in place of its opening hold (let go
/// then); lets go on a crash's unwind too.
class HeldBackSweep {
public:
  HeldBackSweep();
  ~HeldBackSweep();
  HeldBackSweep(const HeldBackSweep &) = delete;
  HeldBackSweep &operator=(const HeldBackSweep &) = delete;

private:
  SweepHold *hold;
  std::unique_ptr<ReleaseOnUnwind> onUnwind;
};

/// Lets go of the opening hold of the sweep whose variant the calling thread
/// replays (SweepHold), where there is one still held: the variant will not
/// make anything the others wait for (HeldBackSweep takes its place while it
/// does).
void letGoOpeningHold();

/// The counts of the sweep whose variant the calling thread replays; nullopt
/// where no executor said (a replay of its own, the batch executor's
/// threads).
std::optional<VariantQueueCounts> getCurrentVariantQueue();

} // namespace fly

#endif // FLY_BACKEND_VARIANTQUEUE_H
