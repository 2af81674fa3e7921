//===- SharedIsaTest.cpp - Which variants share an ISA, and how -----------===//

#include "fly/Replay/SharedIsa.h"

#include "fly/Hints/ApplyHints.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace fly;

namespace {

constexpr llvm::StringLiteral kTwoKernels = R"mlir(
gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90">] {
  llvm.func @a() attributes {gpu.kernel, nvvm.kernel} { llvm.return }
  llvm.func @b() attributes {gpu.kernel, nvvm.kernel, nvvm.maxnreg = 48 : i32} {
    llvm.return
  }
}
)mlir";

class SharedIsaTest : public ::testing::Test {
protected:
  SharedIsaTest() {
    context.loadDialect<gpu::GPUDialect, LLVM::LLVMDialect, NVVM::NVVMDialect,
                        ROCDL::ROCDLDialect>();
  }

  gpu::GPUModuleOp parse(llvm::StringRef text) {
    owned = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(owned);
    return *owned->getOps<gpu::GPUModuleOp>().begin();
  }

  static HintSet hints(llvm::StringRef text) {
    llvm::Expected<HintSet> set = HintSet::parse(text);
    EXPECT_TRUE(bool(set));
    return set ? *set : HintSet();
  }

  std::optional<SharedIsaKey> key(gpu::GPUModuleOp m, llvm::StringRef text) {
    return getSharedIsaKey({m}, hints(text), "");
  }

  /// A fake shared PTX as NVPTXAsmPrinter prints the sentinels.
  ArrayAttr sharedPtx(llvm::StringRef body) {
    auto target =
        NVVM::NVVMTargetAttr::get(&context, 3, "nvptx64-nvidia-cuda", "sm_90");
    auto object =
        gpu::ObjectAttr::get(&context, target, gpu::CompilationTarget::Assembly,
                             StringAttr::get(&context, body), nullptr, nullptr);
    return ArrayAttr::get(&context, {object});
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> owned;
};

constexpr llvm::StringLiteral kSentinelPtx =
    "// header\n.entry a(\n)\n.maxnreg 1000000000\n{\n}\n"
    ".entry b(\n)\n.maxnreg 1000000001\n{\n}\n";

} // namespace

TEST_F(SharedIsaTest, MaxnregAndPtxasOptionsShareTheKey) {
  gpu::GPUModuleOp m = parse(kTwoKernels);
  std::optional<SharedIsaKey> base = key(m, "");
  ASSERT_TRUE(base);
  EXPECT_EQ(key(m, "maxnreg=32"), base);
  EXPECT_EQ(key(m, "maxnreg=64,opts=\"-O1 -v\""), base);
  // These change the PTX itself.
  EXPECT_NE(key(m, "O=1"), base);
  EXPECT_NE(key(m, "fast_fp_math=1"), base);
  EXPECT_NE(key(m, "target.chip=sm_80"), base);
  // The binary pass's own extra `opts` is part of the key.
  EXPECT_NE(getSharedIsaKey({m}, HintSet(), "-32"), base);
}

TEST_F(SharedIsaTest, RocdlSharesNothing) {
  gpu::GPUModuleOp m = parse(R"mlir(
gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
  llvm.func @a() attributes {gpu.kernel, rocdl.kernel} { llvm.return }
})mlir");
  // Code generation reads every ROCDL hint: each variant is its own key.
  ASSERT_TRUE(key(m, ""));
  EXPECT_NE(key(m, "waves_per_eu=2"), key(m, ""));
  EXPECT_NE(key(m, "maxnreg=64"), key(m, ""));
  EXPECT_EQ(key(m, "waves_per_eu=0"), key(m, ""));
}

TEST_F(SharedIsaTest, NormalizeWritesSentinelsAndDropsPtxasOptions) {
  gpu::GPUModuleOp m = parse(kTwoKernels);
  ASSERT_TRUE(succeeded(applyHints(m, hints("opts=-O1"))));
  normalizeForSharedIsa(m);
  SmallVector<LLVM::LLVMFuncOp> kernels = getKernels(m);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0]->getAttrOfType<IntegerAttr>("nvvm.maxnreg").getInt(),
            1000000000);
  EXPECT_EQ(kernels[1]->getAttrOfType<IntegerAttr>("nvvm.maxnreg").getInt(),
            1000000001);
  auto target = cast<NVVM::NVVMTargetAttr>(m.getTargetsAttr()[0]);
  EXPECT_FALSE(target.getFlags());
}

TEST_F(SharedIsaTest, InstantiateWritesEachKernelsOwnDirective) {
  gpu::GPUModuleOp m = parse(kTwoKernels);
  ArrayAttr shared = sharedPtx(kSentinelPtx);
  EXPECT_TRUE(hasSentinelsOnce(shared, 2));

  // Unhinted: @a has no maxnreg (line gone), @b keeps its own 48.
  FailureOr<ArrayAttr> plain = instantiateSharedIsa(shared, m);
  ASSERT_TRUE(succeeded(plain));
  EXPECT_EQ(cast<gpu::ObjectAttr>((*plain)[0]).getObject().getValue(),
            "// header\n.entry a(\n)\n{\n}\n.entry b(\n)\n.maxnreg 48\n{\n}\n");

  ASSERT_TRUE(succeeded(applyHints(m, hints("maxnreg=32,opts=-O1"))));
  FailureOr<ArrayAttr> hinted = instantiateSharedIsa(shared, m);
  ASSERT_TRUE(succeeded(hinted));
  auto object = cast<gpu::ObjectAttr>((*hinted)[0]);
  EXPECT_EQ(object.getObject().getValue(),
            "// header\n.entry a(\n)\n.maxnreg 32\n{\n}\n"
            ".entry b(\n)\n.maxnreg 32\n{\n}\n");
  // The object carries the variant's own target (with its ptxas options).
  EXPECT_EQ(object.getTarget(), m.getTargetsAttr()[0]);
}

TEST_F(SharedIsaTest, MissingOrRepeatedSentinelIsNotShareable) {
  gpu::GPUModuleOp m = parse(kTwoKernels);
  EXPECT_FALSE(hasSentinelsOnce(sharedPtx(".entry a(\n)\n{\n}\n"), 2));
  EXPECT_FALSE(hasSentinelsOnce(
      sharedPtx("\n.maxnreg 1000000000\n\n.maxnreg 1000000000\n"
                "\n.maxnreg 1000000001\n"),
      2));
  EXPECT_TRUE(failed(instantiateSharedIsa(sharedPtx("no directives\n"), m)));
}
