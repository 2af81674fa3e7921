//===- VariantQueue.cpp - What is left of the calling thread's sweep ------===//

#include "fly/Backend/VariantQueue.h"

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

LentThread::LentThread()
    : lender(currentQueue ? currentQueue->lender : nullptr) {
  if (lender)
    lender->lend();
}

LentThread::~LentThread() {
  if (lender)
    lender->reclaim();
}

std::optional<VariantQueueCounts> getCurrentVariantQueue() {
  if (!currentQueue)
    return std::nullopt;
  return VariantQueueCounts{currentQueue->notStarted.load(),
                            currentQueue->running.load()};
}

} // namespace fly
