//===- CodegenCutTest.cpp - Traces and widened pressure limits ------------===//
//
// The two points a CodegenCut keeps on a gfx942 kernel with a loop: a budget
// whose pressure limits the cut does not serve continues from before the
// passes that read them, as its whole compile does, and its trace (the loop
// made alike) widens the limits the cut serves; a trace at the kept limits
// changes nothing, one of another loop body differs.
//
//===----------------------------------------------------------------------===//

#include "fly/Backend/CodegenCut.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include "gtest/gtest.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace fly;

namespace {

/// A loop summing `n` floats scaled by @SCALE@.
constexpr llvm::StringRef kLoop = R"ll(
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %n) #0 {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %sum, %loop ]
  %q = getelementptr float, ptr addrspace(1) %p, i32 %i
  %v = load float, ptr addrspace(1) %q
  %w = fmul float %v, @SCALE@
  %sum = fadd float %acc, %w
  %next = add i32 %i, 1
  %done = icmp sge i32 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  store float %sum, ptr addrspace(1) %p
  ret void
}
attributes #0 = { nounwind @ATTRS@ }
)ll";

/// A loop between noalias scopes, then LDS through a barrier: the kept
/// machine functions refer to blocks, values, a global, constants and
/// metadata nodes of several kinds (one of them not LLVM's own).
constexpr llvm::StringRef kScoped = R"ll(
target triple = "amdgcn-amd-amdhsa"
@lds = internal addrspace(3) global [64 x float] poison, align 4
define amdgpu_kernel void @k(ptr addrspace(1) %p, ptr addrspace(1) %out,
                             i32 %n) #0 {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %sum, %loop ]
  %q = getelementptr float, ptr addrspace(1) %p, i32 %i
  %v = load float, ptr addrspace(1) %q, !alias.scope !1, !noalias !4, !fly.test !5
  %w = fmul float %v, 2.0
  %sum = fadd float %acc, %w
  %next = add i32 %i, 1
  %done = icmp sge i32 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !3
  %slot = getelementptr [64 x float], ptr addrspace(3) @lds, i32 0, i32 %tid
  store float %sum, ptr addrspace(3) %slot
  call void @llvm.amdgcn.s.barrier()
  %back = load float, ptr addrspace(3) getelementptr ([64 x float], ptr addrspace(3) @lds, i32 0, i32 1)
  store float %back, ptr addrspace(1) %out, !alias.scope !4, !noalias !1
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,64" @ATTRS@ }
!0 = distinct !{!0, !"domain"}
!1 = !{!2}
!2 = distinct !{!2, !0, !"in"}
!3 = !{i32 0, i32 64}
!4 = !{!6}
!5 = !{}
!6 = distinct !{!6, !0, !"out"}
)ll";

class CodegenCutTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  }

  CodegenCutTest() : machine(makeMachine()) {}

  /// A gfx942 machine of its own.
  static std::unique_ptr<llvm::TargetMachine> makeMachine() {
    std::string error;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(
        llvm::Triple("amdgcn-amd-amdhsa"), error);
    EXPECT_NE(target, nullptr) << error;
    if (!target)
      return nullptr;
    return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
        llvm::Triple("amdgcn-amd-amdhsa"), "gfx942", "", {}, std::nullopt));
  }

  std::unique_ptr<llvm::Module> parse(llvm::StringRef scale,
                                      llvm::StringRef attrs) {
    std::string text = kLoop.str();
    text.replace(text.find("@SCALE@"), 7, scale.str());
    return parseText(text, attrs, context);
  }

  std::unique_ptr<llvm::Module>
  parseText(std::string text, llvm::StringRef attrs, llvm::LLVMContext &in) {
    text.replace(text.find("@ATTRS@"), 7, attrs.str());
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(text, error, in);
    EXPECT_TRUE(module) << error.getMessage().str();
    if (module)
      module->setDataLayout(machine->createDataLayout());
    return module;
  }

  llvm::LLVMContext context;
  std::unique_ptr<llvm::TargetMachine> machine;
};

