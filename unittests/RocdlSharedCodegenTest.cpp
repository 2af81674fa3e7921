//===- RocdlSharedCodegenTest.cpp - Which ROCDL variants continue a cut ---===//
//
// Counts, per kind of kernel and hint, whether fly-module-to-binary kept a
// cut, continued one, or compiled whole (RocdlSharedCodegen.h), and checks
// that the ISA is the whole code generation's either way.
//
//===----------------------------------------------------------------------===//

#include "fly/Backend/RocdlSharedCodegen.h"
#include "Backend/CompileObserved.h"
#include "Backend/RocdlSharedCodegenTesting.h"
#include "ModuleIsa.h"
#include "Support/FatalErrors.h"
#include "fly/Backend/VariantQueue.h"
#include "fly/Compiler/Registration.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CrashRecoveryContext.h"

#include "gtest/gtest.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mlir;
using namespace fly;
using llvm::StringRef;

namespace {

/// Straight-line: no cycle, so no register pressure limit to keep.
constexpr StringRef kStraightKernel = R"mlir(
gpu.module @kernels [#rocdl.target<chip = "@CHIP@">] {
  llvm.func @k(%arg0: !llvm.ptr<1>, %n: i32) attributes {gpu.kernel, rocdl.kernel} {
    %s = llvm.mlir.constant(@SCALE@ : f32) : f32
    %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
    %1 = llvm.fmul %0, %s : f32
    llvm.store %1, %arg0 : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

/// A loop: MachineSink and MachineLICM read the pressure limits in it.
constexpr StringRef kLoopKernel = R"mlir(
gpu.module @kernels [#rocdl.target<chip = "@CHIP@">] {
  llvm.func @k(%arg0: !llvm.ptr<1>, %n: i32) attributes {gpu.kernel, rocdl.kernel} {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %s = llvm.mlir.constant(@SCALE@ : f32) : f32
    llvm.br ^loop(%c0, %s : i32, f32)
  ^loop(%i: i32, %acc: f32):
    %p = llvm.getelementptr %arg0[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
    %v = llvm.load %p : !llvm.ptr<1> -> f32
    %a = llvm.fmul %acc, %v : f32
    %next = llvm.add %i, %c1 : i32
    %done = llvm.icmp "sge" %next, %n : i32
    llvm.cond_br %done, ^exit(%a : f32), ^loop(%next, %a : i32, f32)
  ^exit(%r: f32):
    llvm.store %r, %arg0 : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

/// Inline asm may name registers the hints reserve.
constexpr StringRef kInlineAsmKernel = R"mlir(
gpu.module @kernels [#rocdl.target<chip = "@CHIP@">] {
  llvm.func @k(%arg0: !llvm.ptr<1>, %n: i32) attributes {gpu.kernel, rocdl.kernel} {
    %s = llvm.mlir.constant(@SCALE@ : f32) : f32
    llvm.inline_asm has_side_effects "s_nop 0", "" : () -> ()
    %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
    %1 = llvm.fmul %0, %s : f32
    llvm.store %1, %arg0 : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

/// Instruction selection cannot select s_wait_loadcnt (gfx12's) on gfx942:
/// an LLVM fatal error, in every compile of the module.
constexpr StringRef kUnselectableKernel = R"mlir(
gpu.module @kernels [#rocdl.target<chip = "@CHIP@">] {
  llvm.func @k(%arg0: !llvm.ptr<1>, %n: i32) attributes {gpu.kernel, rocdl.kernel} {
    %s = llvm.mlir.constant(@SCALE@ : f32) : f32
    %c0 = llvm.mlir.constant(0 : i16) : i16
    llvm.call_intrinsic "llvm.amdgcn.s.wait.loadcnt"(%c0) : (i16) -> ()
    %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
    %1 = llvm.fmul %0, %s : f32
    llvm.store %1, %arg0 : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

/// What one thread says to another in compileBesideACheck.
class Signals {
public:
  void raise(StringRef what) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      raised.push_back(what.str());
    }
    changed.notify_all();
  }
  /// Until one of `whats` was raised; a failure after two minutes without
  /// (the order the test expects did not happen: it goes on, not hangs).
  void await(std::initializer_list<StringRef> whats) {
    std::unique_lock<std::mutex> lock(mutex);
    if (!changed.wait_for(lock, std::chrono::minutes(2), [&] {
          return llvm::any_of(whats, [&](StringRef what) {
            return llvm::is_contained(raised, what.str());
          });
        }))
      ADD_FAILURE() << "nothing of what was awaited was raised: "
                    << whats.begin()->str();
  }

private:
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> raised;
};

class RocdlSharedCodegenTest : public ::testing::Test {
protected:
  RocdlSharedCodegenTest() {
    // The tests of continuing elsewhere (FLY_ROCDL_CONTINUE_ELSEWHERE); those
    // of a state serving one thread at a time say so (onlyOneThreadAState).
    setenv("FLY_ROCDL_CONTINUE_ELSEWHERE", "1", 1);
    // The mechanism, whatever the sweep's size; SharesOnlyASweepOfEnoughRounds
    // tests the rule.
    setenv("FLY_ROCDL_CODEGEN_CUT_ROUNDS", "0", 1);
    registerCompilerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  ~RocdlSharedCodegenTest() override {
    unsetenv("FLY_ROCDL_CODEGEN_CUT");
    unsetenv("FLY_ROCDL_AWAIT_CHECK");
    unsetenv("FLY_ROCDL_CONTINUE_ELSEWHERE");
    unsetenv("FLY_ROCDL_CODEGEN_CUT_ROUNDS");
  }
  /// For the tests of a state used by one thread at a time: no variant
  /// continues elsewhere from one in use.
  void onlyOneThreadAState() { setenv("FLY_ROCDL_CONTINUE_ELSEWHERE", "0", 1); }

  /// `kernel` for `chip`, `scale` keeping each test's module (and so its
  /// shared optimisation and kept states) apart from the others' in this
  /// process (RocdlSharedOptTest's too).
  static std::string make(StringRef kernel, StringRef chip, StringRef scale) {
    std::string text = kernel.str();
    text.replace(text.find("@CHIP@"), 6, chip.str());
    text.replace(text.find("@SCALE@"), 7, scale.str());
    return text;
  }

  /// compileHintSetsToIsa in this fixture's context (no threads: in order
  /// on one thread).
  std::vector<std::string> compile(const std::string &gpuModule,
                                   StringRef sets) {
    return compileHintSetsToIsa(context, gpuModule, sets);
  }

  /// compile() with shared code generation, what it counted, and the ISA
  /// checked against compile() with it off (which counts nothing).
  RocdlSharedCodegenStats compileBothWays(const std::string &gpuModule,
                                          StringRef sets) {
    RocdlSharedCodegenStats before = getRocdlSharedCodegenStats();
    std::vector<std::string> shared = compile(gpuModule, sets);
    RocdlSharedCodegenStats after = getRocdlSharedCodegenStats();
    setenv("FLY_ROCDL_CODEGEN_CUT", "0", 1);
    std::vector<std::string> whole = compile(gpuModule, sets);
    unsetenv("FLY_ROCDL_CODEGEN_CUT");
    RocdlSharedCodegenStats off = getRocdlSharedCodegenStats();
    EXPECT_EQ(off.cuts, after.cuts);
    EXPECT_EQ(off.continued, after.continued);
    EXPECT_EQ(off.refusedModules, after.refusedModules);
    EXPECT_EQ(off.refusedVariants, after.refusedVariants);
    EXPECT_EQ(shared.size(), whole.size());
    for (size_t i = 0; i < std::min(shared.size(), whole.size()); ++i)
      EXPECT_TRUE(shared[i] == whole[i]) << "ISA of hint set #" << i;
    EXPECT_EQ(off.probes, after.probes);
    return {after.cuts - before.cuts,
            after.continued - before.continued,
            after.refusedModules - before.refusedModules,
            after.refusedVariants - before.refusedVariants,
            after.probes - before.probes,
            after.widenedProbes - before.widenedProbes,
            after.continuedEarly - before.continuedEarly,
            after.notKept - before.notKept,
            after.awaitedChecks - before.awaitedChecks,
            after.checksBeside - before.checksBeside,
            after.continuedElsewhere - before.continuedElsewhere,
            after.wholeWhileStateMade - before.wholeWhileStateMade,
            after.continuedElsewhereFromCut - before.continuedElsewhereFromCut};
  }

  /// compileBothWays() of kStraightKernel (`scale` as make's) under six
  /// register hint sets of every kind.
  RocdlSharedCodegenStats compileRegisterHints(StringRef scale) {
    return compileBothWays(make(kStraightKernel, "gfx942", scale),
                           "waves_per_eu=2;waves_per_eu=8;maxnreg=32;"
                           "maxnreg=256;passthrough.amdgpu-num-sgpr=24;"
                           "waves_per_eu=4,maxnreg=96");
  }

  /// compileBothWays() as one variant of a sweep with `notStarted` variants
  /// still to start and `running` running beside it, on a pool of `threads`.
  RocdlSharedCodegenStats compileInSweep(const std::string &gpuModule,
                                         StringRef sets, size_t notStarted,
                                         size_t running, size_t threads = 1) {
    VariantQueue queue(notStarted + 1, threads);
    queue.running = running;
    ScopedVariantQueue started(queue);
    return compileBothWays(gpuModule, sets);
  }

  /// The ISA of `gpuModule` under `hints`, compiled in a context of its own
  /// (as on another thread) as a variant of a sweep with more still to
  /// start; "" where it made none.
  std::string compileAsVariant(const std::string &gpuModule, StringRef hints,
                               SweepHold *hold = nullptr) {
    MLIRContext own(registry, MLIRContext::Threading::DISABLED);
    own.loadAllAvailableDialects();
    VariantQueue queue(4);
    queue.hold = hold;
    ScopedVariantQueue started(queue);
    OwningOpRef<ModuleOp> source = makeHintedCopies(own, gpuModule, hints);
    std::vector<std::string> isa = compileToIsa(*source);
    return isa.size() == 1 ? isa.front() : "";
  }

  /// compileAsVariant beside another running variant of its sweep, under
  /// crash recovery (as the isolated executor runs it).
  std::string compileBesideAnother(const std::string &gpuModule,
                                   StringRef hints) {
    llvm::CrashRecoveryContext::Enable();
    MLIRContext own(registry, MLIRContext::Threading::DISABLED);
    own.loadAllAvailableDialects();
    VariantQueue queue(4);
    queue.running = 1;
    ScopedVariantQueue started(queue);
    std::vector<std::string> isa;
    llvm::CrashRecoveryContext crc;
    EXPECT_TRUE(crc.RunSafely([&] {
      OwningOpRef<ModuleOp> source = makeHintedCopies(own, gpuModule, hints);
      isa = compileToIsa(*source);
    }));
    return isa.size() == 1 ? isa.front() : "";
  }

  /// Each of `isa` equals the whole code generation of the hint set at its
  /// place in `sets`.
  void expectWhole(const std::string &gpuModule, StringRef sets,
                   const std::vector<std::string> &isa) {
    setenv("FLY_ROCDL_CODEGEN_CUT", "0", 1);
    std::vector<std::string> whole = compile(gpuModule, sets);
    unsetenv("FLY_ROCDL_CODEGEN_CUT");
    ASSERT_EQ(whole.size(), isa.size());
    for (size_t i = 0; i < isa.size(); ++i)
      EXPECT_TRUE(isa[i] == whole[i]) << "ISA of hint set #" << i;
  }

  /// The ISA of four variants of `gpuModule` under `hints`, compiled so that a
  /// continuation is made while another thread checks its target's route
  /// (`early`: from before the passes that read the pressure limits, else from
  /// the cut): the first keeps a state (or continues one, its check not held);
  /// the second, on a thread, takes it and holds the first check of the route
  /// it claims; the third finds no idle state and keeps another; the fourth,
  /// on a thread, takes that and continues, and the check goes on once it
  /// waits for the verdict.
  std::vector<std::string> compileBesideACheck(const std::string &gpuModule,
                                               bool early,
                                               std::array<StringRef, 4> hints) {
    Signals signals;
    std::vector<std::string> isa(4);
    std::atomic<bool> held{false};
    setRocdlSharedCodegenTestHooks({[&](bool route) {
                                      if (route != early || held.exchange(true))
                                        return;
                                      signals.raise("checking");
                                      signals.await({"check"});
                                    },
                                    [&](bool route) {
                                      if (route == early)
                                        signals.raise("awaiting");
                                    }});
    isa[0] = compileAsVariant(gpuModule, hints[0]);
    std::thread checker([&] {
      isa[1] = compileAsVariant(gpuModule, hints[1]);
      signals.raise("checker done");
    });
    signals.await({"checking", "checker done"});
    isa[2] = compileAsVariant(gpuModule, hints[2]);
    std::thread waiter([&] {
      isa[3] = compileAsVariant(gpuModule, hints[3]);
      signals.raise("waiter done");
    });
    signals.await({"awaiting", "waiter done"});
    signals.raise("check");
    checker.join();
    waiter.join();
    setRocdlSharedCodegenTestHooks({});
    return isa;
  }

  /// compileBesideACheck from the cut: four register budgets of
  /// kStraightKernel on `chip` (a target no other test checks; `scale` as
  /// make's), every ISA compared with whole compiles. What the shared code
  /// generation counted meanwhile.
  struct Counted {
    uint64_t cuts, continued, awaitedChecks;
  };
  Counted straightBesideACheck(StringRef chip, StringRef scale) {
    std::string gpuModule = make(kStraightKernel, chip, scale);
    RocdlSharedCodegenStats before = getRocdlSharedCodegenStats();
    std::array<StringRef, 4> hints = {"maxnreg=200", "maxnreg=128",
                                      "maxnreg=96", "maxnreg=64"};
    std::vector<std::string> isa =
        compileBesideACheck(gpuModule, /*early=*/false, hints);
    RocdlSharedCodegenStats after = getRocdlSharedCodegenStats();
    expectWhole(gpuModule, llvm::join(hints, ";"), isa);
    return {after.cuts - before.cuts, after.continued - before.continued,
            after.awaitedChecks - before.awaitedChecks};
  }

  DialectRegistry registry;
  MLIRContext context{MLIRContext::Threading::DISABLED};
};

TEST_F(RocdlSharedCodegenTest, RegisterHintsContinueOneCut) {
  // The first variant makes a state (the shared module compiled up to the
  // cut) and every one continues it elsewhere, the first too, whatever its
  // register budget.
  RocdlSharedCodegenStats stats = compileRegisterHints("202.25");
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 6u);
  EXPECT_EQ(stats.refusedModules, 0u);
  EXPECT_EQ(stats.refusedVariants, 0u);
}

TEST_F(RocdlSharedCodegenTest, RegisterHintsContinueOneKeptCompile) {
  // A state serving one thread at a time: the first variant compiles whole
  // and keeps its cut; every other one continues it, whatever its register
  // budget.
  onlyOneThreadAState();
  RocdlSharedCodegenStats stats = compileRegisterHints("223.25");
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 5u);
  EXPECT_EQ(stats.refusedModules, 0u);
  EXPECT_EQ(stats.refusedVariants, 0u);
}

TEST_F(RocdlSharedCodegenTest, KeepsNothingWhereNoVariantIsToCome) {
  // The last variants of a sweep, running side by side, each a state of its
  // own: nothing of theirs would be continued.
  onlyOneThreadAState();
  RocdlSharedCodegenStats stats =
      compileInSweep(make(kStraightKernel, "gfx942", "211.25"),
                     "waves_per_eu=2;maxnreg=64", /*notStarted=*/0,
                     /*running=*/3);
  EXPECT_EQ(stats.cuts, 0u);
  EXPECT_EQ(stats.continued, 0u);
  EXPECT_EQ(stats.notKept, 2u);
}

TEST_F(RocdlSharedCodegenTest, ElsewhereKeepsForTheVariantsRunningBeside) {
  // Continued elsewhere, one state serves the variants running beside too:
  // the first of the last variants makes it, the others continue it.
  RocdlSharedCodegenStats stats =
      compileInSweep(make(kStraightKernel, "gfx942", "222.25"),
                     "waves_per_eu=2;maxnreg=64", /*notStarted=*/0,
                     /*running=*/3);
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 2u);
  EXPECT_EQ(stats.notKept, 0u);
}

TEST_F(RocdlSharedCodegenTest, KeepsForAVariantToCome) {
  RocdlSharedCodegenStats stats =
      compileInSweep(make(kStraightKernel, "gfx942", "212.25"),
                     "waves_per_eu=2;maxnreg=64", /*notStarted=*/1,
                     /*running=*/3);
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 2u);
  EXPECT_EQ(stats.notKept, 0u);
}

TEST_F(RocdlSharedCodegenTest, SharesOnlyASweepOfEnoughRounds) {
  // 3 rounds: on a pool of 2, a sweep of 5 variants compiles whole; one of 6
  // keeps a state, and continues. Both ways of sharing.
  setenv("FLY_ROCDL_CODEGEN_CUT_ROUNDS", "3", 1);
  for (bool elsewhere : {true, false}) {
    SCOPED_TRACE(elsewhere ? "elsewhere" : "one thread a state");
    setenv("FLY_ROCDL_CONTINUE_ELSEWHERE", elsewhere ? "1" : "0", 1);
    std::string scale = elsewhere ? "233." : "234.";
    RocdlSharedCodegenStats few =
        compileInSweep(make(kStraightKernel, "gfx942", scale + "25"),
                       "waves_per_eu=2;maxnreg=64", /*notStarted=*/4,
                       /*running=*/1, /*threads=*/2);
    EXPECT_EQ(few.cuts, 0u);
    EXPECT_EQ(few.continued, 0u);
    EXPECT_EQ(few.notKept, 2u);
    RocdlSharedCodegenStats enough =
        compileInSweep(make(kStraightKernel, "gfx942", scale + "5"),
                       "waves_per_eu=2;maxnreg=64", /*notStarted=*/5,
                       /*running=*/1, /*threads=*/2);
    EXPECT_EQ(enough.cuts, 1u);
    EXPECT_GE(enough.continued, 1u);
    EXPECT_EQ(enough.notKept, 0u);
  }
}

TEST_F(RocdlSharedCodegenTest, AVariantAloneKeepsForTheNextSweep) {
  // One-variant sweeps in a caller's loop: the first compiles whole and
  // makes a state, the next continues from it (checking its target first
  // against the first one's ISA, on a target of its own).
  RocdlSharedCodegenStats stats =
      compileInSweep(make(kStraightKernel, "gfx950", "213.25"),
                     "waves_per_eu=2;maxnreg=64", /*notStarted=*/0,
                     /*running=*/0);
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 1u);
  EXPECT_EQ(stats.notKept, 0u);
}

TEST_F(RocdlSharedCodegenTest, LoopWithLimitsAboveTheCutsContinuesEarly) {
  // In a loop, a budget whose pressure limits lie above those of the kept
  // compile and of its probe (which only ever goes lower) continues from
  // before the passes that read them; what those made widens the limits the
  // cut serves, so one with the same limits continues from the cut.
  onlyOneThreadAState();
  RocdlSharedCodegenStats stats =
      compileBothWays(make(kLoopKernel, "gfx942", "203.25"),
                      "maxnreg=24;waves_per_eu=1;waves_per_eu=1,maxnreg=512");
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 2u);
  EXPECT_EQ(stats.continuedEarly, 1u);
  EXPECT_EQ(stats.refusedVariants, 0u);
  EXPECT_EQ(stats.probes, 1u);
  EXPECT_EQ(stats.widenedProbes, 1u);
}

TEST_F(RocdlSharedCodegenTest, BudgetSweepInALoopProbesTheLimits) {
  // The budgets below 32 give the loop other pressure limits (VGPRs count
  // twice on gfx942; 64 is the occupancy's limit). The first that the
  // kept compile's limits do not cover probes the code generation up to the
  // cut under the least VGPR budget: it makes the loop as the kept compile
  // did, so every budget between the two continues.
  onlyOneThreadAState();
  RocdlSharedCodegenStats stats =
      compileBothWays(make(kLoopKernel, "gfx942", "209.25"),
                      "maxnreg=256;maxnreg=128;maxnreg=28;maxnreg=24;"
                      "maxnreg=20;maxnreg=16");
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 5u);
  EXPECT_EQ(stats.continuedEarly, 0u);
  EXPECT_EQ(stats.refusedVariants, 0u);
  EXPECT_EQ(stats.probes, 1u);
  EXPECT_EQ(stats.widenedProbes, 1u);
}

TEST_F(RocdlSharedCodegenTest, WavesCapIsNeverKept) {
  // A continuation's occupancy is the kept compile's, lowered to its own
  // limit: a variant that caps the waves is not kept (a later one with a
  // higher cap would inherit it) but may continue another's cut.
  onlyOneThreadAState();
  RocdlSharedCodegenStats stats =
      compileBothWays(make(kStraightKernel, "gfx942", "208.25"),
                      "passthrough.amdgpu-waves-per-eu='1,1';waves_per_eu=4;"
                      "passthrough.amdgpu-waves-per-eu='2,2';maxnreg=64");
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 2u);
  EXPECT_EQ(stats.refusedVariants, 0u);
}

TEST_F(RocdlSharedCodegenTest,
       ElsewhereEveryBudgetContinuesFromBeforeTheLimits) {
  // Elsewhere, continuations start before the passes that read the pressure
  // limits, from a state made without register hints: every budget of a loop
  // and every waves cap continues, with nothing to probe.
  RocdlSharedCodegenStats stats =
      compileBothWays(make(kLoopKernel, "gfx942", "221.25"),
                      "passthrough.amdgpu-waves-per-eu='1,1';maxnreg=256;"
                      "maxnreg=28;maxnreg=16;waves_per_eu=1,maxnreg=512");
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 5u);
  EXPECT_EQ(stats.probes, 0u);
  EXPECT_EQ(stats.refusedVariants, 0u);
}

