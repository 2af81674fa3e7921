//===- FatalErrors.cpp - LLVM fatal errors fail one variant ---------------===//

#include "Support/FatalErrors.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <csetjmp>
#include <cstdlib>
#include <mutex>

namespace fly {

static thread_local std::string lastFatalError;
// Where runUnwindingFatalErrors resumes on this thread; null outside it.
static thread_local std::jmp_buf *fatalErrorResume = nullptr;

// The releases registered inside this thread's runUnwindingFatalErrors,
// newest first; on the heap, since the frames that made them are abandoned.
struct ReleaseOnUnwind::Pending {
  std::function<void()> release;
  Pending *prev = nullptr, *next = nullptr;
};
static thread_local ReleaseOnUnwind::Pending *pendingReleases = nullptr;

namespace {
class ReleaseCleanup final : public llvm::CrashRecoveryContextCleanup {
public:
  ReleaseCleanup(llvm::CrashRecoveryContext *crc, std::function<void()> release)
      : CrashRecoveryContextCleanup(crc), release(std::move(release)) {}
  void recoverResources() override { release(); }

private:
  std::function<void()> release;
};
} // namespace

ReleaseOnUnwind::ReleaseOnUnwind(std::function<void()> release) {
  if (llvm::CrashRecoveryContext *crc =
          llvm::CrashRecoveryContext::GetCurrent()) {
    cleanup = new ReleaseCleanup(crc, std::move(release));
    crc->registerCleanup(cleanup);
  } else if (fatalErrorResume) {
    pending = new Pending{std::move(release), nullptr, pendingReleases};
    if (pendingReleases)
      pendingReleases->prev = pending;
    pendingReleases = pending;
  }
}

void ReleaseOnUnwind::unregister() {
  if (cleanup)
    cleanup->getContext()->unregisterCleanup(cleanup); // Deletes it.
  cleanup = nullptr;
  if (!pending)
    return;
  (pending->prev ? pending->prev->next : pendingReleases) = pending->next;
  if (pending->next)
    pending->next->prev = pending->prev;
  delete pending;
  pending = nullptr;
}

static void unwindOrDie(void *, const char *reason, bool genCrashDiag) {
  // The same line LLVM prints, so the backend's words stay on stderr.
  llvm::errs() << "LLVM ERROR: " << reason << "\n";
  if (llvm::CrashRecoveryContext *crc =
          llvm::CrashRecoveryContext::GetCurrent()) {
    lastFatalError = reason;
    crc->HandleExit(1); // Does not return.
  }
  if (std::jmp_buf *resume = fatalErrorResume) {
    lastFatalError = reason;
    fatalErrorResume = nullptr;
    // As HandleExit does: the frames in between are abandoned, not unwound.
    std::longjmp(*resume, 1);
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

std::optional<std::string>
runUnwindingFatalErrors(llvm::function_ref<void()> fn) {
  if (llvm::CrashRecoveryContext::GetCurrent() || fatalErrorResume) {
    fn();
    return std::nullopt;
  }
  FatalErrorsUnwindCrashRecovery fatalErrors;
  std::jmp_buf resume;
  if (setjmp(resume) != 0) {
    while (ReleaseOnUnwind::Pending *pending = pendingReleases) {
      pendingReleases = pending->next;
      pending->release();
      delete pending;
    }
    return "an LLVM fatal error: " + takeLastFatalError();
  }
  fatalErrorResume = &resume;
  fn();
  fatalErrorResume = nullptr;
  return std::nullopt;
}

} // namespace fly
