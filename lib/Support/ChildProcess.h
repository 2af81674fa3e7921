//===- ChildProcess.h - Children a time limit ends wholly ---*- C++ -*-===//
//-*-===//
//
// A child started here leads a process group of its own, so that a time
// limit (or an interrupt of this process) ends it together with everything
// it started: a `ptxas` wrapper script's `sleep`, a replay child's `ptxas`.
// Waiting polls without signals, so any number of threads may wait on
// children with limits at once (LLVM's sys::Wait uses one process-wide
// alarm).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_CHILDPROCESS_H
#define FLY_SUPPORT_CHILDPROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

#include <sys/types.h>

namespace fly {

/// How a child ended.
struct ChildExit {
  /// Its exit status; -1 when a signal ended it or it never started.
  int exitCode = -1;
  /// The signal that ended it; 0 if none.
  int signal = 0;
  /// Killed because it ran past its time limit.
  bool timedOut = false;
  /// Why it could not start; "" if it did.
  std::string startError;

  bool succeeded() const { return exitCode == 0; }
  /// "exited with status 2", "was killed by signal 9", "ran past its
  /// time limit of 5 s and was killed", "could not start: ...".
  std::string describe(unsigned timeoutSeconds = 0) const;
};

class ChildProcess {
public:
  /// Starts `program` with `args` (args[0] names it) in a new process
  /// group. `redirects`: none, or stdin, stdout, stderr, each a path ("" is
  /// /dev/null) or nullopt (inherited). On failure the result's exit says
  /// why (hasStarted() is false).
  static ChildProcess
  start(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
        llvm::ArrayRef<std::optional<llvm::StringRef>> redirects = {});
  ChildProcess() = default;
  ChildProcess(ChildProcess &&other);
  ChildProcess &operator=(ChildProcess &&other);
  /// A child still running is killed (with its group) and reaped.
  ~ChildProcess();

  bool hasStarted() const { return pid > 0; }
  /// Without blocking: how it ended, once it has (then always the same).
  std::optional<ChildExit> poll();
  /// Kills its process group and reaps it.
  ChildExit kill(bool timedOut = false);
  /// Waits for its end, at most `timeoutSeconds` (0 = no limit), then kills
  /// its group.
  ChildExit wait(unsigned timeoutSeconds = 0);

private:
  void release();
  pid_t pid = 0;
  std::optional<ChildExit> ended;
};

/// Runs `program` to its end or its time limit (0 = none).
ChildExit
runChildProcess(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
                llvm::ArrayRef<std::optional<llvm::StringRef>> redirects,
                unsigned timeoutSeconds);

} // namespace fly

#endif // FLY_SUPPORT_CHILDPROCESS_H