TEST_F(RocdlSharedCodegenTest, ElsewhereContinuesFromTheCutOnceChecked) {
  // The state's maker also checks its target's continuations elsewhere from
  // the cut, with its own variant (whose limits are the state's); after the
  // yes, a budget whose pressure limits the state is known for continues
  // from the cut (128), any other from before the limits (16), which widens
  // what the state is known for (so 24, 20 and 64 then continue from the
  // cut). (gfx950 with +sramecc: a target of its own.)
  RocdlSharedCodegenStats stats = compileBothWays(
      make(kLoopKernel, "gfx950\", features = \"+sramecc", "223.25"),
      "maxnreg=256;maxnreg=128;maxnreg=16;maxnreg=24;maxnreg=20;maxnreg=64");
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 6u);
  EXPECT_EQ(stats.continuedElsewhere, 6u);
  EXPECT_EQ(stats.continuedElsewhereFromCut, 4u);
  EXPECT_EQ(stats.refusedVariants, 0u);
}

TEST_F(RocdlSharedCodegenTest, UnfaithfulTargetIsNeverCut) {
  // gfx1100 pads the user SGPRs in instruction selection, which a copy's
  // MachineFunctionInfo does not carry.
  RocdlSharedCodegenStats stats =
      compileBothWays(make(kStraightKernel, "gfx1100", "209.25"),
                      "waves_per_eu=2;waves_per_eu=4;maxnreg=64");
  EXPECT_EQ(stats.cuts, 0u);
  EXPECT_EQ(stats.continued, 0u);
  EXPECT_EQ(stats.refusedModules, 3u);
}

