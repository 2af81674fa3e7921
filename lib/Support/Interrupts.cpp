//===- Interrupts.cpp - What SIGINT/SIGTERM must undo, in one place -------===//

#include "Support/Interrupts.h"

#include "llvm/Support/Signals.h"

#include <atomic>
#include <mutex>

#include <signal.h>

namespace fly {

namespace {
constexpr unsigned kMaxCallbacks = 8;
std::atomic<InterruptCallback> callbacks[kMaxCallbacks];
std::mutex registration;

void runCallbacks() {
  for (std::atomic<InterruptCallback> &slot : callbacks)
    if (InterruptCallback callback = slot.load())
      callback();
  // LLVM's handler has restored the default actions: end as interrupted.
  ::signal(SIGINT, SIG_DFL);
  ::raise(SIGINT);
}
} // namespace

bool addInterruptCallback(InterruptCallback callback) {
  std::lock_guard<std::mutex> guard(registration);
  for (std::atomic<InterruptCallback> &slot : callbacks) {
    InterruptCallback present = slot.load();
    if (present == callback)
      return true;
    if (!present) {
      slot.store(callback);
      llvm::sys::SetInterruptFunction(runCallbacks);
      return true;
    }
  }
  return false;
}

} // namespace fly
