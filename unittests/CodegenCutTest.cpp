//===- CodegenCutTest.cpp - Traces and widened pressure limits ------------===//
//
// CodegenCut::trace and widenLimits on a gfx942 kernel with a loop: a trace
// under a lower VGPR budget that makes the loop as the kept compile did
// widens the limits the cut serves, one at the kept limits changes nothing,
// and one of another loop body differs.
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
  std::unique_ptr<llvm::Module> kept = parse("2.0", "");
  CodegenCut::Whole whole = CodegenCut::compileKeeping(
      *machine, *kept, "amdgpu-prepare-agpr-alloc", size_t(64) << 20);
  ASSERT_TRUE(whole.cut) << whole.error;
  ASSERT_TRUE(whole.assembly);
  CodegenCut::Trace own = whole.cut->getTrace();
  ASSERT_EQ(own.functions.size(), 1u);
  EXPECT_EQ(own.functions[0].name, "k");
  // After two early-machinelicm, one machine-sink and at the cut.
  EXPECT_EQ(own.functions[0].digests.size(), 4u);

  // Under the same limits: nothing to widen.
  std::unique_ptr<llvm::Module> same = parse("2.0", "");
  std::optional<CodegenCut::Trace> sameTrace =
      CodegenCut::trace(*machine, *same, "amdgpu-prepare-agpr-alloc");
  ASSERT_TRUE(sameTrace);
  EXPECT_EQ(whole.cut->widenLimits(*sameTrace),
            CodegenCut::Widening::Unchanged);

  // The least VGPR budget: lower limits, the same loop.
  std::unique_ptr<llvm::Module> least = parse("2.0", "\"amdgpu-num-vgpr\"=\"1\"");
  std::optional<CodegenCut::Trace> leastTrace =
      CodegenCut::trace(*machine, *least, "amdgpu-prepare-agpr-alloc");
  ASSERT_TRUE(leastTrace);
  ASSERT_EQ(leastTrace->functions.size(), 1u);
  EXPECT_NE(leastTrace->functions[0].limits, own.functions[0].limits);
  EXPECT_EQ(leastTrace->functions[0].digests, own.functions[0].digests);
  EXPECT_EQ(whole.cut->widenLimits(*leastTrace),
            CodegenCut::Widening::Widened);
  // The trace of the cut is still its own compile's.
  EXPECT_EQ(whole.cut->getTrace().functions[0].limits,
            own.functions[0].limits);
  // Widened once, the same trace adds nothing.
  EXPECT_EQ(whole.cut->widenLimits(*leastTrace),
            CodegenCut::Widening::Unchanged);

  // Another loop body under the name: its digests differ.
  std::unique_ptr<llvm::Module> other = parse("3.0", "\"amdgpu-num-vgpr\"=\"1\"");
  std::optional<CodegenCut::Trace> otherTrace =
      CodegenCut::trace(*machine, *other, "amdgpu-prepare-agpr-alloc");
  ASSERT_TRUE(otherTrace);
  EXPECT_EQ(whole.cut->widenLimits(*otherTrace),
            CodegenCut::Widening::Differs);
}

TEST_F(CodegenCutTest, NoSuchPassNoTrace) {
  std::unique_ptr<llvm::Module> module = parse("2.0", "");
  EXPECT_FALSE(CodegenCut::trace(*machine, *module, "no-such-pass"));
  EXPECT_FALSE(CodegenCut::trace(*machine, *module, "instcombine"));
}

} // namespace