TEST_F(RocdlSharedCodegenTest, TightBudgetsContinue) {
  // Register allocation under a small budget reads the target's
  // per-register flags, which a copy's MachineFunctionInfo must track from
  // its first register (as MachineModuleInfo's own functions do).
  RocdlSharedCodegenStats stats = compileBothWays(
      make(kStraightKernel, "gfx942", "210.25"),
      "maxnreg=16;maxnreg=32;passthrough.amdgpu-num-sgpr=16;maxnreg=64");
  EXPECT_EQ(stats.cuts, 1u);
  EXPECT_EQ(stats.continued, 4u);
}

TEST_F(RocdlSharedCodegenTest, InlineAsmIsNeverCut) {
  RocdlSharedCodegenStats stats =
      compileBothWays(make(kInlineAsmKernel, "gfx942", "205.25"),
                      "waves_per_eu=2;waves_per_eu=4;maxnreg=64");
  EXPECT_EQ(stats.cuts, 0u);
  EXPECT_EQ(stats.continued, 0u);
  EXPECT_EQ(stats.refusedModules, 3u);
}

TEST_F(RocdlSharedCodegenTest, TargetWithoutArchitectedFlatScratchIsNeverCut) {
  // gfx90a chooses the private-buffer register before the cut, from the
  // budget.
  RocdlSharedCodegenStats stats =
      compileBothWays(make(kStraightKernel, "gfx90a", "206.25"),
                      "waves_per_eu=2;passthrough.amdgpu-num-sgpr=32");
  EXPECT_EQ(stats.cuts, 0u);
  EXPECT_EQ(stats.continued, 0u);
  EXPECT_EQ(stats.refusedModules, 2u);
}

