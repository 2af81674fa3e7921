//===- OutputDirectoryTest.cpp - Out-dirs, file names, safe reads ---------===//
//
// Names from module symbols stay in their directory, out-dirs are replaced
// whole with foreign files kept, only staging directories fly made are
// cleaned up, special files are not read, a full disk is an error, not a
// partial file.
//
//===----------------------------------------------------------------------===//

#include "fly/Support/OutputDirectory.h"
#include "fly/Support/FileName.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

using namespace fly;
using llvm::StringRef;

namespace {

TEST(FileName, SanitisedComponentsStayInTheirDirectory) {
  EXPECT_EQ(sanitizeFileNameComponent("kernels"), "kernels");
  EXPECT_EQ(sanitizeFileNameComponent("k_1.a-b"), "k_1.a-b");
  for (StringRef hostile : std::initializer_list<StringRef>{
           "/../../../../../x/abs", "..", ".", "", "a/b", "a\\b", ".hidden",
           StringRef("a\0b", 3), "k\n"}) {
    std::string name = sanitizeFileNameComponent(hostile);
    EXPECT_TRUE(isPlainFileName(name)) << name;
    EXPECT_EQ(name.find('/'), std::string::npos) << name;
    EXPECT_NE(name.front(), '.') << name;
  }
  // Distinct inputs keep distinct names.
  EXPECT_NE(sanitizeFileNameComponent("a/b"), sanitizeFileNameComponent("a_b"));
  EXPECT_LE(sanitizeFileNameComponent(std::string(1000, 'x')).size(), 110u);
  EXPECT_FALSE(isPlainFileName("../x"));
  EXPECT_FALSE(isPlainFileName(".."));
  EXPECT_FALSE(isPlainFileName("a/b"));
  EXPECT_TRUE(isPlainFileName("v0.k.hsaco"));
}

class OutputDirectoryTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-outdir-test", root));
    out = path("out");
  }
  void TearDown() override {
    llvm::sys::fs::setPermissions(root, llvm::sys::fs::owner_all);
    llvm::sys::fs::setPermissions(out, llvm::sys::fs::owner_all);
    llvm::sys::fs::remove_directories(root);
  }
  /// Nothing but the out-dir and its lock beside it: no staging directory,
  /// no old version, no temporary.
  void expectOnlyOutDirAndLock() {
    for (const std::string &name : list(root))
      EXPECT_TRUE(name == "out" || name == ".out.fly-lock") << name;
  }
  std::string path(StringRef name) {
    llvm::SmallString<256> p(root);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  std::string read(StringRef file) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    return buffer ? (*buffer)->getBuffer().str() : "<missing>";
  }
  std::vector<std::string> list(StringRef dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    std::sort(names.begin(), names.end());
    return names;
  }
  /// Runs `child` in a forked process that is to end by a signal (it pauses
  /// once `child` returns) and expects that it did.
  void expectEndedBySignal(llvm::function_ref<void()> child) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      child();
      ::pause();
      _exit(3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "status " << status;
  }
  void writeRun(StringRef a, StringRef b) {
    auto dir = OutputDirectory::create(out);
    ASSERT_TRUE(static_cast<bool>(dir)) << llvm::toString(dir.takeError());
    ASSERT_FALSE(static_cast<bool>((*dir)->write("a.txt", a)));
    if (!b.empty())
      ASSERT_FALSE(static_cast<bool>((*dir)->write("b.txt", b)));
    llvm::Error err = (*dir)->commit();
    ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  }
  llvm::SmallString<128> root;
  std::string out;
};

