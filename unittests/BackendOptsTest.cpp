//===- BackendOptsTest.cpp - Classifying gpu-module-to-binary opts --------===//

#include "fly/Hints/BackendOpts.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace fly;

namespace {

using Kind = RocdlOptsToken::Kind;

TEST(BackendOptsTest, FlyDslFlagsBecomeHints) {
  auto tokens =
      classifyRocdlOpts("--amdgpu-waves-per-eu=4 --amdgpu-num-vgpr=64");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].kind, Kind::Hint);
  EXPECT_EQ(tokens[0].hintKey, "waves_per_eu");
  EXPECT_EQ(tokens[0].hintValue, "4");
  EXPECT_EQ(tokens[1].hintKey, "maxnreg");
  EXPECT_EQ(tokens[1].hintValue, "64");
}

TEST(BackendOptsTest, SpellingsAndSeparateValues) {
  auto tokens = classifyRocdlOpts("-amdgpu-num-sgpr 40 -O2 --mcpu=gfx90a "
                                  "--amdgpu-waves-per-eu=2,4 "
                                  "-amdgpu-flat-work-group-size=1,256");
  ASSERT_EQ(tokens.size(), 5u);
  EXPECT_EQ(tokens[0].text, "-amdgpu-num-sgpr 40");
  EXPECT_EQ(tokens[0].hintKey, "passthrough.amdgpu-num-sgpr");
  EXPECT_EQ(tokens[0].hintValue, "40");
  EXPECT_EQ(tokens[1].hintKey, "O");
  EXPECT_EQ(tokens[1].hintValue, "2");
  EXPECT_EQ(tokens[2].hintKey, "target.chip");
  EXPECT_EQ(tokens[3].hintKey, "passthrough.amdgpu-waves-per-eu");
  EXPECT_EQ(tokens[3].hintValue, "2,4");
  EXPECT_EQ(tokens[4].hintKey, "passthrough.amdgpu-flat-work-group-size");
}

TEST(BackendOptsTest, UnknownOrInvalidHasNoIREquivalent) {
  // Unknown flags, out-of-range values and missing values are not hints.
  auto tokens = classifyRocdlOpts(
      "--amdgpu-foo --amdgpu-waves-per-eu=99 --amdgpu-num-vgpr= -v plain");
  ASSERT_EQ(tokens.size(), 5u);
  for (const RocdlOptsToken &token : tokens)
    EXPECT_EQ(token.kind, Kind::NoIREquivalent) << token.text;
}

class BackendOptsModuleTest : public ::testing::Test {
protected:
  BackendOptsModuleTest() {
    context.loadDialect<gpu::GPUDialect, LLVM::LLVMDialect, ROCDL::ROCDLDialect,
                        NVVM::NVVMDialect>();
  }
  SmallVector<gpu::GPUModuleOp> parse(StringRef target) {
    std::string text = ("module attributes {gpu.container_module} {\n"
                        "  gpu.module @m [" +
                        target +
                        "] {\n"
                        "    llvm.func @k() attributes {gpu.kernel} {\n"
                        "      llvm.return\n    }\n  }\n}\n")
                           .str();
    module = parseSourceString<ModuleOp>(text, &context);
    return llvm::to_vector(module->getOps<gpu::GPUModuleOp>());
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(BackendOptsModuleTest, RocdlGetsHintsLastFlagWins) {
  auto gpuModules = parse("#rocdl.target<chip = \"gfx942\">");
  HintSet hints =
      getBinaryOptsHints("--amdgpu-waves-per-eu=4 --x --amdgpu-waves-per-eu=2 "
                         "--amdgpu-num-vgpr=64",
                         gpuModules);
  EXPECT_EQ(hints.canonical(), "maxnreg=64,waves_per_eu=2");
  auto messages = describeBinaryOpts("--amdgpu-num-vgpr=64 --x", gpuModules);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_FALSE(messages[0].isWarning);
  EXPECT_TRUE(messages[1].isWarning);
  EXPECT_NE(messages[1].text.find("'--x' has no effect"), std::string::npos);
}

TEST_F(BackendOptsModuleTest, NvvmKeepsOptsForPtxas) {
  auto gpuModules = parse("#nvvm.target<chip = \"sm_90\">");
  EXPECT_TRUE(getBinaryOptsHints("--amdgpu-num-vgpr=64", gpuModules).empty());
  EXPECT_TRUE(describeBinaryOpts("-v", gpuModules).empty());
}

TEST(BackendOptsTest, OverlayKeepsTheHintSetsOwnValues) {
  HintSet base = cantFail(HintSet::parse("waves_per_eu=4,maxnreg=64"));
  HintSet own = cantFail(HintSet::parse("waves_per_eu=8"));
  EXPECT_EQ(overlayHints(base, own).canonical(), "maxnreg=64,waves_per_eu=8");
  EXPECT_EQ(overlayHints(HintSet(), own).canonical(), "waves_per_eu=8");
}

} // namespace