TEST_F(RocdlSharedCodegenTest, OtherHintKindsDoNotShare) {
  // An opt level or fast math is a shared optimisation of its own (or
  // none): none continues another's state.
  RocdlSharedCodegenStats stats = compileBothWays(
      make(kStraightKernel, "gfx942", "207.25"), "O=1;O=3;unsafe_fp_math=1");
  EXPECT_EQ(stats.continued, stats.cuts);
}

TEST_F(RocdlSharedCodegenTest, FatalErrorWhileKeepingReleasesTheClaim) {
  // A fatal error abandons the variant's frames, not unwinds them: under the
  // isolated executor it ends the variant's crash recovery context, under the
  // batch executor the binary pass returns from it (runUnwindingFatalErrors).
  onlyOneThreadAState();
  llvm::CrashRecoveryContext::Enable();
  FatalErrorsUnwindCrashRecovery fatalErrors;
  for (bool inCrashRecovery : {true, false}) {
    std::string gpuModule = make(kUnselectableKernel, "gfx942",
                                 inCrashRecovery ? "214.25" : "215.25");
    // What one variant, the last of its sweep with `running` beside it,
    // counted as not kept.
    auto notKept = [&](size_t running) {
      VariantQueue queue(1);
      queue.running = running;
      ScopedVariantQueue started(queue);
      uint64_t before = getRocdlSharedCodegenStats().notKept;
      auto compileFailing = [&] {
        OwningOpRef<ModuleOp> source =
            makeHintedCopies(context, gpuModule, "maxnreg=64");
        return runModuleToIsa(*source);
      };
      if (inCrashRecovery) {
        llvm::CrashRecoveryContext crc;
        EXPECT_FALSE(crc.RunSafely([&] { (void)compileFailing(); }));
        EXPECT_NE(takeLastFatalError().find("Cannot select"),
                  std::string::npos);
      } else {
        EXPECT_TRUE(failed(compileFailing()));
      }
      return getRocdlSharedCodegenStats().notKept - before;
    };
    // Beside another, it keeps nothing: the compile reaches the claim.
    EXPECT_EQ(notKept(1), 1u) << inCrashRecovery;
    // Alone, it keeps unless a state of its shared module exists or is being
    // kept: not kept the second time where the first one's claim outlived
    // its fatal error.
    EXPECT_EQ(notKept(0), 0u) << inCrashRecovery;
    EXPECT_EQ(notKept(0), 0u) << inCrashRecovery;
  }
}

