//===- CacheTrustTest.cpp - What the disk cache refuses, and its locks ----===//
//
// Entries are tied to their key and toolchain, untrusted owners and modes
// are refused, special and huge files (entries, locks, the pruning
// timestamp) are neither read nor waited on, locks held by this process are
// never waited on and other processes' locks are waited on for a bounded
// time.
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

#include <algorithm>

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

// `cp <entry of key A> <entry of key B>` must not deliver A's objects for B.
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

// A FIFO entry is refused without blocking the lookup (a blocked lookup
// runs into the test's timeout).
TEST_F(CacheTrustTest, FifoEntryIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(entry("binary", key1).c_str(), 0600), 0);
  CompileCache cache(config());
  EXPECT_FALSE(cache.lookup("binary", key1).has_value());
  EXPECT_TRUE(anyContains(cache.takeWarnings(), "not a regular file"));
}

// /dev/zero or a huge sparse file under an entry's name is not read.
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

// A cache on a full disk (RLIMIT_FSIZE stands in) only warns and
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

// A lock this process holds is never waited on.
TEST_F(CacheTrustTest, LockHeldByThisProcessIsNeverWaitedOn) {
  std::string path = entry("binary", key1);
  CacheKeyLock first(path);
  ASSERT_EQ(first.getState(), CacheKeyLock::State::Owned);
  CacheKeyLock second(path);
  // Not OwnedByOther: wait() returns without waiting.
  EXPECT_NE(second.getState(), CacheKeyLock::State::OwnedByOther);
  // getOrCompute of a key this process holds computes at once: nothing on
  // stderr says it waited.
  CompileCache cache(config());
  bool hit = true;
  ::testing::internal::CaptureStderr();
  std::optional<std::string> got = cache.getOrCompute(
      "binary", key1, [] { return std::optional<std::string>("x"); }, hit);
  std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(got.value_or(""), "x");
  EXPECT_EQ(said.find("waiting"), std::string::npos) << said;
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

// A lock naming this process's pid (a container reusing the pid
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

// A lock naming another live pid is waited on for a bounded time, then the
// key is computed without it.
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
  bool hit = true;
  ::testing::internal::CaptureStderr();
  std::optional<std::string> got = cache.getOrCompute(
      "binary", key1, [] { return std::optional<std::string>("x"); }, hit);
  std::string said = ::testing::internal::GetCapturedStderr();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(got.value_or(""), "x");
  EXPECT_FALSE(hit);
  // It waited (saying who holds the lock), then gave up after the timeout.
  EXPECT_NE(said.find("is being compiled by pid " + std::to_string(child)),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("gave up waiting 1 s"), std::string::npos) << said;
}

// A FIFO or a link to /dev/zero under a lock's name would block or exhaust
// memory in LockFileManager's read of it: the key is computed without the
// lock, with a warning.
TEST_F(CacheTrustTest, SpecialFileLocksAreNotOpened) {
  ASSERT_EQ(::mkfifo((entry("binary", key1) + ".lock").c_str(), 0600), 0);
  ASSERT_FALSE(
      llvm::sys::fs::create_link("/dev/zero", entry("binary", key2) + ".lock"));
  CompileCache cache(config());
  for (const CacheKey *key : {&key1, &key2}) {
    bool hit = true;
    std::optional<std::string> got = cache.getOrCompute(
        "binary", *key, [] { return std::optional<std::string>("x"); }, hit);
    EXPECT_EQ(got.value_or(""), "x");
    EXPECT_FALSE(hit);
  }
  std::vector<std::string> warnings = cache.takeWarnings();
  EXPECT_EQ(std::count_if(warnings.begin(), warnings.end(),
                          [](const std::string &w) {
                            return StringRef(w).contains(
                                "is not a regular file; compiling without the "
                                "lock");
                          }),
            2);
}

// Pruning writes llvmcache.timestamp: a FIFO there blocked forever, a link
// wrote outside the cache. Whatever is not a regular file is replaced.
TEST_F(CacheTrustTest, SpecialTimestampDoesNotBlockPruning) {
  llvm::SmallString<256> timestamp(dir);
  llvm::sys::path::append(timestamp, "llvmcache.timestamp");
  llvm::SmallString<256> outside(dir);
  llvm::sys::path::append(outside, "outside");
  for (int special = 0; special < 2; ++special) {
    llvm::sys::fs::remove(timestamp);
    if (special == 0)
      ASSERT_EQ(::mkfifo(timestamp.c_str(), 0600), 0);
    else
      ASSERT_FALSE(llvm::sys::fs::create_link(outside, timestamp));
    CompileCache cache(config());
    cache.prune();
    std::vector<std::string> warnings = cache.takeWarnings();
    llvm::sys::fs::file_status status;
    ASSERT_FALSE(llvm::sys::fs::status(timestamp, status, /*Follow=*/false));
    EXPECT_EQ(status.type(), llvm::sys::fs::file_type::regular_file)
        << (warnings.empty() ? "" : warnings.front());
    EXPECT_FALSE(llvm::sys::fs::exists(outside));
  }
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
