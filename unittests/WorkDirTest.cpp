//===- WorkDirTest.cpp - The process executor's work directories ----------===//

#include "fly/Executor/WorkDir.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace fly;

namespace {

class WorkDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("fly-workdir-test", root));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }
  std::string make(llvm::StringRef name) {
    llvm::SmallString<256> dir(root);
    llvm::sys::path::append(dir, name);
    EXPECT_FALSE(llvm::sys::fs::create_directories(dir));
    return std::string(dir);
  }
  llvm::SmallString<128> root;
};

static std::string host() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

static void writeOwner(llvm::StringRef dir, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream os((dir + "/owner").str(), ec);
  os << text;
}

// A killed run's work directory goes with the next run; a live run's, one
// without an owner file and one that is not a fly-replay-* are kept.
TEST_F(WorkDirTest, OnlyWorkDirsOfDeadOwnersAreRemoved) {
  pid_t dead = fork();
  ASSERT_GE(dead, 0);
  if (dead == 0)
    _exit(0);
  waitpid(dead, nullptr, 0);
  std::string stale = make("fly-replay-stale");
  writeOwner(stale, std::to_string(dead) + " " + host() + "\n");
  std::string live = make("fly-replay-live");
  writeOwner(live, std::to_string(::getpid()) + " " + host() + "\n");
  std::string otherHost = make("fly-replay-elsewhere");
  writeOwner(otherHost, std::to_string(dead) + " not-" + host() + "\n");
  std::string unowned = make("fly-replay-mine");
  std::string user = make("notes");
  writeOwner(user, std::to_string(dead) + " " + host() + "\n");
  ASSERT_FALSE(static_cast<bool>(markWorkDirOwner(live)));

  removeStaleWorkDirs(root);
  EXPECT_FALSE(llvm::sys::fs::exists(stale));
  for (const std::string &kept : {live, otherHost, unowned, user})
    EXPECT_TRUE(llvm::sys::fs::exists(kept)) << kept;
}

// A child started from a work directory dies with the process that owns it
// (SIGKILL at the owner's death). The helper process is a subreaper, so the
// orphaned child becomes its child and its end can be waited for; a child
// that does not die hangs this test into its timeout.
TEST_F(WorkDirTest, ChildDiesWithTheOwner) {
  std::string dir = make("fly-replay-tied");
  pid_t helper = fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    int ready[2];
    if (::pipe(ready))
      _exit(10);
    pid_t owner = fork();
    if (owner == 0) {
      if (markWorkDirOwner(dir))
        _exit(11);
      pid_t child = fork();
      if (child == 0) {
        char ok = dieWithWorkDirOwner(dir) ? 1 : 0;
        (void)!::write(ready[1], &ok, 1);
        ::pause();
        _exit(12);
      }
      char ok = 0;
      if (::read(ready[0], &ok, 1) != 1 || !ok)
        _exit(13);
      (void)!::write(ready[1], &child, sizeof(child));
      _exit(0); // The owner dies; the child must follow.
    }
    int status = 0;
    ::waitpid(owner, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      _exit(20 + (WIFEXITED(status) ? WEXITSTATUS(status) : 0));
    pid_t child = 0;
    if (::read(ready[0], &child, sizeof(child)) != sizeof(child))
      _exit(30);
    ::waitpid(child, &status, 0);
    _exit(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : 31);
  }
  int status = 0;
  ::waitpid(helper, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "status " << status;
}

// Processes that are not the owner's children (a Slurm task, a user running
// --run-plan by hand) are left alone.
TEST_F(WorkDirTest, OthersAreNotTied) {
  std::string dir = make("fly-replay-other");
  EXPECT_TRUE(dieWithWorkDirOwner(dir));
  ASSERT_FALSE(static_cast<bool>(markWorkDirOwner(dir)));
  EXPECT_TRUE(dieWithWorkDirOwner(dir));
  int signal = -1;
  ::prctl(PR_GET_PDEATHSIG, &signal);
  EXPECT_EQ(signal, 0);
}

} // namespace
