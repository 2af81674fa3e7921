//===- SplitPipelineTest.cpp - The split reads passes, not their text -----===//

#include "fly/Pipeline/SplitPipeline.h"

#include "mlir/InitAllPasses.h"

#include "gtest/gtest.h"

using namespace fly;

namespace {

class SplitPipelineTest : public ::testing::Test {
protected:
  SplitPipelineTest() {
    static bool registered = [] {
      mlir::registerAllPasses();
      return true;
    }();
    (void)registered;
  }
};

TEST_F(SplitPipelineTest, AnOptionNamingTheBinaryPassIsNoNestedBinaryPass) {
  // A link library called gpu-module-to-binary.bc is an option value, not a
  // binary pass inside rocdl-attach-target.
  llvm::Expected<SplitPipeline> split = splitAtBinaryPass(
      "builtin.module(rocdl-attach-target{chip=gfx942 "
      "l=/libs/gpu-module-to-binary.bc},gpu-module-to-binary{format=isa},cse)");
  ASSERT_TRUE(bool(split)) << llvm::toString(split.takeError());
  EXPECT_NE(split->prefix.find("rocdl-attach-target"), std::string::npos);
  EXPECT_NE(split->binaryPass.find("format=isa"), std::string::npos);
  EXPECT_EQ(split->suffix, "cse");
}

TEST_F(SplitPipelineTest, ABinaryPassNestedAtAnyDepthIsAnError) {
  for (const char *pipeline :
       {"builtin.module(func.func(gpu-module-to-binary))",
        "builtin.module(any(cse,func.func(gpu-module-to-binary)))"}) {
    llvm::Expected<SplitPipeline> split = splitAtBinaryPass(pipeline);
    ASSERT_FALSE(bool(split)) << pipeline;
    EXPECT_NE(llvm::toString(split.takeError()).find("it is nested in"),
              std::string::npos)
        << pipeline;
  }
}

} // namespace
