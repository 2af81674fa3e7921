//===- AmdgpuLinkerTest.cpp - In-process ld.lld vs the spawned ld.lld -----===//

#include "fly/Backend/AmdgpuLinker.h"
#include "fly/Support/InstallLocation.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mlir;
using llvm::SmallVector;
using llvm::StringRef;

#ifndef FLY_TEST_INPUTS_DIR
#error "FLY_TEST_INPUTS_DIR must name unittests/Inputs"
#endif
#ifndef FLY_TEST_ROCM_TOOLKIT
#define FLY_TEST_ROCM_TOOLKIT ""
#endif

namespace {

constexpr StringRef kToolkit = FLY_TEST_ROCM_TOOLKIT;

/// An MLIRContext whose error diagnostics are collected into one string.
struct DiagCollector {
  MLIRContext context{MLIRContext::Threading::DISABLED};
  std::mutex mutex;
  std::string messages;
  ScopedDiagnosticHandler handler{&context, [this](Diagnostic &diag) {
                                    std::lock_guard<std::mutex> lock(mutex);
                                    messages += diag.str() + "\n";
                                    return success();
                                  }};

  auto emitter() {
    return [this] { return mlir::emitError(UnknownLoc::get(&context)); };
  }
};

/// The gfx942 axpy kernel, assembled once with ROCDL::assembleIsa.
const SmallVector<char, 0> &axpyObject() {
  static SmallVector<char, 0> object = [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmParsers();
    auto isa =
        llvm::MemoryBuffer::getFile(FLY_TEST_INPUTS_DIR "/axpy_gfx942.s");
    EXPECT_TRUE(static_cast<bool>(isa)) << "cannot read axpy_gfx942.s";
    if (!isa)
      return SmallVector<char, 0>();
    DiagCollector diags;
    FailureOr<SmallVector<char, 0>> object =
        ROCDL::assembleIsa((*isa)->getBuffer(), "amdgcn-amd-amdhsa", "gfx942",
                           "", diags.emitter());
    EXPECT_TRUE(succeeded(object)) << diags.messages;
    return succeeded(object) ? std::move(*object) : SmallVector<char, 0>();
  }();
  return object;
}

StringRef str(const SmallVector<char, 0> &bytes) {
  return StringRef(bytes.data(), bytes.size());
}

/// What the spawned <toolkit>/llvm/bin/ld.lld gives (MLIR's own path).
FailureOr<SmallVector<char, 0>> spawnedLink(ArrayRef<char> object) {
  DiagCollector diags;
  FailureOr<SmallVector<char, 0>> linked =
      ROCDL::linkObjectCode(object, kToolkit, diags.emitter());
  EXPECT_TRUE(succeeded(linked)) << diags.messages;
  return linked;
}

bool isSharedAmdgpuElf(StringRef bytes) {
  // ELF64, e_type ET_DYN (3), e_machine EM_AMDGPU (224).
  return bytes.size() > 20 && bytes.starts_with("\177ELF") && bytes[4] == 2 &&
         bytes[16] == 3 && bytes[17] == 0 &&
         static_cast<unsigned char>(bytes[18]) == 224 && bytes[19] == 0;
}

TEST(AmdgpuLinker, GivesTheSameBytesAsSpawnedLdLld) {
  if (kToolkit.empty())
    GTEST_SKIP() << "no ROCm toolkit folder (device libraries or ld.lld)";
  const SmallVector<char, 0> &object = axpyObject();
  ASSERT_FALSE(object.empty());

  DiagCollector diags;
  FailureOr<SmallVector<char, 0>> inProcess =
      fly::linkAmdgpuObject(object, kToolkit, diags.emitter());
  ASSERT_TRUE(succeeded(inProcess)) << diags.messages;
  EXPECT_TRUE(fly::isInProcessAmdgpuLinkerAvailable());
  FailureOr<SmallVector<char, 0>> spawned = spawnedLink(object);
  ASSERT_TRUE(succeeded(spawned));

  EXPECT_TRUE(isSharedAmdgpuElf(str(*inProcess)));
  EXPECT_EQ(inProcess->size(), spawned->size());
  EXPECT_TRUE(str(*inProcess) == str(*spawned))
      << "in-process and spawned ld.lld outputs differ";
}

TEST(AmdgpuLinker, EightThreadsAtOnceGiveTheSameBytes) {
  const SmallVector<char, 0> &object = axpyObject();
  ASSERT_FALSE(object.empty());
  SmallVector<char, 0> reference;
  if (kToolkit.empty()) {
    DiagCollector diags;
    FailureOr<SmallVector<char, 0>> linked =
        fly::linkAmdgpuObject(object, kToolkit, diags.emitter());
    ASSERT_TRUE(succeeded(linked)) << diags.messages;
    reference = std::move(*linked);
  } else {
    FailureOr<SmallVector<char, 0>> spawned = spawnedLink(object);
    ASSERT_TRUE(succeeded(spawned));
    reference = std::move(*spawned);
  }

  constexpr int kThreads = 8, kLinksPerThread = 4;
  DiagCollector diags; // MLIR's diagnostic engine is thread-safe.
  std::vector<std::vector<SmallVector<char, 0>>> outputs(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLinksPerThread; ++i) {
        FailureOr<SmallVector<char, 0>> linked =
            fly::linkAmdgpuObject(object, kToolkit, diags.emitter());
        outputs[t].push_back(succeeded(linked) ? std::move(*linked)
                                               : SmallVector<char, 0>());
      }
    });
  for (std::thread &thread : threads)
    thread.join();

  EXPECT_EQ(diags.messages, "");
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(outputs[t].size(), size_t(kLinksPerThread));
    for (const SmallVector<char, 0> &output : outputs[t])
      EXPECT_TRUE(str(output) == str(reference))
          << "thread " << t << ": " << output.size() << " bytes vs "
          << reference.size();
  }
  EXPECT_TRUE(fly::isInProcessAmdgpuLinkerAvailable());
}

