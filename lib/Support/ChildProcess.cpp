//===- ChildProcess.cpp - Child processes that a time limit ends wholly ---===//

#include "Support/ChildProcess.h"
#include "Support/Interrupts.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Signals.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace llvm;

namespace fly {

namespace {
/// The process groups of live children, for an interrupt of this process to
/// end them too (they do not see a terminal's ^C: their group is their own).
constexpr unsigned kMaxLive = 1024;
std::atomic<pid_t> liveGroups[kMaxLive];
std::atomic<unsigned> liveCount{0};

/// SIGTERM first, so that a child which is itself a fly tool ends the
/// groups it started (its ptxas) before SIGKILL ends it.
void killLiveGroups() {
  bool any = false;
  for (std::atomic<pid_t> &group : liveGroups)
    if (pid_t pgid = group.load()) {
      ::kill(-pgid, SIGTERM);
      any = true;
    }
  if (!any)
    return;
  struct timespec grace = {0, 50 * 1000 * 1000};
  ::nanosleep(&grace, nullptr);
  for (std::atomic<pid_t> &group : liveGroups)
    if (pid_t pgid = group.load())
      ::kill(-pgid, SIGKILL);
}

void registerLive(pid_t pgid) {
  for (std::atomic<pid_t> &group : liveGroups) {
    pid_t none = 0;
    if (group.compare_exchange_strong(none, pgid)) {
      ++liveCount;
      addInterruptCallback(killLiveGroups);
      return;
    }
  }
}

void unregisterLive(pid_t pgid) {
  for (std::atomic<pid_t> &group : liveGroups) {
    pid_t expected = pgid;
    if (group.compare_exchange_strong(expected, 0)) {
      --liveCount;
      return;
    }
  }
}

ChildExit exitFromStatus(int status) {
  ChildExit exit;
  if (WIFEXITED(status))
    exit.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    exit.signal = WTERMSIG(status);
  return exit;
}
} // namespace

std::string ChildExit::describe(unsigned timeoutSeconds) const {
  if (!startError.empty())
    return "could not start: " + startError;
  if (timedOut)
    return formatv("ran past its time limit of {0} s and was killed",
                   timeoutSeconds)
        .str();
  if (signal)
    return formatv("was killed by signal {0}", signal).str();
  return formatv("exited with status {0}", exitCode).str();
}

ChildProcess ChildProcess::start(StringRef program, ArrayRef<StringRef> args,
                                 ArrayRef<std::optional<StringRef>> redirects) {
  ChildProcess child;
  std::string programPath = program.str();
  std::vector<std::string> argStorage(args.begin(), args.end());
  SmallVector<char *> argv;
  for (std::string &arg : argStorage)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  std::vector<std::string> paths;
  for (auto [fd, redirect] : llvm::enumerate(redirects)) {
    if (!redirect)
      continue;
    paths.push_back(redirect->empty() ? "/dev/null" : redirect->str());
    int flags = fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC;
    // stdout and stderr into one file share its offset.
    if (fd == 2 && redirects.size() > 1 && redirects[1] &&
        *redirects[1] == *redirect && !redirect->empty())
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
    else
      posix_spawn_file_actions_addopen(&actions, fd, paths.back().c_str(),
                                       flags, 0644);
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  int error = posix_spawn(&pid, programPath.c_str(), &actions, &attributes,
                          argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (error) {
    ChildExit failed;
    failed.startError = programPath + ": " + std::strerror(error);
    child.ended = std::move(failed);
    return child;
  }
  child.pid = pid;
  registerLive(pid);
  return child;
}

ChildProcess::ChildProcess(ChildProcess &&other)
    : pid(other.pid), ended(std::move(other.ended)) {
  other.pid = 0;
}

ChildProcess &ChildProcess::operator=(ChildProcess &&other) {
  if (this != &other) {
    release();
    pid = other.pid;
    ended = std::move(other.ended);
    other.pid = 0;
  }
  return *this;
}

ChildProcess::~ChildProcess() { release(); }

void ChildProcess::release() {
  if (pid > 0 && !ended)
    kill();
  pid = 0;
}

std::optional<ChildExit> ChildProcess::poll() {
  if (ended || pid <= 0)
    return ended;
  // Looked at without reaping: the leader's zombie keeps the group id
  // reserved while the rest of the group is killed, so no other process
  // can have taken it.
  siginfo_t info;
  std::memset(&info, 0, sizeof(info));
  int rc;
  do
    rc = ::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT);
  while (rc < 0 && errno == EINTR);
  if (rc == 0 && info.si_pid == 0)
    return std::nullopt;
  return kill();
}

ChildExit ChildProcess::kill(bool timedOut) {
  if (ended || pid <= 0)
    return ended.value_or(ChildExit());
  // SIGTERM, and a moment to act on it: a child that is a fly tool ends the
  // process groups it started itself (they are not in this group).
  ::kill(-pid, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    siginfo_t info;
    std::memset(&info, 0, sizeof(info));
    if (::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid != 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  int status = 0;
  pid_t done;
  do
    done = ::waitpid(pid, &status, 0);
  while (done < 0 && errno == EINTR);
  unregisterLive(pid);
  ended = done == pid ? exitFromStatus(status) : ChildExit();
  ended->timedOut = timedOut;
  return *ended;
}

ChildExit ChildProcess::wait(unsigned timeoutSeconds) {
  auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    if (std::optional<ChildExit> exit = poll())
      return *exit;
    if (timeoutSeconds && std::chrono::steady_clock::now() - start >=
                              std::chrono::seconds(timeoutSeconds))
      return kill(/*timedOut=*/true);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

ChildExit runChildProcess(StringRef program, ArrayRef<StringRef> args,
                          ArrayRef<std::optional<StringRef>> redirects,
                          unsigned timeoutSeconds) {
  ChildProcess child = ChildProcess::start(program, args, redirects);
  if (!child.hasStarted())
    return *child.poll();
  return child.wait(timeoutSeconds);
}

} // namespace fly
