//===- KernelTurns.cpp - The kernels of a sweep take turns ----------------===//

#include "Executor/KernelTurns.h"

#include <algorithm>

namespace fly {

void KernelTurns::queue(Kernel &kernel,
                        std::vector<std::function<void()>> tasks) {
  std::lock_guard<std::mutex> lock(mutex);
  if (tasks.empty())
    return;
  if (kernel.waiting.empty())
    kernels.push_back(&kernel);
  kernel.unfinished += tasks.size();
  for (std::function<void()> &task : tasks)
    kernel.waiting.push_back(std::move(task));
}

void KernelTurns::runNext() {
  Kernel *kernel;
  std::function<void()> task;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto next = std::min_element(
        kernels.begin(), kernels.end(),
        [](Kernel *a, Kernel *b) { return a->running < b->running; });
    if (next == kernels.end())
      return;
    kernel = *next;
    task = std::move(kernel->waiting.front());
    kernel->waiting.pop_front();
    ++kernel->running;
    if (kernel->waiting.empty())
      kernels.erase(next);
  }
  task();
  std::lock_guard<std::mutex> lock(mutex);
  --kernel->running;
  // The kernel's owner may destroy it once this lock is released.
  if (--kernel->unfinished == 0)
    taskFinished.notify_all();
}

void KernelTurns::wait(Kernel &kernel) {
  std::unique_lock<std::mutex> lock(mutex);
  taskFinished.wait(lock, [&] { return kernel.unfinished == 0; });
}

} // namespace fly