TEST_F(RocdlSharedCodegenTest, ContinuesWhileTheCheckRuns) {
  // Two kept states of a target no continuation was checked on yet: the
  // variant that takes the first checks the target; one that takes the
  // second meanwhile continues too and waits for that verdict, instead of
  // compiling whole. (gfx950: no other test of this process continues on
  // it, so its check is still to make.)
  onlyOneThreadAState();
  Counted counted = straightBesideACheck("gfx950", "216.25");
  EXPECT_EQ(counted.cuts, 2u);
  EXPECT_EQ(counted.continued, 2u);
  EXPECT_EQ(counted.awaitedChecks, 1u);
}

TEST_F(RocdlSharedCodegenTest, ContinuesEarlyWhileTheCheckRuns) {
  // The same for continuations from before the passes that read the
  // pressure limits, which are checked on their own: two states of a loop
  // kept under the least budget, each taken by a variant whose limits lie
  // above theirs. (gfx942 with +sramecc: a target of its own, so its checks
  // are still to make; the first two variants make the one from the cut.)
  onlyOneThreadAState();
  std::string gpuModule =
      make(kLoopKernel, "gfx942\", features = \"+sramecc", "217.25");
  RocdlSharedCodegenStats before = getRocdlSharedCodegenStats();
  std::vector<std::string> isa = {compileAsVariant(gpuModule, "maxnreg=24")};
  llvm::append_range(
      isa, compileBesideACheck(gpuModule, /*early=*/true,
                               {"maxnreg=24", "waves_per_eu=1", "maxnreg=24",
                                "waves_per_eu=1,maxnreg=512"}));
  RocdlSharedCodegenStats after = getRocdlSharedCodegenStats();
  EXPECT_EQ(after.cuts - before.cuts, 2u);
  EXPECT_EQ(after.continued - before.continued, 3u);
  EXPECT_EQ(after.continuedEarly - before.continuedEarly, 2u);
  EXPECT_EQ(after.awaitedChecks - before.awaitedChecks, 1u);
  expectWhole(gpuModule,
              "maxnreg=24;maxnreg=24;waves_per_eu=1;maxnreg=24;"
              "waves_per_eu=1,maxnreg=512",
              isa);
}

