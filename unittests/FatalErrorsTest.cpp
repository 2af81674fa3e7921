//===- FatalErrorsTest.cpp - Releases where a fatal error unwinds -------===//
//
// ReleaseOnUnwind runs its release exactly where the frames holding it are
// abandoned by a fatal error (runUnwindingFatalErrors, CrashRecoveryContext),
// and never on a normal return.
//
//===----------------------------------------------------------------------===//

#include "Support/FatalErrors.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"

#include "gtest/gtest.h"

#include <string>

using namespace fly;

namespace {

TEST(ReleaseOnUnwindTest, RunsOnlyWhereAFatalErrorAbandonsItsFrame) {
  std::string released;
  // Returned normally: nothing runs.
  EXPECT_FALSE(runUnwindingFatalErrors([&] {
                 ReleaseOnUnwind a([&released] { released += "a"; });
               }).has_value());
  EXPECT_EQ(released, "");
  // Abandoned: the live ones run, newest first; one unregistered does not.
  std::optional<std::string> ended = runUnwindingFatalErrors([&] {
    ReleaseOnUnwind outer([&released] { released += "outer "; });
    {
      ReleaseOnUnwind gone([&released] { released += "gone "; });
    }
    ReleaseOnUnwind done([&released] { released += "done "; });
    done.unregister();
    ReleaseOnUnwind inner([&released] { released += "inner "; });
    llvm::report_fatal_error("on purpose");
  });
  ASSERT_TRUE(ended.has_value());
  EXPECT_NE(ended->find("on purpose"), std::string::npos);
  EXPECT_EQ(released, "inner outer ");
  // The next scope starts with none left over.
  released.clear();
  EXPECT_TRUE(runUnwindingFatalErrors([] {
                llvm::report_fatal_error("again");
              }).has_value());
  EXPECT_EQ(released, "");
}

TEST(ReleaseOnUnwindTest, RunsAsACrashRecoveryContextEnds) {
  llvm::CrashRecoveryContext::Enable();
  FatalErrorsUnwindCrashRecovery fatalErrors;
  std::string released;
  {
    llvm::CrashRecoveryContext crc;
    EXPECT_TRUE(crc.RunSafely(
        [&] { ReleaseOnUnwind kept([&released] { released += "kept "; }); }));
  }
  EXPECT_EQ(released, "");
  {
    llvm::CrashRecoveryContext crc;
    EXPECT_FALSE(crc.RunSafely([&] {
      ReleaseOnUnwind held([&released] { released += "held "; });
      llvm::report_fatal_error("on purpose");
    }));
  }
  EXPECT_EQ(takeLastFatalError(), "on purpose");
  EXPECT_EQ(released, "held ");
}

} // namespace