TEST(AmdgpuLinker, GarbageFailsWithLldsMessageAndLldStaysUsable) {
  constexpr StringRef garbage = "this is not an AMDGPU object\n";
  DiagCollector diags;
  FailureOr<SmallVector<char, 0>> linked =
      fly::linkAmdgpuObject(ArrayRef<char>(garbage.data(), garbage.size()),
                            kToolkit, diags.emitter());
  EXPECT_TRUE(failed(linked));
  // lld reads an unknown file as a linker script and rejects it.
  EXPECT_NE(diags.messages.find("in-process ld.lld failed"), std::string::npos)
      << diags.messages;
  EXPECT_NE(diags.messages.find("ld.lld: error: "), std::string::npos)
      << diags.messages;
  EXPECT_TRUE(fly::isInProcessAmdgpuLinkerAvailable());

  const SmallVector<char, 0> &object = axpyObject();
  ASSERT_FALSE(object.empty());
  DiagCollector after;
  FailureOr<SmallVector<char, 0>> valid =
      fly::linkAmdgpuObject(object, kToolkit, after.emitter());
  ASSERT_TRUE(succeeded(valid)) << after.messages;
  EXPECT_TRUE(isSharedAmdgpuElf(str(*valid)));
  EXPECT_TRUE(fly::isInProcessAmdgpuLinkerAvailable());
}

// Runs in the death test's child: a corrupt object, then a valid one.
[[noreturn]] void linkCorruptThenValid(const SmallVector<char, 0> &object,
                                       const SmallVector<char, 0> &spawned) {
  // Keep the ELF identification, point the section header table (e_shoff)
  // far outside the file.
  SmallVector<char, 0> corrupt(object.begin(), object.begin() + 64);
  for (int i = 0x28; i < 0x30; ++i)
    corrupt[i] = '\x7f';
  DiagCollector diags;
  bool failedWithMessage =
      failed(fly::linkAmdgpuObject(corrupt, kToolkit, diags.emitter())) &&
      StringRef(diags.messages).contains("ld.lld: error: ");
  bool usedUp = !fly::isInProcessAmdgpuLinkerAvailable();
  // fly-tune beside the test (build/bin) links from now on: the toolkit's
  // ld.lld is needed only without it.
  bool toolkitNeeded = fly::amdgpuLinksNeedToolkitLdLld();
  bool toolkitNeedKnown = toolkitNeeded == fly::findChildTool().empty();
  DiagCollector after;
  FailureOr<SmallVector<char, 0>> linked =
      fly::linkAmdgpuObject(object, kToolkit, after.emitter());
  bool fallbackMatches = succeeded(linked) && str(*linked) == str(spawned);
  std::fprintf(
      stderr,
      "failed=%d usedUp=%d fallbackMatches=%d toolkitNeedKnown=%d\n%s%s",
      failedWithMessage, usedUp, fallbackMatches, toolkitNeedKnown,
      diags.messages.c_str(), after.messages.c_str());
  std::fflush(stderr);
  std::_Exit(failedWithMessage && usedUp && fallbackMatches && toolkitNeedKnown
                 ? 0
                 : 1);
}

