//===- CacheTrustTest.cpp - What the disk cache refuses, and its locks ----===//
//
// Regression tests of issue 16: entries are tied to their key and toolchain
// (finding 2), untrusted owners and modes are refused (finding 2), special and
// huge files are not read (finding 12), locks held by this process are never
// waited on and other processes' locks are waited on for a bounded time
// (findings 1 and 12).
//
//===----------------------------------------------------------------------===//

#include "fly/Cache/CacheKey.h"
#include "fly/Cache/CompileCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>

using namespace fly;
using llvm::StringRef;

namespace {

bool anyContains(const std::vector<std::string> &warnings, StringRef text) {
  for (const std::string &w : warnings)
    if (StringRef(w).contains(text))
      return true;
  return false;
}

class CacheTrustTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-trust-test", dir));
    ASSERT_FALSE(llvm::sys::fs::setPermissions(dir, llvm::sys::fs::owner_all));
  }
  void TearDown() override {
    llvm::sys::fs::setPermissions(dir, llvm::sys::fs::owner_all);
    llvm::sys::fs::remove_directories(dir);
  }
  CacheConfig config() {
    CacheConfig c;
    c.directory = std::string(dir);
    return c;
  }
  std::string entry(StringRef kind, const CacheKey &k) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, "llvmcache-" + kind + "-" + k.digest());
    return std::string(path);
  }
  llvm::SmallString<128> dir;
  CacheKey key1 = makeBaseKey("module {}", "canonicalize", "gfx942");
  CacheKey key2 = makeBaseKey("module {}", "canonicalize", "gfx90a");
};

// Finding 2: `cp <entry of key A> <entry of key B>` delivered A's objects
// for B, marked cached.
TEST_F(CacheTrustTest, EntryCopiedUnderAnotherKeysNameIsRefused) {
  {
    CompileCache cache(config());
    cache.store("binary", key1, "objects of key 1");
    cache.store("binary", key2, "objects of key 2");
  }
  ASSERT_FALSE(
      llvm::sys::fs::copy_file(entry("binary", key1), entry("binary", key2)));
  CompileCache fresh(config());
  EXPECT_FALSE(fresh.lookup("binary", key2).has_value());
  std::vector<std::string> warnings = fresh.takeWarnings();
  EXPECT_TRUE(anyContains(warnings, "another key")) << warnings.size();
  EXPECT_EQ(fresh.lookup("binary", key1).value_or(""), "objects of key 1");
}

TEST_F(CacheTrustTest, EntryOfAnotherToolchainIsRefused) {
  std::string id = "binary:" + key1.digest();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(entry("binary", key1), ec);
    os << frameCacheEntry(id, "payload", StringRef("llvm=0.0 fly=0 build=x"));
  }
  CompileCache cache(config());
  EXPECT_FALSE(cache.lookup("binary", key1).has_value());
  EXPECT_TRUE(anyContains(cache.takeWarnings(), "another toolchain"));
}

TEST_F(CacheTrustTest, EntryWritableByOthersIsRefusedAndKept) {
  CompileCache(config()).store("binary", key1, "payload");
  std::string path = entry("binary", key1);
  ASSERT_FALSE(llvm::sys::fs::setPermissions(
      path, llvm::sys::fs::all_read | llvm::sys::fs::all_write));
  CompileCache cache(config());
  EXPECT_FALSE(cache.lookup("binary", key1).has_value());
  EXPECT_TRUE(anyContains(cache.takeWarnings(), "writable by other users"));
  EXPECT_TRUE(llvm::sys::fs::exists(path));
}

TEST_F(CacheTrustTest, DirectoryWritableByOthersIsNotUsed) {
  ASSERT_FALSE(llvm::sys::fs::setPermissions(dir, llvm::sys::fs::all_all));
  CompileCache cache(config());
  cache.store("binary", key1, "payload");
  EXPECT_FALSE(llvm::sys::fs::exists(entry("binary", key1)));
  // The memory level still works.
  EXPECT_EQ(cache.lookup("binary", key1).value_or(""), "payload");
  EXPECT_TRUE(anyContains(cache.takeWarnings(), "not trusted"));
}