TEST_F(RocdlSharedCodegenTest, CompilesWholeWhileTheCheckRunsWhereAsked) {
  // FLY_ROCDL_AWAIT_CHECK=0: the variant that finds its target's check
  // running compiles whole instead of waiting (the same objects; a bench's
  // side-by-side). (gfx942 with +xnack: a target of its own.)
  onlyOneThreadAState();
  setenv("FLY_ROCDL_AWAIT_CHECK", "0", 1);
  Counted counted =
      straightBesideACheck("gfx942\", features = \"+xnack", "218.25");
  EXPECT_EQ(counted.continued, 1u);
  EXPECT_EQ(counted.awaitedChecks, 0u);
}

/// Counts how often a variant holds its sweep back and lets it go.
class CountingHold : public SweepHold {
public:
  void holdBack() override { ++heldBack; }
  void letGo() override { ++letGone; }
  void letGoOpening() override { ++letGoneOpening; }
  std::atomic<int> heldBack{0}, letGone{0}, letGoneOpening{0};
};

TEST_F(RocdlSharedCodegenTest,
       VariantsCompileWholeWhileTheStateIsMadeItsSweepHeldBack) {
  // The variant that makes the state of its module holds its sweep back
  // while it does, and continues from it; one that starts meanwhile compiles
  // whole rather than waiting. (gfx950 with +xnack: a target of its own, so
  // its check elsewhere is made here, its whole compile first on the
  // maker's thread.)
  std::string gpuModule =
      make(kStraightKernel, "gfx950\", features = \"+xnack", "220.25");
  Signals signals;
  std::atomic<bool> made{false};
  CountingHold hold;
  setRocdlSharedCodegenTestHooks({{}, {}, [&] {
                                    if (made.exchange(true))
                                      return;
                                    EXPECT_EQ(hold.heldBack, 1);
                                    EXPECT_EQ(hold.letGone, 0);
                                    // Held back by the maker itself now.
                                    EXPECT_GE(hold.letGoneOpening, 1);
                                    signals.raise("making");
                                    signals.await({"whole"});
                                  }});
  RocdlSharedCodegenStats before = getRocdlSharedCodegenStats();
  std::vector<std::string> isa(2);
  std::thread maker(
      [&] { isa[0] = compileAsVariant(gpuModule, "maxnreg=200", &hold); });
  signals.await({"making"});
  // While the maker waits for it: a wait here would never end.
  isa[1] = compileAsVariant(gpuModule, "maxnreg=96");
  signals.raise("whole");
  maker.join();
  setRocdlSharedCodegenTestHooks({});
  RocdlSharedCodegenStats after = getRocdlSharedCodegenStats();
  EXPECT_EQ(hold.heldBack, 1);
  EXPECT_EQ(hold.letGone, 1);
  EXPECT_EQ(after.cuts - before.cuts, 1u);
  EXPECT_EQ(after.wholeWhileStateMade - before.wholeWhileStateMade, 1u);
  EXPECT_EQ(after.continuedElsewhere - before.continuedElsewhere, 1u);
  expectWhole(gpuModule, "maxnreg=200;maxnreg=96", isa);
}

