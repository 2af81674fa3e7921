//===- SlurmArrayTest.cpp - Shards, task scripts, real job arrays ---------===//
//
// The Slurm tests run trivial shard commands (touch a file per item) on a
// real cluster: the one scripts/slurm-local.sh starts. Without one they skip
// and say so.
//
//===----------------------------------------------------------------------===//

#include "fly/Executor/SlurmArray.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include "gtest/gtest.h"

#include <csignal>
#include <cstdlib>
#include <thread>

#include <unistd.h>

using namespace fly;

namespace {

TEST(SlurmShardSize, CoversTheTargetTaskLength) {
  SlurmShardPolicy policy;
  policy.targetTaskSeconds = 10;
  policy.taskOverheadSeconds = 1;
  // 0.5 s items on one CPU: 20 per 10 s task.
  EXPECT_EQ(slurmShardSize(100, 0.5, policy), 20u);
  // Four CPUs run four at once.
  policy.cpusPerTask = 4;
  EXPECT_EQ(slurmShardSize(100, 0.5, policy), 50u);
  // Fewer items than a shard: one task.
  EXPECT_EQ(slurmShardSize(7, 0.5, policy), 7u);
  // Shards are even: 100 items at most 30 per task -> 4 tasks of 25.
  policy.cpusPerTask = 1;
  policy.targetTaskSeconds = 15;
  EXPECT_EQ(slurmShardSize(100, 0.5, policy), 25u);
  // The target never drops below ten times the overhead.
  policy.targetTaskSeconds = 1;
  policy.taskOverheadSeconds = 2;
  EXPECT_EQ(slurmShardSize(1000, 1, policy), 20u);
  // maxTasks bounds the array.
  policy.maxTasks = 10;
  EXPECT_EQ(slurmShardSize(1000, 1, policy), 100u);
  EXPECT_EQ(slurmShardSize(0, 1, policy), 1u);
}

TEST(SlurmShardSize, SpreadsOverFreeSlots) {
  SlurmShardPolicy policy;
  policy.targetTaskSeconds = 60;
  policy.taskOverheadSeconds = 1;
  // 1000 items of 0.5 s: 120 per 60 s task. 64 free slots would take 16
  // each, under the floor of 10 s of work (20 items): 20 per task.
  policy.slots = 64;
  EXPECT_EQ(slurmShardSize(1000, 0.5, policy), 20u);
  // 8 slots: 125 each would exceed the target; 120 -> 9 tasks of 112.
  policy.slots = 8;
  EXPECT_EQ(slurmShardSize(1000, 0.5, policy), 112u);
  // 40 slots: 25 each.
  policy.slots = 40;
  EXPECT_EQ(slurmShardSize(1000, 0.5, policy), 25u);
}

TEST(SlurmSbatchArgs, CpusPerTask) {
  EXPECT_EQ(slurmCpusPerTask({}), 1u);
  EXPECT_EQ(slurmCpusPerTask({"--partition=cpu", "--cpus-per-task=16"}), 16u);
  EXPECT_EQ(slurmCpusPerTask({"--cpus-per-task", "8", "-p", "x"}), 8u);
  EXPECT_EQ(slurmCpusPerTask({"-c4"}), 4u);
  EXPECT_EQ(slurmCpusPerTask({"-c", "6", "--constraint=gpu"}), 6u);
  // The last one wins, as in sbatch; nonsense leaves the default.
  EXPECT_EQ(slurmCpusPerTask({"-c", "6", "--cpus-per-task=2"}), 2u);
  EXPECT_EQ(slurmCpusPerTask({"--cpus-per-task=many"}), 1u);
  EXPECT_EQ(slurmCpusPerTask({"-C", "8"}), 1u);
}

TEST(SlurmSqueue, ParsesOneLinePerTask) {
  std::vector<SlurmTaskState> tasks =
      parseSqueueTasks("3|COMPLETED|None|vm\n1|PENDING|Resources|\n"
                       "2|FAILED|NonZeroExitCode|vm\n0-5%2|PENDING|None|\n");
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].task, 3u);
  EXPECT_TRUE(tasks[0].finished());
  EXPECT_EQ(tasks[1].reason, "Resources");
  EXPECT_FALSE(tasks[1].finished());
  EXPECT_EQ(tasks[2].state, "FAILED");
  EXPECT_TRUE(tasks[2].finished());
}