TEST_F(CacheTrustTest, NewCacheDirectoryIsPrivate) {
  llvm::SmallString<256> sub(dir);
  llvm::sys::path::append(sub, "new-cache");
  CacheConfig c = config();
  c.directory = std::string(sub);
  CompileCache cache(c);
  cache.store("binary", key1, "payload");
  llvm::sys::fs::file_status status;
  ASSERT_FALSE(llvm::sys::fs::status(sub, status));
  EXPECT_EQ(status.permissions() & 077, 0);
  EXPECT_TRUE(cache.takeWarnings().empty());
}

// Finding 12: a FIFO entry hung the lookup forever.
TEST_F(CacheTrustTest, FifoEntryIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(entry("binary", key1).c_str(), 0600), 0);
  CompileCache cache(config());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(cache.lookup("binary", key1).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(anyContains(cache.takeWarnings(), "not a regular file"));
}

// Finding 12: /dev/zero or a huge sparse file was read until memory ran out.
TEST_F(CacheTrustTest, DeviceAndHugeEntriesAreNotRead) {
  ASSERT_FALSE(llvm::sys::fs::create_link("/dev/zero", entry("binary", key1)));
  int fd;
  ASSERT_FALSE(llvm::sys::fs::openFileForWrite(entry("binary", key2), fd));
  ASSERT_FALSE(llvm::sys::fs::resize_file_sparse(fd, 8ull << 30));
  ::close(fd);
  CompileCache cache(config());
  EXPECT_FALSE(cache.lookup("binary", key1).has_value());
  EXPECT_FALSE(cache.lookup("binary", key2).has_value());
  std::vector<std::string> warnings = cache.takeWarnings();
  EXPECT_TRUE(anyContains(warnings, "not a regular file"));
  EXPECT_TRUE(anyContains(warnings, "more than"));
}

// Finding 8: a cache on a full disk (RLIMIT_FSIZE stands in) only warns and
// leaves no entry (no 0-byte or truncated file under the final name).
TEST_F(CacheTrustTest, FullDiskStoreWarnsAndLeavesNoEntry) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    CompileCache cache(config());
    cache.store("binary", key1, std::string(1 << 20, 'x'));
    bool warned = anyContains(cache.takeWarnings(), "continuing without it");
    _exit(warned ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "status " << status;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    EXPECT_FALSE(StringRef(it->path()).contains("llvmcache-binary"))
        << it->path();
}

// Finding 1: a lock this process holds was waited on (600 s per repeat).
TEST_F(CacheTrustTest, LockHeldByThisProcessIsNeverWaitedOn) {
  std::string path = entry("binary", key1);
  CacheKeyLock first(path);
  ASSERT_EQ(first.getState(), CacheKeyLock::State::Owned);
  auto start = std::chrono::steady_clock::now();
  CacheKeyLock second(path);
  EXPECT_NE(second.getState(), CacheKeyLock::State::OwnedByOther);
  second.wait();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // getOrCompute of a key this process holds computes at once.
  CompileCache cache(config());
  bool hit = true;
  std::optional<std::string> got = cache.getOrCompute(
      "binary", key1, [] { return std::optional<std::string>("x"); }, hit);
  EXPECT_EQ(got.value_or(""), "x");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(CacheTrustTest, LockReleasedByThisProcessCanBeTakenAgain) {
  std::string path = entry("binary", key1);
  {
    CacheKeyLock first(path);
  }
  CacheKeyLock again(path);
  EXPECT_EQ(again.getState(), CacheKeyLock::State::Owned);
}

static std::string hostName() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

// Finding 12: a lock naming this process's pid (a container reusing the pid
// of a killed run) is stale, not "alive".
TEST_F(CacheTrustTest, LockNamingThisPidThatIsNotHeldIsStale) {
  std::string path = entry("binary", key1);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path + ".lock", ec);
    os << hostName() << " " << ::getpid();
  }
  CacheKeyLock lock(path);
  EXPECT_EQ(lock.getState(), CacheKeyLock::State::Owned);
}

