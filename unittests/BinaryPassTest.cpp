//===- BinaryPassTest.cpp - gpu-module-to-binary's options, typed ---------===//

#include "fly/Replay/BinaryPass.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace fly;

namespace {

class BinaryPassTest : public ::testing::Test {
protected:
  BinaryPassOptions parse(llvm::StringRef text) {
    mlir::FailureOr<BinaryPassOptions> options =
        parseBinaryPass(text, mlir::UnknownLoc::get(&context));
    EXPECT_TRUE(mlir::succeeded(options)) << text.str();
    return mlir::succeeded(options) ? *options : BinaryPassOptions();
  }

  mlir::MLIRContext context;
};

TEST_F(BinaryPassTest, SpellingsOfOnePassAreTheSame) {
  BinaryPassOptions reference =
      parse("gpu-module-to-binary{format=bin toolkit=/t l=a.bc,b.bc "
            "opts=\"-v -w\"}");
  for (llvm::StringRef text :
       {"builtin.module(gpu-module-to-binary{opts={-v -w} l=a.bc,b.bc "
        "toolkit=/t format=binary})",
        "  gpu-module-to-binary{ toolkit=/t format=bin opts='-v -w' "
        "l={a.bc,b.bc} section=}  "})
    EXPECT_TRUE(isSameBinaryPass(parse(text), reference)) << text.str();
  // The default pass equals its fully spelled-out defaults and its print.
  BinaryPassOptions defaults = parse("gpu-module-to-binary");
  EXPECT_TRUE(isSameBinaryPass(
      parse("gpu-module-to-binary{format=fatbinary toolkit= opts=}"),
      defaults));
  EXPECT_TRUE(isSameBinaryPass(parse(printBinaryPass(reference)), reference));
}

TEST_F(BinaryPassTest, EachOptionMakesADifferentPass) {
  BinaryPassOptions reference =
      parse("gpu-module-to-binary{format=bin toolkit=/t l=a.bc opts=-v "
            "section=s}");
  for (llvm::StringRef text : {
           "gpu-module-to-binary{format=isa toolkit=/t l=a.bc opts=-v "
           "section=s}",
           "gpu-module-to-binary{format=bin toolkit=/u l=a.bc opts=-v "
           "section=s}",
           "gpu-module-to-binary{format=bin toolkit=/t l=b.bc opts=-v "
           "section=s}",
           "gpu-module-to-binary{format=bin toolkit=/t l=a.bc,b.bc opts=-v "
           "section=s}",
           "gpu-module-to-binary{format=bin toolkit=/t l=a.bc opts=-w "
           "section=s}",
           "gpu-module-to-binary{format=bin toolkit=/t l=a.bc opts=-v "
           "section=t}",
       }) {
    EXPECT_FALSE(isSameBinaryPass(parse(text), reference)) << text.str();
    EXPECT_FALSE(isSameBinaryPass(reference, parse(text))) << text.str();
  }
}

TEST_F(BinaryPassTest, ConfiguredPassReadsAsItsText) {
  // What an instrumentation or the fly-snapshot pass sees of a pipeline's
  // own gpu-module-to-binary: the options it was configured with.
  std::unique_ptr<mlir::Pass> pass = mlir::createGpuModuleToBinaryPass();
  ASSERT_TRUE(mlir::succeeded(pass->initializeOptions(
      "format=isa toolkit={/a b} opts={--x=1 --y}",
      [](const llvm::Twine &) { return mlir::failure(); })));
  mlir::FailureOr<BinaryPassOptions> read =
      readBinaryPassOptions(*pass, mlir::UnknownLoc::get(&context));
  ASSERT_TRUE(mlir::succeeded(read));
  EXPECT_EQ(read->toolkitPath, "/a b");
  EXPECT_EQ(read->cmdOptions, "--x=1 --y");
  EXPECT_TRUE(isSameBinaryPass(
      *read, parse("gpu-module-to-binary{format=isa toolkit={/a b} "
                   "opts={--x=1 --y}}")));
}

} // namespace