TEST_F(RocdlSharedCodegenTest, AStateIsTakenWhileItsMakerChecksOnItsThread) {
  // Alone in its sweep (the others held back), the maker of a target's first
  // state checks on its own thread: the state is published and the sweep let
  // go first, so a variant that starts during the check continues from it
  // (and waits for the verdict) rather than compiling whole. (gfx950 with
  // +sramecc,+xnack: a target of its own.)
  std::string gpuModule =
      make(kStraightKernel, "gfx950\", features = \"+sramecc,+xnack", "224.25");
  CountingHold hold;
  std::vector<std::string> isa(2);
  std::optional<std::thread> during;
  setRocdlSharedCodegenTestHooks({{}, {}, {}, [&](bool fromCut) {
                                    if (fromCut)
                                      return;
                                    EXPECT_EQ(hold.heldBack, 1);
                                    EXPECT_EQ(hold.letGone, 1);
                                    during.emplace([&] {
                                      isa[1] = compileAsVariant(gpuModule,
                                                                "maxnreg=96");
                                    });
                                  }});
  RocdlSharedCodegenStats before = getRocdlSharedCodegenStats();
  isa[0] = compileAsVariant(gpuModule, "maxnreg=200", &hold);
  ASSERT_TRUE(during);
  during->join();
  setRocdlSharedCodegenTestHooks({});
  RocdlSharedCodegenStats after = getRocdlSharedCodegenStats();
  EXPECT_EQ(after.checksBeside - before.checksBeside, 0u);
  EXPECT_EQ(after.cuts - before.cuts, 1u);
  EXPECT_EQ(after.wholeWhileStateMade - before.wholeWhileStateMade, 0u);
  EXPECT_EQ(after.continuedElsewhere - before.continuedElsewhere, 2u);
  expectWhole(gpuModule, "maxnreg=200;maxnreg=96", isa);
}