// Finding 12: a lock naming another live pid was waited on for 600 s
// silently; now the wait is bounded and the key is computed without it.
TEST_F(CacheTrustTest, LockOfAnotherLiveProcessTimesOut) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::sleep(60);
    _exit(0);
  }
  std::string path = entry("binary", key1);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path + ".lock", ec);
    os << hostName() << " " << child;
  }
  ::setenv("FLY_CACHE_LOCK_TIMEOUT", "1", 1);
  CompileCache cache(config());
  ::unsetenv("FLY_CACHE_LOCK_TIMEOUT");
  auto start = std::chrono::steady_clock::now();
  bool hit = true;
  std::optional<std::string> got = cache.getOrCompute(
      "binary", key1, [] { return std::optional<std::string>("x"); }, hit);
  auto took = std::chrono::steady_clock::now() - start;
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(got.value_or(""), "x");
  EXPECT_FALSE(hit);
  EXPECT_GE(took, std::chrono::milliseconds(900));
  EXPECT_LT(took, std::chrono::seconds(10));
}

// Issue 23 finding 10: keys another live process holds were waited for one
// after another. Here each held key is released only once the previous one
// was seen free, last key first: waiting key by key would sit on key 0 until
// its timeout; waiting for all at once sees them free in reverse order.
TEST_F(CacheTrustTest, HeldKeysAreWaitedForAllAtOnce) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::sleep(120);
    _exit(0);
  }
  constexpr size_t kKeys = 8;
  std::vector<std::string> paths;
  std::vector<std::unique_ptr<CacheKeyLock>> locks;
  for (size_t i = 0; i < kKeys; ++i) {
    paths.push_back(
        entry("binary", makeBaseKey("module {}", std::to_string(i), "gfx942")));
    std::error_code ec;
    llvm::raw_fd_ostream os(paths.back() + ".lock", ec);
    os << hostName() << " " << child;
    os.close();
    locks.push_back(std::make_unique<CacheKeyLock>(paths.back(), 600));
    ASSERT_EQ(locks.back()->getState(), CacheKeyLock::State::OwnedByOther);
  }
  std::vector<CacheKeyLock *> waited;
  for (auto &lock : locks)
    waited.push_back(lock.get());
  llvm::sys::fs::remove(paths.back() + ".lock");
  std::vector<size_t> order;
  CacheKeyLock::waitAll(waited, /*maxSeconds=*/60, [&](size_t i) {
    order.push_back(i);
    if (i > 0)
      llvm::sys::fs::remove(paths[i - 1] + ".lock");
  });
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(order, (std::vector<size_t>{7, 6, 5, 4, 3, 2, 1, 0}));
  for (auto &lock : locks) {
    EXPECT_FALSE(lock->timedOut());
    EXPECT_EQ(lock->getState(), CacheKeyLock::State::Owned);
  }
}

TEST(CacheLockTimeout, EnvironmentIsParsedStrictly) {
  for (const char *bad : {"abc", "-1", "1e3", "5s", " 5", "", "86401"}) {
    ::setenv("FLY_CACHE_LOCK_TIMEOUT", bad, 1);
    llvm::Expected<unsigned> t = CacheKeyLock::timeoutFromEnvironment();
    EXPECT_FALSE(static_cast<bool>(t)) << bad;
    if (!t)
      llvm::consumeError(t.takeError());
  }
  ::setenv("FLY_CACHE_LOCK_TIMEOUT", "7", 1);
  EXPECT_EQ(llvm::cantFail(CacheKeyLock::timeoutFromEnvironment()), 7u);
  ::unsetenv("FLY_CACHE_LOCK_TIMEOUT");
  EXPECT_EQ(llvm::cantFail(CacheKeyLock::timeoutFromEnvironment()),
            CacheKeyLock::kDefaultTimeoutSeconds);
}

} // namespace
