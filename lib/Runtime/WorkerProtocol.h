//===- WorkerProtocol.h - Worker process <-> supervisor ---------*- C++ -*-===//
//
// A worker (a forked child that owns the device) reports one JSON message
// per line on a pipe; one silent too long (a hung kernel) is killed.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_WORKERPROTOCOL_H
#define FLY_RUNTIME_WORKERPROTOCOL_H

#include "Runtime/Sweep.h"

#include "llvm/Support/JSON.h"

namespace fly::rt {

struct WorkerMessage {
  enum class Kind {
    Device,
    OpenFailed,
    Current,
    Outcome,
    Reference,
    Restart,
    Fatal,
    Done
  };
  Kind kind = Kind::Done;
  DeviceInfo device;                ///< Device
  OpenResult open = OpenResult::Ok; ///< OpenFailed
  std::string text;                 ///< OpenFailed, Fatal
  int variant = -1;                 ///< Current, Outcome, Reference
  Measurement measurement;          ///< Outcome
};
/// Also the per-variant part of fly-run's --json report.
llvm::json::Value toJSON(const Measurement &measurement);
llvm::json::Value toJSON(const WorkerMessage &message);
bool fromJSON(const llvm::json::Value &value, WorkerMessage &message,
              llvm::json::Path path);

/// The worker's end of the pipe.
class Channel {
public:
  explicit Channel(int fd) : fd(fd) {}
  void send(const WorkerMessage &message);
  void send(WorkerMessage::Kind kind, int variant = -1, std::string text = "") {
    WorkerMessage m;
    m.kind = kind, m.variant = variant, m.text = std::move(text);
    send(m);
  }

private:
  int fd;
};

/// Forks a child that runs `body`, calling `onMessage` for every message it
/// sends. An error says why the child died or was killed after `timeoutS`
/// seconds of silence.
llvm::Error
runWorker(const std::function<void(Channel &)> &body,
          const std::function<void(const WorkerMessage &)> &onMessage,
          double timeoutS);

} // namespace fly::rt

#endif // FLY_RUNTIME_WORKERPROTOCOL_H
