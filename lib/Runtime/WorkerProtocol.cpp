//===- WorkerProtocol.cpp - Worker process <-> supervisor -----------------===//

#include "Runtime/WorkerProtocol.h"
#include "fly/Support/BoundedJSON.h"

#include "llvm/Support/raw_ostream.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

using namespace llvm;

namespace fly::rt {

json::Value toJSON(const DeviceInfo &d) {
  return json::Object{{"ordinal", d.ordinal},
                      {"name", d.name},
                      {"arch", d.arch},
                      {"memory", uint64_t(d.totalMemory)},
                      {"runtime", d.runtimeVersion}};
}
bool fromJSON(const json::Value &v, DeviceInfo &d, json::Path p) {
  json::ObjectMapper o(v, p);
  return o && o.map("ordinal", d.ordinal) && o.map("name", d.name) &&
         o.map("arch", d.arch) && o.map("memory", d.totalMemory) &&
         o.map("runtime", d.runtimeVersion);
}
json::Value toJSON(const Comparison &c) {
  return json::Object{{"checked", static_cast<int64_t>(c.checked)},
                      {"mismatches", static_cast<int64_t>(c.mismatches)},
                      {"max_abs_error", c.maxAbsError},
                      {"first", c.firstMismatch}};
}
bool fromJSON(const json::Value &v, Comparison &c, json::Path p) {
  json::ObjectMapper o(v, p);
  return o && o.map("checked", c.checked) &&
         o.map("mismatches", c.mismatches) &&
         o.map("max_abs_error", c.maxAbsError) &&
         o.map("first", c.firstMismatch);
}
json::Value toJSON(const Measurement &m) {
  return json::Object{{"state", stateName(m.state)},
                      {"message", m.message},
                      {"registers_manifest", m.manifestRegisters},
                      {"local_bytes_manifest", m.manifestLocalBytes},
                      {"registers_driver", m.driver.registers},
                      {"local_bytes_driver", m.driver.localBytes},
                      {"shared_bytes_driver", m.driver.sharedBytes},
                      {"max_threads_driver", m.driver.maxThreadsPerBlock},
                      {"vs_host_reference", m.againstHost},
                      {"vs_reference_variant", m.againstVariant},
                      {"times_ms", m.timesMs}};
}
bool fromJSON(const json::Value &v, Measurement &m, json::Path p) {
  json::ObjectMapper o(v, p);
  std::string state;
  bool ok = o && o.map("state", state) && o.map("message", m.message) &&
            o.map("registers_manifest", m.manifestRegisters) &&
            o.map("local_bytes_manifest", m.manifestLocalBytes) &&
            o.map("registers_driver", m.driver.registers) &&
            o.map("local_bytes_driver", m.driver.localBytes) &&
            o.map("shared_bytes_driver", m.driver.sharedBytes) &&
            o.map("max_threads_driver", m.driver.maxThreadsPerBlock) &&
            o.map("vs_host_reference", m.againstHost) &&
            o.map("vs_reference_variant", m.againstVariant) &&
            o.map("times_ms", m.timesMs);
  for (int s = 0; s <= static_cast<int>(VariantState::Wrong); ++s)
    if (state == stateName(static_cast<VariantState>(s)))
      return m.state = static_cast<VariantState>(s), ok;
  return false;
}

json::Value toJSON(const WorkerMessage &m) {
  json::Object o{{"kind", static_cast<int>(m.kind)},
                 {"variant", m.variant},
                 {"text", m.text}};
  if (m.kind == WorkerMessage::Kind::Device)
    o["device"] = m.device;
  if (m.kind == WorkerMessage::Kind::OpenFailed)
    o["open"] = static_cast<int>(m.open);
  if (m.kind == WorkerMessage::Kind::Outcome)
    o["measurement"] = m.measurement;
  return o;
}
bool fromJSON(const json::Value &v, WorkerMessage &m, json::Path p) {
  json::ObjectMapper o(v, p);
  int kind = 0, open = 0;
  bool ok = o && o.map("kind", kind) && o.map("variant", m.variant) &&
            o.map("text", m.text) && o.mapOptional("device", m.device) &&
            o.mapOptional("open", open) &&
            o.mapOptional("measurement", m.measurement);
  m.kind = static_cast<WorkerMessage::Kind>(kind);
  m.open = static_cast<OpenResult>(open);
  return ok && kind >= 0 && kind <= static_cast<int>(WorkerMessage::Kind::Done);
}

void Channel::send(const WorkerMessage &message) {
  raw_fd_ostream os(fd, /*shouldClose=*/false);
  os << toJSON(message) << '\n';
  os.flush();
  os.clear_error(); // the supervisor is gone: nothing to do
}

Error runWorker(const std::function<void(Channel &)> &body,
                const std::function<void(const WorkerMessage &)> &onMessage,
                double timeoutS) {
  int fds[2];
  if (pipe(fds) != 0)
    return errorCodeToError(std::error_code(errno, std::generic_category()));
  outs().flush();
  errs().flush();
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return errorCodeToError(std::error_code(errno, std::generic_category()));
  }
  if (pid == 0) {
    close(fds[0]);
    Channel channel(fds[1]);
    body(channel);
    close(fds[1]);
    _exit(0); // no atexit handlers or stdio flushes of the parent's state
  }
  close(fds[1]);
  std::string pending;
  bool silent = false;
  char buf[65536];
  while (true) {
    pollfd p{fds[0], POLLIN, 0};
    int r = poll(&p, 1, timeoutS > 0 ? static_cast<int>(timeoutS * 1000) : -1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0) {
      silent = true;
      kill(pid, SIGKILL);
      break;
    }
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    pending.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos;
         pending.erase(0, nl + 1)) {
      WorkerMessage message;
      Expected<json::Value> value =
          parseJSONBounded(StringRef(pending).take_front(nl), "worker");
      json::Path::Root root;
      if (value && fromJSON(*value, message, root))
        onMessage(message);
      consumeError(value.takeError());
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (silent)
    return createStringError("no progress for %d s: the worker was killed (a "
                             "hung kernel?)",
                             static_cast<int>(timeoutS));
  if (WIFSIGNALED(status))
    return createStringError("the worker process died of signal %d (%s)",
                             WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return createStringError("the worker process exited with status %d",
                             WEXITSTATUS(status));
  return Error::success();
}

} // namespace fly::rt
