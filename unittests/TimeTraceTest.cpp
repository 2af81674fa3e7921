//===- TimeTraceTest.cpp - Worker threads' spans in one trace -------------===//

#include "fly/Support/TimeTrace.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TimeProfiler.h"

#include "gtest/gtest.h"

#include <map>
#include <thread>

using namespace fly;
using namespace llvm;

namespace {

/// The trace's complete spans: name -> count.
std::map<std::string, int> readSpans(StringRef path) {
  std::map<std::string, int> spans;
  auto buffer = MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer));
  if (!buffer)
    return spans;
  Expected<json::Value> trace = json::parse((*buffer)->getBuffer());
  EXPECT_TRUE(bool(trace));
  if (!trace)
    return spans;
  for (const json::Value &event :
       *trace->getAsObject()->getArray("traceEvents")) {
    const json::Object &object = *event.getAsObject();
    if (object.getString("ph") == "X" &&
        !object.getString("name")->starts_with("Total "))
      ++spans[object.getString("name")->str()];
  }
  return spans;
}

class TimeTraceTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("fly-time-trace", dir));
    path = dir;
    sys::path::append(path, "trace.json");
  }
  void TearDown() override { sys::fs::remove_directories(dir); }
  SmallString<128> dir, path;
};

TEST_F(TimeTraceTest, WorkerTasksLandInTheTrace) {
  startTimeTrace(/*granularityUs=*/0, "test");
  ASSERT_TRUE(isTimeTraceStarted());
  std::thread worker([] {
    // Two tasks on one thread: each hands its instance over.
    for (int task = 0; task < 2; ++task) {
      TimeTraceThreadScope scope;
      ASSERT_NE(getTimeTraceProfilerInstance(), nullptr);
      TimeTraceScope span("Variant");
      {
        // Nested scopes leave the task's instance alone.
        TimeTraceThreadScope inner;
        TimeTraceScope step("Code generation");
      }
      ASSERT_NE(getTimeTraceProfilerInstance(), nullptr);
    }
    EXPECT_EQ(getTimeTraceProfilerInstance(), nullptr);
  });
  worker.join();
  {
    TimeTraceScope span("On the main thread");
  }
  ASSERT_FALSE(bool(writeTimeTrace(path)));
  EXPECT_FALSE(isTimeTraceStarted());
  EXPECT_EQ(getTimeTraceProfilerInstance(), nullptr);
  std::map<std::string, int> spans = readSpans(path);
  EXPECT_EQ(spans["Variant"], 2);
  EXPECT_EQ(spans["Code generation"], 2);
  EXPECT_EQ(spans["On the main thread"], 1);
}

TEST_F(TimeTraceTest, AnEnterWithoutLeaveIsClosedByTheTask) {
  startTimeTrace(0, "test");
  std::thread worker([] {
    {
      TimeTraceThreadScope task;
      TimeTraceScope span("Variant");
      // What a crash leaves: a pass instrumentation's enter, never left.
      enterTimeTraceThread();
      enterTimeTraceThread();
    }
    // The task's scope handed the instance over all the same: the thread's
    // next task starts afresh.
    EXPECT_EQ(getTimeTraceProfilerInstance(), nullptr);
    TimeTraceThreadScope next;
    EXPECT_NE(getTimeTraceProfilerInstance(), nullptr);
    TimeTraceScope span("Variant");
  });
  worker.join();
  ASSERT_FALSE(bool(writeTimeTrace(path)));
  EXPECT_EQ(readSpans(path)["Variant"], 2);
}

TEST_F(TimeTraceTest, NothingWithoutAStartedTrace) {
  std::thread worker([] {
    TimeTraceThreadScope task;
    EXPECT_EQ(getTimeTraceProfilerInstance(), nullptr);
  });
  worker.join();
  Error err = writeTimeTrace(path);
  EXPECT_TRUE(bool(err));
  consumeError(std::move(err));
  EXPECT_FALSE(sys::fs::exists(path));
}

TEST_F(TimeTraceTest, PathsCheckedBeforeCompiling) {
  EXPECT_FALSE(bool(checkTimeTracePath(path)));
  Error isDir = checkTimeTracePath(dir);
  ASSERT_TRUE(bool(isDir));
  EXPECT_NE(toString(std::move(isDir)).find("not a regular file"),
            std::string::npos);
  SmallString<128> missing(dir);
  sys::path::append(missing, "missing", "trace.json");
  Error noDir = checkTimeTracePath(missing);
  ASSERT_TRUE(bool(noDir));
  EXPECT_NE(toString(std::move(noDir)).find("not a directory"),
            std::string::npos);
  Error empty = checkTimeTracePath("");
  EXPECT_TRUE(bool(empty));
  consumeError(std::move(empty));
}

} // namespace