TEST_F(OutputDirectoryTest, ReplacesTheWholeDirectoryAndKeepsForeignFiles) {
  writeRun("1", "1");
  EXPECT_EQ(read(out + "/a.txt"), "1");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(out + "/best-config.json", ec);
    os << "mine";
  }
  // The second run writes no b.txt: the first run's b.txt goes, the file
  // fly did not write stays.
  writeRun("2", "");
  EXPECT_EQ(read(out + "/a.txt"), "2");
  EXPECT_FALSE(llvm::sys::fs::exists(out + "/b.txt"));
  EXPECT_EQ(read(out + "/best-config.json"), "mine");
  // No staging directory or old version is left beside it.
  expectOnlyOutDirAndLock();
}

TEST_F(OutputDirectoryTest, ThreadsWriteIntoOneStagingDirectory) {
  auto dir = OutputDirectory::create(out);
  ASSERT_TRUE(static_cast<bool>(dir)) << llvm::toString(dir.takeError());
  constexpr int threads = 8, filesPerThread = 40;
  std::atomic<int> failures{0}, sameNameRefused{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < filesPerThread; ++i) {
        std::string name = "t" + std::to_string(t) + "-" + std::to_string(i);
        if (llvm::Error err = (*dir)->write(name, name)) {
          llvm::consumeError(std::move(err));
          ++failures;
        }
        // Every thread also tries the one shared name: one write wins.
        if (i == 0)
          if (llvm::Error err = (*dir)->write("shared", "x")) {
            llvm::consumeError(std::move(err));
            ++sameNameRefused;
          }
      }
    });
  for (std::thread &writer : writers)
    writer.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(sameNameRefused.load(), threads - 1);
  llvm::Error err = (*dir)->commit();
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < filesPerThread; ++i) {
      std::string name = "t" + std::to_string(t) + "-" + std::to_string(i);
      EXPECT_EQ(read(out + "/" + name), name);
    }
  // The record (a comment line, then one file per line) lists every file
  // once, "shared" too: the next run removes exactly these.
  std::string record = read(out + "/" + OutputDirectory::kRecordName.str());
  EXPECT_EQ(std::count(record.begin(), record.end(), '\n'),
            1 + threads * filesPerThread + 1);
}

TEST_F(OutputDirectoryTest, UncommittedRunLeavesThePreviousOutDir) {
  writeRun("1", "1");
  {
    auto dir = OutputDirectory::create(out);
    ASSERT_TRUE(static_cast<bool>(dir));
    ASSERT_FALSE(static_cast<bool>((*dir)->write("a.txt", "2")));
    // Destroyed without commit(): an error in the middle of a sweep.
  }
  EXPECT_EQ(read(out + "/a.txt"), "1");
  EXPECT_EQ(read(out + "/b.txt"), "1");
  expectOnlyOutDirAndLock();
}

TEST_F(OutputDirectoryTest, NamesThatLeaveTheDirectoryAreRefused) {
  auto dir = OutputDirectory::create(out);
  ASSERT_TRUE(static_cast<bool>(dir));
  for (StringRef bad : {"../x", "/abs", "..", "a/b", ".fly-outdir"}) {
    llvm::Error err = (*dir)->write(bad, "x");
    EXPECT_TRUE(static_cast<bool>(err)) << bad.str();
    llvm::consumeError(std::move(err));
  }
  EXPECT_FALSE(llvm::sys::fs::exists(path("x")));
}

TEST_F(OutputDirectoryTest, BadOutDirsAreReportedUpFront) {
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path("file"), ec);
  }
  llvm::Error err = OutputDirectory::check(path("file"));
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("not a directory"),
            std::string::npos);
  if (::getuid() != 0) {
    ASSERT_FALSE(llvm::sys::fs::create_directory(out));
    ASSERT_FALSE(llvm::sys::fs::setPermissions(
        out, llvm::sys::fs::all_read | llvm::sys::fs::all_exe));
    err = OutputDirectory::check(out);
    ASSERT_TRUE(static_cast<bool>(err));
    EXPECT_NE(llvm::toString(std::move(err)).find("not writable"),
              std::string::npos);
  }
  err = OutputDirectory::check(".");
  EXPECT_TRUE(static_cast<bool>(err));
  llvm::consumeError(std::move(err));
}