/// A fresh directory for one test, removed afterwards.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-slurm-test", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const llvm::Twine &name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
};

static std::string readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string("<missing>");
}

TEST(SlurmTaskScript, RunsItsShardWithQuotedArguments) {
  TempDir dir;
  std::string out = dir.file("out");
  std::string script = renderSlurmTaskScript(
      {{{"/bin/sh", "-c", "echo first >> \"$1\"", "sh", out}},
       {{"/bin/sh", "-c", "printf '%s|' \"$@\" >> \"$0\"", out,
         "it's \"quoted\" $HOME", "--jobs=" + kSlurmCpusToken.str()},
        {"/bin/false"},
        {"/bin/sh", "-c", "echo after >> \"$1\"", "sh", out}}},
      {{"FLY_TEST_VAR", "a b'c"}});
  std::string path = dir.file("tasks.sh");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << script;
  }
  auto runTask = [&](const char *task, const char *cpus) {
    setenv("SLURM_ARRAY_TASK_ID", task, 1);
    if (cpus)
      setenv("SLURM_CPUS_PER_TASK", cpus, 1);
    else
      unsetenv("SLURM_CPUS_PER_TASK");
    llvm::StringRef argv[] = {"/bin/sh", path};
    int status = llvm::sys::ExecuteAndWait("/bin/sh", argv);
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("SLURM_CPUS_PER_TASK");
    return status;
  };
  EXPECT_EQ(runTask("0", nullptr), 0);
  EXPECT_EQ(readFile(out), "first\n");
  // Task 1: a failing command does not stop the next one; the task fails.
  EXPECT_NE(runTask("1", "6"), 0);
  EXPECT_EQ(readFile(out), "first\nit's \"quoted\" $HOME|--jobs=6|after\n");
  EXPECT_EQ(runTask("7", nullptr), 64);
}

/// The test cluster (scripts/slurm-local.sh), never the user's SLURM_CONF:
/// FLY_TEST_SLURM_CONF, else $FLY_SLURM_RUN/slurm.conf (/tmp/fly-slurm).
/// Returns why it cannot be used, or "".
static std::string probeSlurm() {
  std::string conf = llvm::sys::Process::GetEnv("FLY_TEST_SLURM_CONF")
                         .value_or(llvm::sys::Process::GetEnv("FLY_SLURM_RUN")
                                       .value_or("/tmp/fly-slurm") +
                                   "/slurm.conf");
  setenv("SLURM_CONF", conf.c_str(), 1);
  auto scontrol = llvm::sys::findProgramByName("scontrol");
  if (!scontrol)
    return "Slurm is not installed (no scontrol); scripts/slurm-local.sh "
           "start installs and starts a single-node cluster";
  // Without its configuration file scontrol would look for the controller
  // in DNS, which can take long.
  if (!llvm::sys::fs::exists(conf))
    return "no test cluster: " + conf +
           " does not exist; scripts/slurm-local.sh start brings one up";
  llvm::StringRef argv[] = {*scontrol, "ping"};
  std::optional<llvm::StringRef> quiet[] = {
      llvm::StringRef(""), llvm::StringRef(""), llvm::StringRef("")};
  if (llvm::sys::ExecuteAndWait(*scontrol, argv, std::nullopt, quiet, 20) != 0)
    return "no Slurm controller answers 'scontrol ping' with SLURM_CONF=" +
           conf + "; scripts/slurm-local.sh start brings one up";
  return "";
}

/// Probed once per process.
static const std::string &slurmUnavailable() {
  static const std::string why = probeSlurm();
  return why;
}

#define REQUIRE_SLURM()                                                        \
  if (const std::string &why = slurmUnavailable(); !why.empty())               \
  GTEST_SKIP() << why

