//===- VariantQueue.cpp - What is left of the calling thread's sweep ------===//

#include "fly/Backend/VariantQueue.h"

#include "Support/FatalErrors.h"

namespace fly {

static thread_local VariantQueue *currentQueue = nullptr;

ScopedVariantQueue::ScopedVariantQueue(VariantQueue &queue)
    : queue(queue), outer(currentQueue) {
  // Running first: a reader between the two never sees the variant gone.
  ++queue.running;
  --queue.notStarted;
  currentQueue = &queue;
}

ScopedVariantQueue::~ScopedVariantQueue() {
  currentQueue = outer;
  --queue.running;
}

HeldBackSweep::HeldBackSweep()
    : hold(currentQueue ? currentQueue->hold : nullptr) {
  if (!hold)
    return;
  hold->holdBack();
  hold->letGoOpening();
  onUnwind =
      std::make_unique<ReleaseOnUnwind>([hold = hold] { hold->letGo(); });
}

HeldBackSweep::~HeldBackSweep() {
  if (!hold)
    return;
  onUnwind.reset();
  hold->letGo();
}

void letGoOpeningHold() {
  if (currentQueue && currentQueue->hold)
    currentQueue->hold->letGoOpening();
}

std::optional<VariantQueueCounts> getCurrentVariantQueue() {
  if (!currentQueue)
    return std::nullopt;
  return VariantQueueCounts{currentQueue->notStarted.load(),
                            currentQueue->running.load(), currentQueue->total,
                            currentQueue->threads};
}

} // namespace fly
