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

#include <optional>
#include <string>

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

} // namespace fly

#endif // FLY_SUPPORT_FATALERRORS_H