// A corrupt ELF makes lld fail fatally (canRunAgain == false). That state is
// process-wide, so it is exercised in a child process: the failing link still
// reports lld's message, and later links spawn ld.lld and give the same bytes.
TEST(AmdgpuLinkerDeathTest, AfterAFatalLldErrorLinksFallBackToLdLld) {
  if (kToolkit.empty())
    GTEST_SKIP() << "no ROCm toolkit folder (device libraries or ld.lld)";
  const SmallVector<char, 0> &object = axpyObject();
  ASSERT_FALSE(object.empty());
  FailureOr<SmallVector<char, 0>> spawned = spawnedLink(object);
  ASSERT_TRUE(succeeded(spawned));

  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(linkCorruptThenValid(object, *spawned),
              ::testing::ExitedWithCode(0),
              "failed=1 usedUp=1 fallbackMatches=1 toolkitNeedKnown=1");
}

// lld resets all llvm::cl options of the process on every link; programs
// linking FlySnapshot wrap that reset away (AmdgpuLinker.cpp): an option
// parsed before a link keeps its value.
llvm::cl::opt<int> flyTestOption("fly-amdgpu-linker-test-option",
                                 llvm::cl::init(1), llvm::cl::Hidden);

TEST(AmdgpuLinker, LinkKeepsLlvmCommandLineOptions) {
  const char *argv[] = {"test", "--fly-amdgpu-linker-test-option=7"};
  ASSERT_TRUE(llvm::cl::ParseCommandLineOptions(2, argv, "", &llvm::errs()));
  ASSERT_EQ(flyTestOption.getValue(), 7);
  const SmallVector<char, 0> &object = axpyObject();
  ASSERT_FALSE(object.empty());
  DiagCollector diags;
  ASSERT_TRUE(
      succeeded(fly::linkAmdgpuObject(object, kToolkit, diags.emitter())))
      << diags.messages;
  if (!fly::isInProcessAmdgpuLinkerAvailable())
    GTEST_SKIP() << "lld is used up in this process";
  EXPECT_EQ(flyTestOption.getValue(), 7);
  EXPECT_EQ(flyTestOption.getNumOccurrences(), 1);
}

// Not a check: prints the mean wall time of both ways. Run with
// --gtest_also_run_disabled_tests --gtest_filter='*Timing*'.
TEST(AmdgpuLinker, DISABLED_Timing) {
  if (kToolkit.empty())
    GTEST_SKIP() << "no ROCm toolkit folder (device libraries or ld.lld)";
  const SmallVector<char, 0> &object = axpyObject();
  ASSERT_FALSE(object.empty());
  DiagCollector diags;
  using Clock = std::chrono::steady_clock;
  // One untimed warm-up link, then the mean of `runs` links in milliseconds.
  auto meanMs = [&](llvm::function_ref<bool()> link, int runs) {
    EXPECT_TRUE(link()) << diags.messages;
    Clock::time_point start = Clock::now();
    for (int i = 0; i < runs; ++i)
      EXPECT_TRUE(link()) << diags.messages;
    return std::chrono::duration<double, std::milli>(Clock::now() - start)
               .count() /
           runs;
  };
  double inProcess = meanMs(
      [&] {
        return succeeded(
            fly::linkAmdgpuObject(object, kToolkit, diags.emitter()));
      },
      20);
  double spawned = meanMs(
      [&] {
        return succeeded(
            ROCDL::linkObjectCode(object, kToolkit, diags.emitter()));
      },
      20);
  std::printf("mean of 20 links: in-process %.2f ms, spawned ld.lld %.2f ms\n",
              inProcess, spawned);
}

} // namespace