/// Shard commands that create <dir>/done/<item> for every item, except that
/// an item listed in `failOnce` fails its task the first time; a `crash-<i>`
/// item kills its task at once, the items after it undone.
static std::vector<ShellCommand> touchShard(const TempDir &dir,
                                            llvm::ArrayRef<unsigned> items) {
  std::string script =
      "d=\"$1\"; shift; s=0; for i in \"$@\"; do "
      "if [ -e \"$d/fail-once-$i\" ]; then rm \"$d/fail-once-$i\"; s=1; "
      "elif [ -e \"$d/fail-always-$i\" ]; then s=1; "
      "elif [ -e \"$d/crash-$i\" ]; then kill -9 $$; "
      "else echo $i > \"$d/done/$i\"; fi; done; exit $s";
  ShellCommand command = {"/bin/sh", "-c", script, "sh", std::string(dir.path)};
  for (unsigned item : items)
    command.push_back(std::to_string(item));
  return {command};
}

static void touch(const std::string &path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  EXPECT_FALSE(ec);
}

static SlurmArrayOptions testOptions(const TempDir &dir) {
  SlurmArrayOptions options;
  options.stateDir = dir.file("state");
  options.jobName = "fly-unittest";
  options.timeoutSeconds = 120;
  options.minPollSeconds = 0.1;
  options.maxPollSeconds = 0.5;
  return options;
}

TEST(SlurmArrayRunner, DeliversEveryItemAndRetriesFailedShards) {
  REQUIRE_SLURM();
  TempDir dir;
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir.file("done")));
  // Item 4 fails its task (items 3-5) once: the items of that task lacking a
  // result go again; item 8 always fails and is reported.
  touch(dir.file("fail-once-4"));
  touch(dir.file("fail-always-8"));
  SlurmArrayRunner runner(testOptions(dir));
  std::vector<unsigned> items = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto report = runner.run(
      items, 3,
      [&](llvm::ArrayRef<unsigned> shard) { return touchShard(dir, shard); },
      [&](unsigned item) {
        return llvm::sys::fs::exists(dir.file("done/" + llvm::Twine(item)));
      });
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  EXPECT_EQ(report->arrays.size(), 2u);
  // Retried one per task: 4 (failed once, then delivered) and 8 (failed
  // twice).
  EXPECT_EQ(report->tasksSubmitted, 4u + 2u);
  EXPECT_EQ(report->resubmittedItems, 2u);
  ASSERT_EQ(report->failed.size(), 1u);
  EXPECT_EQ(report->failed.begin()->first, 8u);
  EXPECT_NE(report->failed.begin()->second.find("FAILED"), std::string::npos)
      << report->failed.begin()->second;
  for (unsigned item : items)
    EXPECT_EQ(item != 8,
              llvm::sys::fs::exists(dir.file("done/" + llvm::Twine(item))));
  // Nothing left for a later run to wait for.
  EXPECT_FALSE(llvm::sys::fs::exists(dir.file("state/running-array")));
}

// Issue 23 finding 5: a crashing item killed its shard, the retry submitted
// the same shard, and the innocent item after it was lost again.
TEST(SlurmArrayRunner, SurvivorsOfACrashedShardAreRetriedAlone) {
  REQUIRE_SLURM();
  TempDir dir;
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir.file("done")));
  touch(dir.file("crash-1"));
  SlurmArrayRunner runner(testOptions(dir));
  std::vector<unsigned> items = {0, 1, 2, 3, 4, 5};
  auto report = runner.run(
      items, 3,
      [&](llvm::ArrayRef<unsigned> shard) { return touchShard(dir, shard); },
      [&](unsigned item) {
        return llvm::sys::fs::exists(dir.file("done/" + llvm::Twine(item)));
      });
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  // Items 1 (the crash) and 2 (killed with it) go again, each alone.
  EXPECT_EQ(report->resubmittedItems, 2u);
  EXPECT_EQ(report->tasksSubmitted, 2u + 2u);
  ASSERT_EQ(report->failed.size(), 1u);
  EXPECT_EQ(report->failed.begin()->first, 1u);
  for (unsigned item : items)
    EXPECT_EQ(item != 1,
              llvm::sys::fs::exists(dir.file("done/" + llvm::Twine(item))));
}

TEST(SlurmArrayRunner, SubmitsNothingWhenEverythingIsDone) {
  REQUIRE_SLURM();
  TempDir dir;
  SlurmArrayRunner runner(testOptions(dir));
  unsigned calls = 0;
  auto report = runner.run(
      {0, 1, 2}, 2,
      [&](llvm::ArrayRef<unsigned> shard) {
        ++calls;
        return touchShard(dir, shard);
      },
      [](unsigned) { return true; });
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  EXPECT_EQ(calls, 0u);
  EXPECT_TRUE(report->arrays.empty());
  EXPECT_TRUE(report->failed.empty());
}