// Issue 23 finding 12: these were found only when the out-dir was replaced,
// after the whole sweep had compiled.
TEST_F(OutputDirectoryTest, DanglingOrLoopingSymlinkIsReportedUpFront) {
  ASSERT_FALSE(llvm::sys::fs::create_link(path("nowhere"), out));
  llvm::Error err = OutputDirectory::check(out);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("symlink that leads nowhere"),
            std::string::npos);
  ASSERT_FALSE(llvm::sys::fs::remove(out));
  ASSERT_FALSE(llvm::sys::fs::create_link(out, out));
  err = OutputDirectory::check(out);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("symlink that leads nowhere"),
            std::string::npos);
}

// Issue 23 finding 12: every run recreated the out-dir with mode 0750.
TEST_F(OutputDirectoryTest, ReplacedOutDirKeepsItsMode) {
  writeRun("1", "1");
  ASSERT_EQ(::chmod(out.c_str(), 0755), 0);
  writeRun("2", "2");
  struct stat after;
  ASSERT_EQ(::stat(out.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0755u);
  ASSERT_EQ(::chmod(out.c_str(), 0711), 0);
  writeRun("3", "3");
  ASSERT_EQ(::stat(out.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0711u);
}

TEST_F(OutputDirectoryTest, ForeignFileWithAnOutputsNameIsRefused) {
  ASSERT_FALSE(llvm::sys::fs::create_directory(out));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(out + "/a.txt", ec);
    os << "user's";
  }
  auto dir = OutputDirectory::create(out);
  ASSERT_TRUE(static_cast<bool>(dir));
  ASSERT_FALSE(static_cast<bool>((*dir)->write("a.txt", "new")));
  llvm::Error err = (*dir)->commit();
  ASSERT_TRUE(static_cast<bool>(err));
  llvm::consumeError(std::move(err));
  EXPECT_EQ(read(out + "/a.txt"), "user's");
}

// Concurrent writers of one out-dir never mix their files.
TEST_F(OutputDirectoryTest, ConcurrentWritersNeverMix) {
  constexpr int kWriters = 8;
  std::vector<pid_t> children;
  for (int i = 0; i < kWriters; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto dir = OutputDirectory::create(out);
      if (!dir)
        _exit(1);
      std::string tag = std::to_string(i);
      for (int f = 0; f < 20; ++f)
        if ((*dir)->write("f" + std::to_string(f), tag))
          _exit(2);
      _exit((*dir)->commit() ? 3 : 0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string first = read(out + "/f0");
  for (int f = 0; f < 20; ++f)
    EXPECT_EQ(read(out + "/f" + std::to_string(f)), first) << f;
  expectOnlyOutDirAndLock();
}

// A run killed while writing leaves the previous out-dir whole.
TEST_F(OutputDirectoryTest, KilledWriterLeavesThePreviousOutDir) {
  writeRun("1", "1");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto dir = OutputDirectory::create(out);
    if (dir) {
      (void)(*dir)->write("a.txt", "2");
      ::kill(::getpid(), SIGKILL);
    }
    _exit(1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(read(out + "/a.txt"), "1");
  // The next run removes the killed run's staging directory.
  writeRun("3", "3");
  EXPECT_EQ(read(out + "/a.txt"), "3");
  expectOnlyOutDirAndLock();
}

// A directory of the user's named like a killed run's staging directory
// (`.<out>.fly-staging-<dead pid>-*`) holds no staging marker: it is kept.
TEST_F(OutputDirectoryTest, UsersDirectoryNamedLikeStagingIsKept) {
  pid_t dead = fork();
  ASSERT_GE(dead, 0);
  if (dead == 0)
    _exit(0);
  waitpid(dead, nullptr, 0);
  std::string mine = path(".out.fly-staging-" + std::to_string(dead) + "-abc");
  ASSERT_FALSE(llvm::sys::fs::create_directory(mine));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(mine + "/backup.tar", ec);
    os << "precious";
  }
  writeRun("1", "1");
  EXPECT_EQ(read(mine + "/backup.tar"), "precious");
  EXPECT_EQ(read(out + "/a.txt"), "1");
}

// SIGINT or SIGTERM in the middle of the write removes what was
// staged (files and the staging directory) and leaves the previous out-dir.
TEST_F(OutputDirectoryTest, InterruptedWriterLeavesNoTemporaries) {
  writeRun("1", "1");
  for (int sig : {SIGINT, SIGTERM}) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto dir = OutputDirectory::create(out);
      if (dir) {
        for (int f = 0; f < 50; ++f)
          (void)(*dir)->write("f" + std::to_string(f), "partial");
        ::raise(sig);
      }
      _exit(1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "status " << status;
    EXPECT_EQ(read(out + "/a.txt"), "1");
    expectOnlyOutDirAndLock();
  }
}

// SIGINT in the middle of a commit, as its marker goes and the swap comes:
// the handler waits for the commit, which was past its last chance to stop,
// so the out-dir is the new one, whole, with the user's file carried over.
// (A handler that emptied the staging directory meanwhile emptied the new
// out-dir, and the user's file went with both versions.)
TEST_F(OutputDirectoryTest, InterruptDuringTheSwapWaitsForTheCommit) {
  writeRun("1", "1");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(out + "/mine.txt", ec);
    os << "mine";
  }
  constexpr int kFiles = 4000;
  expectEndedBySignal([&] {
    auto dir = OutputDirectory::create(out);
    if (!dir)
      _exit(2);
    for (int f = 0; f < kFiles; ++f)
      if ((*dir)->write("f" + std::to_string(f), "2"))
        _exit(2);
    std::string marker = (*dir)->getStagingPath() + "/" +
                         OutputDirectory::kStagingMarkerName.str();
    std::thread signaller([marker] {
      while (llvm::sys::fs::exists(marker))
        ;
      ::kill(::getpid(), SIGINT);
    });
    signaller.detach();
    (void)!(*dir)->commit();
  });
  EXPECT_EQ(read(out + "/mine.txt"), "mine");
  int present = 0;
  for (int f = 0; f < kFiles; ++f)
    present += llvm::sys::fs::exists(out + "/f" + std::to_string(f));
  EXPECT_EQ(present, kFiles);
  EXPECT_FALSE(llvm::sys::fs::exists(out + "/a.txt"));
  expectOnlyOutDirAndLock();
}

// A sweep of more kernels than one chunk of the handler's slots stages as
// many out-dirs at once: SIGINT removes every staging directory.
TEST_F(OutputDirectoryTest, InterruptRemovesEveryStagingOfALargeSweep) {
  constexpr int kOutDirs = 300;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<std::unique_ptr<OutputDirectory>> dirs;
    for (int k = 0; k < kOutDirs; ++k) {
      auto dir = OutputDirectory::create(path("k" + std::to_string(k)));
      if (!dir || (*dir)->write("a.txt", "partial"))
        _exit(2);
      dirs.push_back(std::move(*dir));
    }
    ::raise(SIGINT);
    _exit(1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(list(root), std::vector<std::string>{});
}

// SIGINT after the new out-dir took the previous one's place, while the
// previous one (now under the staging name) is being removed: the handler
// removes what the previous run recorded there, then the directory. Many
// previous files keep the window wide; the signal comes as soon as the
// out-dir's inode changes.
TEST_F(OutputDirectoryTest,
       InterruptWhileThePreviousOutDirGoesLeavesNoStaging) {
  {
    auto dir = OutputDirectory::create(out);
    ASSERT_TRUE(static_cast<bool>(dir)) << llvm::toString(dir.takeError());
    for (int f = 0; f < 4000; ++f)
      ASSERT_FALSE(
          static_cast<bool>((*dir)->write("f" + std::to_string(f), "1")));
    ASSERT_FALSE(static_cast<bool>((*dir)->commit()));
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(out + "/mine.txt", ec);
    os << "mine";
  }
  struct stat before;
  ASSERT_EQ(::stat(out.c_str(), &before), 0);
  expectEndedBySignal([&] {
    std::thread signaller([&] {
      struct stat now;
      for (;;)
        if (::stat(out.c_str(), &now) == 0 && now.st_ino != before.st_ino) {
          ::kill(::getpid(), SIGINT);
          return;
        }
    });
    signaller.detach();
    auto dir = OutputDirectory::create(out);
    if (dir && !(*dir)->write("a.txt", "2"))
      (void)!(*dir)->commit();
  });
  EXPECT_EQ(read(out + "/a.txt"), "2");
  EXPECT_EQ(read(out + "/mine.txt"), "mine");
  EXPECT_FALSE(llvm::sys::fs::exists(out + "/f0"));
  expectOnlyOutDirAndLock();
}

// A full disk while writing the out-dir (RLIMIT_FSIZE stands in:
// writes past the limit fail with EFBIG as they would with ENOSPC) is an
// error and leaves the previous out-dir and no staging directory.
TEST_F(OutputDirectoryTest, FullDiskLeavesThePreviousOutDir) {
  writeRun("1", "1");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    bool failed;
    {
      // Destroyed before _exit, as an error returned through the tool would.
      auto dir = OutputDirectory::create(out);
      if (!dir)
        _exit(2);
      llvm::Error err = (*dir)->write("a.txt", std::string(1 << 20, 'x'));
      failed = static_cast<bool>(err);
      llvm::consumeError(std::move(err));
    }
    _exit(failed ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "status " << status;
  EXPECT_EQ(read(out + "/a.txt"), "1");
  EXPECT_EQ(read(out + "/b.txt"), "1");
  expectOnlyOutDirAndLock();
}

TEST(SafeFile, SpecialFilesAreRefusedWithoutBlocking) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-safefile-test", dir));
  std::string fifo = (dir + "/fifo").str();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Without blocking: a blocked read runs into the test's timeout.
  for (StringRef special :
       {StringRef(fifo), StringRef("/dev/zero"), StringRef(dir)}) {
    auto buffer = readRegularFile(special, 1 << 20);
    EXPECT_FALSE(static_cast<bool>(buffer)) << special.str();
    if (!buffer)
      EXPECT_NE(llvm::toString(buffer.takeError()).find("not a regular file"),
                std::string::npos);
  }
  std::string big = (dir + "/big").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(big, ec);
    os << std::string(100, 'x');
  }
  auto buffer = readRegularFile(big, 10);
  ASSERT_FALSE(static_cast<bool>(buffer));
  llvm::consumeError(buffer.takeError());
  EXPECT_EQ(llvm::cantFail(readRegularFile(big, 100))->getBufferSize(), 100u);
  llvm::sys::fs::remove_directories(dir);
}

// A full disk is an error, neither "LLVM ERROR: IO failure on output stream"
// nor a truncated file under the final name. RLIMIT_FSIZE fails writes past
// 4 KiB the way a full disk does (EFBIG instead of ENOSPC).
TEST(SafeFile, FailedWriteIsAnErrorAndLeavesNoFile) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-safefile-test", dir));
  std::string target = (dir + "/entry").str();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    llvm::Error err = writeFileAtomically(target, std::string(1 << 20, 'x'));
    bool failed = static_cast<bool>(err);
    llvm::consumeError(std::move(err));
    _exit(failed ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "status " << status;
  std::error_code ec;
  llvm::sys::fs::directory_iterator it(dir, ec);
  EXPECT_EQ(it, llvm::sys::fs::directory_iterator()) << it->path();
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