TEST_F(CodegenCutTest, TracesWidenTheLimitsACutServes) {
  std::unique_ptr<llvm::Module> module = parse("2.0", "");
  CodegenCut::Whole whole = CodegenCut::compileKeeping(
      *machine, *module, "amdgpu-prepare-agpr-alloc", size_t(64) << 20);
  ASSERT_TRUE(whole.cut) << whole.error;
  ASSERT_TRUE(whole.assembly);
  CodegenCut::Trace own = whole.cut->getTrace();
  ASSERT_EQ(own.functions.size(), 1u);
  EXPECT_EQ(own.functions[0].name, "k");
  // After two early-machinelicm, one machine-sink and at the cut.
  EXPECT_EQ(own.functions[0].digests.size(), 4u);
  llvm::Function &k = *module->getFunction("k");

  // Under the same limits, from before the first pass that reads them:
  // nothing to widen.
  std::optional<CodegenCut::Trace> same = whole.cut->traceFromEarly();
  ASSERT_TRUE(same);
  ASSERT_EQ(same->functions.size(), 1u);
  EXPECT_EQ(same->functions[0].limits, own.functions[0].limits);
  EXPECT_EQ(same->functions[0].digests, own.functions[0].digests);
  EXPECT_EQ(whole.cut->widenLimits(*same), CodegenCut::Widening::Unchanged);

  // A tight VGPR budget: other limits, which the cut does not serve yet.
  k.addFnAttr("amdgpu-num-vgpr", "12");
  CodegenCut::Refusal refusal;
  EXPECT_FALSE(whole.cut->continueToAssembly(refusal));
  EXPECT_EQ(refusal, CodegenCut::Refusal::PressureLimits);
  // From before the passes that read them it continues, as a whole compile
  // with that budget does, and its trace (the loop made alike) widens them.
  CodegenCut::Trace tight;
  std::optional<llvm::SmallString<0>> early =
      whole.cut->continueFromEarly(refusal, tight);
  ASSERT_TRUE(early);
  std::unique_ptr<llvm::Module> alone =
      parse("2.0", "\"amdgpu-num-vgpr\"=\"12\"");
  CodegenCut::Whole reference = CodegenCut::compileKeeping(
      *machine, *alone, "amdgpu-prepare-agpr-alloc", size_t(64) << 20);
  ASSERT_TRUE(reference.assembly);
  EXPECT_TRUE(*early == *reference.assembly);
  ASSERT_EQ(tight.functions.size(), 1u);
  EXPECT_NE(tight.functions[0].limits, own.functions[0].limits);
  EXPECT_EQ(tight.functions[0].digests, own.functions[0].digests);
  EXPECT_EQ(whole.cut->widenLimits(tight), CodegenCut::Widening::Widened);
  // Now served from the cut, a budget between the two too.
  std::optional<llvm::SmallString<0>> fromCut =
      whole.cut->continueToAssembly(refusal);
  ASSERT_TRUE(fromCut);
  EXPECT_TRUE(*fromCut == *early);
  k.addFnAttr("amdgpu-num-vgpr", "24");
  EXPECT_TRUE(whole.cut->continueToAssembly(refusal));
  // The trace of the cut is still its own compile's; widened once, the same
  // trace adds nothing.
  EXPECT_EQ(whole.cut->getTrace().functions[0].limits, own.functions[0].limits);
  EXPECT_EQ(whole.cut->widenLimits(tight), CodegenCut::Widening::Unchanged);

  // Another loop body under the name: its digests differ.
  std::unique_ptr<llvm::Module> other = parse("3.0", "");
  CodegenCut::Whole otherWhole = CodegenCut::compileKeeping(
      *machine, *other, "amdgpu-prepare-agpr-alloc", size_t(64) << 20);
  ASSERT_TRUE(otherWhole.cut) << otherWhole.error;
  EXPECT_EQ(whole.cut->widenLimits(otherWhole.cut->getTrace()),
            CodegenCut::Widening::Differs);
}

