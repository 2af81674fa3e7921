//===- FatalErrors.h - LLVM fatal errors fail one variant -------*- C++ -*-===//
//
// A backend that calls report_fatal_error (or reportFatalUsageError, which
// exits instead of aborting, e.g. AMDGPU's "unsupported code object version")
// would end the whole process, and with it every other variant of the sweep
// (or the Python interpreter that embeds the C API). While one of these
// guards is alive, a fatal error on a thread that runs inside a
// CrashRecoveryContext unwinds that context instead (HandleExit), exactly as
// clang does for in-process cc1 jobs; elsewhere it behaves as LLVM's default.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_FATALERRORS_H
#define FLY_SUPPORT_FATALERRORS_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <functional>
#include <optional>
#include <string>

namespace llvm {
class CrashRecoveryContextCleanup;
} // namespace llvm

namespace fly {

class FatalErrorsUnwindCrashRecovery {
public:
  FatalErrorsUnwindCrashRecovery();
  ~FatalErrorsUnwindCrashRecovery();
  FatalErrorsUnwindCrashRecovery(const FatalErrorsUnwindCrashRecovery &) =
      delete;
  FatalErrorsUnwindCrashRecovery &
  operator=(const FatalErrorsUnwindCrashRecovery &) = delete;
};

/// The reason of the last fatal error this thread unwound from ("" if none),
/// and forgets it.
std::string takeLastFatalError();

/// Runs `fn` so that an LLVM fatal error in it (report_fatal_error, the
/// default error handler's exit) ends only `fn`, and returns "an LLVM fatal
/// error: <reason>"; std::nullopt when `fn` returned. The frames between are
/// abandoned (leaked), as CrashRecoveryContext::HandleExit does. On a thread
/// inside a CrashRecoveryContext (the isolated executor's) `fn` just runs:
/// that context handles it, crashes included. Signals are left alone.
std::optional<std::string>
runUnwindingFatalErrors(llvm::function_ref<void()> fn);

/// While alive, runs `release` where a fatal error or a crash abandons the
/// frames it lives in: those of the current CrashRecoveryContext (as it
/// ends) or of runUnwindingFatalErrors (before it returns). Their
/// destructors do not run then, and what they hold of process-wide state
/// would stay held. `release` must not refer to those frames (their stack
/// is reused by then). Outside both it does nothing.
class ReleaseOnUnwind {
public:
  explicit ReleaseOnUnwind(std::function<void()> release);
  ~ReleaseOnUnwind() { unregister(); }
  ReleaseOnUnwind(const ReleaseOnUnwind &) = delete;
  ReleaseOnUnwind &operator=(const ReleaseOnUnwind &) = delete;
  /// From here on, an unwind leaves `release` unrun.
  void unregister();

  struct Pending;

private:
  llvm::CrashRecoveryContextCleanup *cleanup = nullptr;
  Pending *pending = nullptr;
};

} // namespace fly

#endif // FLY_SUPPORT_FATALERRORS_H