TEST(SlurmArrayRunner, TimeoutCancelsTheArray) {
  REQUIRE_SLURM();
  TempDir dir;
  SlurmArrayOptions options = testOptions(dir);
  options.timeoutSeconds = 3;
  options.retries = 1;
  SlurmArrayRunner runner(options);
  auto report = runner.run(
      {0, 1}, 1,
      [&](llvm::ArrayRef<unsigned>) {
        return std::vector<ShellCommand>{{"/bin/sleep", "600"}};
      },
      [](unsigned) { return false; });
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  // The timeout covers the retries too: one array, both items failed.
  EXPECT_EQ(report->arrays.size(), 1u);
  ASSERT_EQ(report->failed.size(), 2u);
  EXPECT_LT(report->waitSeconds, 40);
}

TEST(SlurmArrayRunner, RefusedSubmissionIsAnError) {
  REQUIRE_SLURM();
  TempDir dir;
  SlurmArrayOptions options = testOptions(dir);
  options.sbatchArgs = {"--partition=no-such-partition"};
  SlurmArrayRunner runner(options);
  auto report = runner.run(
      {0}, 1,
      [&](llvm::ArrayRef<unsigned> shard) { return touchShard(dir, shard); },
      [](unsigned) { return false; });
  ASSERT_FALSE(bool(report));
  std::string message = llvm::toString(report.takeError());
  EXPECT_NE(message.find("sbatch refused"), std::string::npos) << message;
  EXPECT_NE(message.find("no-such-partition"), std::string::npos) << message;
}

/// squeue's states of every task of `arrayId` once none may still run.
static std::string finalStates(llvm::StringRef arrayId) {
  auto squeue = llvm::sys::findProgramByName("squeue");
  EXPECT_TRUE(bool(squeue));
  std::string states;
  for (int attempt = 0; attempt < 100; ++attempt) {
    llvm::SmallString<128> out;
    EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("fly-squeue", "out", out));
    llvm::StringRef argv[] = {*squeue, "-h",    "-r", "-t", "all",
                              "-j",    arrayId, "-o", "%T"};
    std::optional<llvm::StringRef> redirects[] = {
        llvm::StringRef(""), llvm::StringRef(out), llvm::StringRef("")};
    llvm::sys::ExecuteAndWait(*squeue, argv, std::nullopt, redirects, 20);
    states = readFile(out);
    llvm::sys::fs::remove(out);
    if (states.find("RUNNING") == std::string::npos &&
        states.find("PENDING") == std::string::npos &&
        states.find("COMPLETING") == std::string::npos)
      break;
    usleep(100000);
  }
  return states;
}

TEST(SlurmArrayRunnerDeathTest, InterruptCancelsTheArray) {
  REQUIRE_SLURM();
  TempDir dir;
  SlurmArrayOptions options = testOptions(dir);
  std::string record = dir.file("state/running-array");
  // The child submits an array of sleeps and gets SIGINT once it waits for
  // it: it must scancel the array, then die of the signal.
  EXPECT_EXIT(
      {
        std::thread interrupter([&] {
          for (int i = 0; i < 600 && !llvm::sys::fs::exists(record); ++i)
            usleep(50000);
          usleep(300000);
          kill(getpid(), SIGINT);
        });
        interrupter.detach();
        SlurmArrayRunner runner(options);
        (void)runner.run(
            {0, 1, 2}, 1,
            [&](llvm::ArrayRef<unsigned>) {
              return std::vector<ShellCommand>{{"/bin/sleep", "600"}};
            },
            [](unsigned) { return false; });
        std::_Exit(3); // not reached
      },
      testing::KilledBySignal(SIGINT), "");
  std::string arrayId = readFile(record);
  ASSERT_NE(arrayId, "<missing>");
  arrayId = llvm::StringRef(arrayId).trim().str();
  std::string states = finalStates(arrayId);
  EXPECT_EQ(states, "CANCELLED\nCANCELLED\nCANCELLED\n") << arrayId;
}

} // namespace