TEST_F(RocdlSharedCodegenTest, TheVerdictComesBeforeTheCheckFromTheCut) {
  // Beside its maker, the check of a target's continuations elsewhere offers
  // its whole compile before it checks the continuation from the cut: the
  // maker's own continuation, waiting for the verdict, does not wait for
  // that check too. (gfx942 with -xnack: a target of its own.)
  std::string gpuModule =
      make(kStraightKernel, "gfx942\", features = \"-xnack", "225.25");
  RocdlSharedCodegenStats before = getRocdlSharedCodegenStats();
  std::atomic<bool> continuedFirst{false};
  setRocdlSharedCodegenTestHooks(
      {{}, {}, {}, [&](bool fromCut) {
         // Until the maker has continued on the verdict, a minute at most
         // (a verdict that waits for this check fails the test here).
         for (int i = 0; fromCut && i < 600; ++i) {
           if (getRocdlSharedCodegenStats().continuedElsewhere >
               before.continuedElsewhere) {
             continuedFirst = true;
             return;
           }
           std::this_thread::sleep_for(std::chrono::milliseconds(100));
         }
       }});
  std::vector<std::string> isa = {
      compileBesideAnother(gpuModule, "maxnreg=200")};
  setRocdlSharedCodegenTestHooks({});
  RocdlSharedCodegenStats after = getRocdlSharedCodegenStats();
  EXPECT_TRUE(continuedFirst);
  EXPECT_EQ(after.checksBeside - before.checksBeside, 1u);
  EXPECT_EQ(after.continuedElsewhere - before.continuedElsewhere, 1u);
  expectWhole(gpuModule, "maxnreg=200", isa);
}

TEST(CompileObservedTest, OptionsThatWatchLlvmByName) {
  // LLVM's printing, dumping, viewing, verifying and statistics options
  // (test/Tools/rocdl-shared-observed.test counts their output).
  for (StringRef name :
       {"amdgpu-dump-hsa-metadata", "amdgpu-verify-hsa-metadata",
        "print-after-isel", "print-changed", "print-regusage",
        "verify-machineinstrs", "view-edge-bundles", "stats-json", "debug-pass",
        "misched-dump-schedule-trace"})
    EXPECT_TRUE(isObservingOptionName(name)) << name.str();
  // Tuning options change every variant alike; MLIR's and the tools' own act
  // on MLIR.
  for (StringRef name :
       {"amdgpu-schedule-metric-bias", "time-budget", "verify-diagnostics",
        "verify-each", "dump-pass-pipeline", "mlir-print-ir-after-all",
        "fly-hints", "printer", "reviewer"})
    EXPECT_FALSE(isObservingOptionName(name)) << name.str();
}

} // namespace

TEST_F(RocdlSharedCodegenTest, ChecksOnAThreadOfTheirOwnBesideOtherVariants) {
  // The variant that takes the only kept state of a target not checked yet,
  // with other variants of its sweep running beside it, hands the check and
  // the state to a thread of its own and waits for a state to be given back:
  // that one, after the yes, which it continues; so does the next variant.
  // (gfx942 with +sramecc,+xnack: a target of its own.)
  onlyOneThreadAState();
  std::string gpuModule =
      make(kStraightKernel, "gfx942\", features = \"+sramecc,+xnack", "219.25");
  std::mutex mutex;
  std::vector<std::thread::id> checkedOn;
  setRocdlSharedCodegenTestHooks({[&](bool) {
                                    std::lock_guard<std::mutex> lock(mutex);
                                    checkedOn.push_back(
                                        std::this_thread::get_id());
                                  },
                                  {}});
  RocdlSharedCodegenStats before = getRocdlSharedCodegenStats();
  std::vector<std::string> isa = {compileAsVariant(gpuModule, "maxnreg=200")};
  isa.push_back(compileBesideAnother(gpuModule, "maxnreg=128"));
  RocdlSharedCodegenStats beside = getRocdlSharedCodegenStats();
  isa.push_back(compileAsVariant(gpuModule, "maxnreg=96"));
  RocdlSharedCodegenStats after = getRocdlSharedCodegenStats();
  setRocdlSharedCodegenTestHooks({});
  ASSERT_EQ(checkedOn.size(), 1u);
  EXPECT_NE(checkedOn.front(), std::this_thread::get_id());
  EXPECT_EQ(beside.checksBeside - before.checksBeside, 1u);
  EXPECT_EQ(beside.cuts - before.cuts, 1u);
  EXPECT_EQ(beside.continued - before.continued, 1u);
  EXPECT_EQ(beside.refusedVariants - before.refusedVariants, 0u);
  EXPECT_EQ(after.continued - beside.continued, 1u);
  EXPECT_EQ(after.checksBeside - beside.checksBeside, 0u);
  expectWhole(gpuModule, "maxnreg=200;maxnreg=128;maxnreg=96", isa);
}
