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

class CodegenCutTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  }

  CodegenCutTest() {
    std::string error;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(
        llvm::Triple("amdgcn-amd-amdhsa"), error);
    EXPECT_NE(target, nullptr) << error;
    machine.reset(target->createTargetMachine(llvm::Triple("amdgcn-amd-amdhsa"),
                                              "gfx942", "", {}, std::nullopt));
  }

  std::unique_ptr<llvm::Module> parse(llvm::StringRef scale,
                                      llvm::StringRef attrs) {
    std::string text = kLoop.str();
    text.replace(text.find("@SCALE@"), 7, scale.str());
    text.replace(text.find("@ATTRS@"), 7, attrs.str());
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(text, error, context);
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

TEST_F(CodegenCutTest, NoSuchPassNoCut) {
  std::unique_ptr<llvm::Module> module = parse("2.0", "");
  CodegenCut::Whole whole =
      CodegenCut::compileKeeping(*machine, *module, "no-such-pass", 1 << 20);
  EXPECT_FALSE(whole.cut);
  EXPECT_TRUE(whole.assembly);
  EXPECT_NE(whole.error.find("no pass named"), std::string::npos);
}

} // namespace
