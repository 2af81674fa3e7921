//===- FatalErrors.cpp - LLVM fatal errors fail one variant ---------------===//

#include "fly/Executor/FatalErrors.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>

namespace fly {

static thread_local std::string lastFatalError;

static void unwindOrDie(void *, const char *reason, bool genCrashDiag) {
  // The same line LLVM prints, so the backend's words stay on stderr.
  llvm::errs() << "LLVM ERROR: " << reason << "\n";
  if (llvm::CrashRecoveryContext *crc =
          llvm::CrashRecoveryContext::GetCurrent()) {
    lastFatalError = reason;
    crc->HandleExit(1); // Does not return.
  }
  llvm::sys::RunInterruptHandlers();
  if (genCrashDiag)
    abort();
  exit(1);
}

// Guards nest and overlap across threads: the handler stays installed while
// any is alive.
static std::mutex guardMutex;
static unsigned liveGuards = 0;

FatalErrorsUnwindCrashRecovery::FatalErrorsUnwindCrashRecovery() {
  std::lock_guard<std::mutex> lock(guardMutex);
  if (liveGuards++ == 0)
    llvm::install_fatal_error_handler(unwindOrDie, nullptr);
}

FatalErrorsUnwindCrashRecovery::~FatalErrorsUnwindCrashRecovery() {
  std::lock_guard<std::mutex> lock(guardMutex);
  if (--liveGuards == 0)
    llvm::remove_fatal_error_handler();
}

std::string takeLastFatalError() { return std::exchange(lastFatalError, {}); }

} // namespace fly
