//===- KernelTurns.h - The kernels of a sweep take turns --------*- C++ -*-===//
//
// The kernels of one sweep hand their variants to one pool (concurrent
// execute calls). Queued first come, first served, the kernel whose phase 1
// ended first takes every thread, its variants all starting at once: none
// finds a code generation another one kept (RocdlSharedCodegen.h), so each
// compiles whole, and so do the next kernel's. Taking turns, a free thread
// starts the next variant of the kernel with the fewest variants running
// (the kernel queued first on ties): P threads spread over the kernels
// waiting, and a kernel's later variants start once its first ones have
// finished and kept what they share.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_EXECUTOR_KERNELTURNS_H
#define FLY_EXECUTOR_KERNELTURNS_H

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

namespace fly {

class KernelTurns {
public:
  /// One kernel's variants, owned by the caller of queue until wait
  /// returned.
  class Kernel {
    friend class KernelTurns;
    std::deque<std::function<void()>> waiting;
    unsigned running = 0;
    size_t unfinished = 0;
  };

  /// Adds `tasks` to `kernel`'s. The caller then has `runNext` called once
  /// per task, on the threads that are to run them.
  void queue(Kernel &kernel, std::vector<std::function<void()>> tasks);

  /// Runs one waiting task (of any kernel): the next of the kernel with the
  /// fewest running, the earliest queued on ties. No-op if none waits.
  void runNext();

  /// Returns once every task queued for `kernel` has run.
  void wait(Kernel &kernel);

private:
  std::mutex mutex;
  std::condition_variable taskFinished;
  /// Kernels with waiting tasks, in the order they were first queued.
  std::vector<Kernel *> kernels;
};

} // namespace fly

#endif // FLY_EXECUTOR_KERNELTURNS_H
