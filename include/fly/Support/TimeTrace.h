//===- TimeTrace.h - One Chrome trace of a sweep's threads ------*- C++ -*-===//
//
// fly-tune --time-trace: where a sweep's time went, thread by thread, in the
// Chrome trace event format of clang's -ftime-trace (chrome://tracing,
// Perfetto, speedscope). LLVM's profiler (llvm/Support/TimeProfiler.h) keeps
// one instance per thread; the worker threads of a sweep belong to pools
// that LLVM and MLIR start, so each task that may record spans opens a
// TimeTraceThreadScope, which gives its thread an instance for the task and
// hands it to the trace when the task ends. LLVM's own spans (code
// generation passes) land in the same instances.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_TIMETRACE_H
#define FLY_SUPPORT_TIMETRACE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace fly {

/// The default --time-trace-granularity (microseconds), clang's and lld's.
constexpr unsigned kDefaultTimeTraceGranularityUs = 500;

/// Starts the trace of this process on the calling thread, the one that
/// writes it: spans shorter than `granularityUs` are left out (0: none).
void startTimeTrace(unsigned granularityUs, llvm::StringRef processName);

/// Whether startTimeTrace was called and the trace not written yet.
bool isTimeTraceStarted();

/// Writes the trace to `path` (atomically, SafeFile.h) and ends it. Call on
/// the thread that started it once every task's scope has closed.
llvm::Error writeTimeTrace(llvm::StringRef path);

/// An error unless `path` can take the trace: its directory exists and it
/// is not a directory or other non-file. Checked before anything compiles.
llvm::Error checkTimeTracePath(llvm::StringRef path);

/// One task on a worker thread: while open, its thread's spans go into the
/// trace (nothing without a started trace). Nests; the outermost scope of a
/// thread without an instance makes one and hands it over on close, whatever
/// the scopes inside left open (a crashed variant's spans are then missing).
class TimeTraceThreadScope {
public:
  TimeTraceThreadScope();
  ~TimeTraceThreadScope();
  TimeTraceThreadScope(const TimeTraceThreadScope &) = delete;
  TimeTraceThreadScope &operator=(const TimeTraceThreadScope &) = delete;

private:
  unsigned depthAtEntry;
};

/// TimeTraceThreadScope's opening and closing where the two are separate
/// calls (pass instrumentation callbacks): every enter is followed by one
/// leave on the same thread, unless a crash unwinds through an enclosing
/// TimeTraceThreadScope, which closes it.
void enterTimeTraceThread();
void leaveTimeTraceThread();

} // namespace fly

#endif // FLY_SUPPORT_TIMETRACE_H
