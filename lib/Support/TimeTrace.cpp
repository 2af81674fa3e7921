//===- TimeTrace.cpp - One Chrome trace of a sweep's threads --------------===//

#include "fly/Support/TimeTrace.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>

using namespace llvm;

namespace fly {

namespace {
std::atomic<bool> started{false};
std::atomic<unsigned> granularity{kDefaultTimeTraceGranularityUs};

/// Open TimeTraceThreadScopes on this thread, and whether the outermost one
/// made the thread's profiler instance.
thread_local unsigned scopeDepth = 0;
thread_local bool scopeOwnsInstance = false;
} // namespace

void startTimeTrace(unsigned granularityUs, StringRef processName) {
  granularity = granularityUs;
  timeTraceProfilerInitialize(granularityUs, processName);
  started = true;
}

bool isTimeTraceStarted() { return started; }

Error writeTimeTrace(StringRef path) {
  if (!started)
    return createStringError("no time trace was started");
  started = false;
  SmallString<0> json;
  {
    raw_svector_ostream os(json);
    timeTraceProfilerWrite(os);
  }
  timeTraceProfilerCleanup();
  return writeFileAtomically(path, json);
}

Error checkTimeTracePath(StringRef path) {
  if (path.empty())
    return createStringError("an empty path");
  if (existsAsNonRegularFile(path, FinalSymlink::Follow))
    return createStringError("'" + path + "' is not a regular file");
  StringRef dir = sys::path::parent_path(path);
  if (!dir.empty() && !sys::fs::is_directory(dir))
    return createStringError("'" + dir + "' is not a directory");
  return Error::success();
}

void enterTimeTraceThread() {
  if (scopeDepth++ == 0 && started && !getTimeTraceProfilerInstance()) {
    timeTraceProfilerInitialize(granularity, "");
    scopeOwnsInstance = true;
  }
}

/// Closes every scope of this thread above `depth`.
static void leaveTimeTraceThreadTo(unsigned depth) {
  scopeDepth = depth;
  if (scopeDepth == 0 && scopeOwnsInstance) {
    scopeOwnsInstance = false;
    timeTraceProfilerFinishThread();
  }
}

void leaveTimeTraceThread() {
  if (scopeDepth)
    leaveTimeTraceThreadTo(scopeDepth - 1);
}

TimeTraceThreadScope::TimeTraceThreadScope() : depthAtEntry(scopeDepth) {
  enterTimeTraceThread();
}

// A crash unwound past inner scopes without closing them: this one closes
// what they opened.
TimeTraceThreadScope::~TimeTraceThreadScope() {
  leaveTimeTraceThreadTo(depthAtEntry);
}

} // namespace fly