// Continued elsewhere (a copy of the module in another context, another
// machine), a cut gives what a whole compile there gives: from the cut, and
// from before the limits where the hints move them; several threads at once
// beside a continuation of the cut itself.
TEST_F(CodegenCutTest, ContinuesElsewhereAsAWholeCompileThere) {
  std::unique_ptr<llvm::Module> module = parseText(kScoped.str(), "", context);
  CodegenCut::Whole whole = CodegenCut::compileKeeping(
      *machine, *module, "amdgpu-prepare-agpr-alloc", size_t(64) << 20);
  ASSERT_TRUE(whole.cut) << whole.error;
  ASSERT_TRUE(whole.cut->makePortable());

  struct Hint {
    const char *name, *value;
    CodegenCut::Point from;
  };
  for (Hint hint : {Hint{nullptr, nullptr, CodegenCut::Point::Cut},
                    Hint{"amdgpu-waves-per-eu", "4", CodegenCut::Point::Early},
                    Hint{"amdgpu-num-vgpr", "12", CodegenCut::Point::Early}}) {
    SCOPED_TRACE(hint.name ? hint.name : "(none)");
    std::string attrs =
        hint.name ? "\"" + std::string(hint.name) + "\"=\"" + hint.value + "\""
                  : "";
    llvm::LLVMContext alone;
    std::unique_ptr<llvm::Module> reference =
        parseText(kScoped.str(), attrs, alone);
    std::unique_ptr<llvm::TargetMachine> referenceMachine = makeMachine();
    CodegenCut::Whole referenceWhole = CodegenCut::compileKeeping(
        *referenceMachine, *reference, "amdgpu-prepare-agpr-alloc",
        size_t(64) << 20);
    ASSERT_TRUE(referenceWhole.assembly);

    auto setHint = [&](llvm::Module &copy) {
      if (hint.name)
        copy.getFunction("k")->addFnAttr(hint.name, hint.value);
      return true;
    };
    llvm::LLVMContext elsewhere;
    std::unique_ptr<llvm::TargetMachine> there = makeMachine();
    CodegenCut::Refusal refusal;
    std::optional<llvm::SmallString<0>> fromCut = whole.cut->continueElsewhere(
        *there, elsewhere, setHint, CodegenCut::Point::Cut, refusal, nullptr);
    if (hint.from == CodegenCut::Point::Early) {
      EXPECT_FALSE(fromCut);
      EXPECT_EQ(refusal, CodegenCut::Refusal::PressureLimits);
      CodegenCut::Trace trace;
      std::optional<llvm::SmallString<0>> early = whole.cut->continueElsewhere(
          *there, elsewhere, setHint, CodegenCut::Point::Early, refusal,
          &trace);
      ASSERT_TRUE(early);
      EXPECT_TRUE(*early == *referenceWhole.assembly);
      EXPECT_EQ(trace.functions.size(), 1u);
    } else {
      ASSERT_TRUE(fromCut) << int(refusal);
      EXPECT_TRUE(*fromCut == *referenceWhole.assembly);
    }
  }

  // Four threads elsewhere at once, and the cut continued here meanwhile.
  std::vector<std::optional<llvm::SmallString<0>>> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      llvm::LLVMContext own;
      std::unique_ptr<llvm::TargetMachine> there = makeMachine();
      CodegenCut::Refusal refusal;
      results[i] = whole.cut->continueElsewhere(
          *there, own, [](llvm::Module &) { return true; },
          CodegenCut::Point::Cut, refusal, nullptr);
    });
  CodegenCut::Refusal refusal;
  std::optional<llvm::SmallString<0>> here =
      whole.cut->continueToAssembly(refusal);
  for (std::thread &t : threads)
    t.join();
  ASSERT_TRUE(here);
  EXPECT_TRUE(*here == *whole.assembly);
  for (const auto &result : results) {
    ASSERT_TRUE(result);
    EXPECT_TRUE(*result == *whole.assembly);
  }
}

TEST_F(CodegenCutTest, NoSuchPassNoCut) {
  std::unique_ptr<llvm::Module> module = parse("2.0", "");
  CodegenCut::Whole whole =
      CodegenCut::compileKeeping(*machine, *module, "no-such-pass", 1 << 20);
  EXPECT_FALSE(whole.cut);
  EXPECT_TRUE(whole.assembly);
  EXPECT_NE(whole.error.find("no pass named"), std::string::npos);
}

} // namespace
