//===- ApplyHintsTest.cpp - Writing hints onto gpu.module clones ----------===//

#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/HintSet.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>
#include <tuple>
#include <vector>

using namespace mlir;
using namespace fly;
using llvm::StringRef;

namespace {

constexpr StringRef kROCDLModule = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<O = 2, chip = "gfx942", flags = {"unsafe-math"}, link = ["/lib/extra.bc"]>] {
    llvm.func @k(%arg0: !llvm.ptr) attributes {gpu.kernel, rocdl.kernel, rocdl.waves_per_eu = 2 : i32, passthrough = [["amdgpu-num-vgpr", "100"], ["amdgpu-unroll-threshold", "1"]]} {
      llvm.return
    }
    llvm.func @k2() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
    llvm.func @helper() {
      llvm.return
    }
  }
}
)mlir";

constexpr StringRef kNVVMModule = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
    llvm.func @helper() {
      llvm.return
    }
  }
}
)mlir";

class ApplyHintsTest : public ::testing::Test {
protected:
  ApplyHintsTest() {
    context.loadDialect<gpu::GPUDialect, LLVM::LLVMDialect, ROCDL::ROCDLDialect,
                        NVVM::NVVMDialect>();
  }

  /// Parses `text` and returns its first gpu.module in `gpuModule`.
  void parse(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &context);
    ASSERT_TRUE(module) << "test input does not parse";
    auto gpuModules = module->getOps<gpu::GPUModuleOp>();
    ASSERT_FALSE(gpuModules.empty());
    gpuModule = *gpuModules.begin();
  }

  static HintSet hints(StringRef text) {
    llvm::Expected<HintSet> set = HintSet::parse(text);
    if (!set) {
      ADD_FAILURE() << llvm::toString(set.takeError());
      return HintSet();
    }
    return std::move(*set);
  }

  /// Applies `text`, expecting success and a module that still verifies.
  void apply(StringRef text) {
    ASSERT_TRUE(succeeded(applyHints(gpuModule, hints(text)))) << text.str();
    ASSERT_TRUE(succeeded(verify(*module))) << text.str();
  }

  /// Runs `fn`, returning the error diagnostics it emitted.
  template <typename Fn> std::vector<std::string> captureErrors(Fn fn) {
    std::vector<std::string> errors;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        errors.push_back(diag.str());
      return success();
    });
    fn();
    return errors;
  }

  LLVM::LLVMFuncOp func(StringRef name) {
    return gpuModule.lookupSymbol<LLVM::LLVMFuncOp>(name);
  }

  Attribute target() { return gpuModule.getTargetsAttr()[0]; }

  std::string print(Operation *op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os, OpPrintingFlags().enableDebugInfo(false));
    return text;
  }

  /// The value of passthrough entry `key` of `fn`, or nullopt.
  static std::optional<std::string> passthrough(LLVM::LLVMFuncOp fn,
                                                StringRef key) {
    ArrayAttr entries = fn.getPassthroughAttr();
    if (!entries)
      return std::nullopt;
    std::optional<std::string> found;
    int count = 0;
    for (Attribute entry : entries) {
      if (auto s = dyn_cast<StringAttr>(entry); s && s.getValue() == key) {
        found = "";
        ++count;
      }
      if (auto pair = dyn_cast<ArrayAttr>(entry); pair && pair.size() == 2)
        if (cast<StringAttr>(pair[0]).getValue() == key) {
          found = cast<StringAttr>(pair[1]).getValue().str();
          ++count;
        }
    }
    EXPECT_LE(count, 1) << "passthrough key '" << key.str()
                        << "' appears more than once";
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  gpu::GPUModuleOp gpuModule;
};

TEST_F(ApplyHintsTest, TargetFamily) {
  parse(kROCDLModule);
  EXPECT_EQ(getTargetFamily(target()), TargetFamily::ROCDL);
  parse(kNVVMModule);
  EXPECT_EQ(getTargetFamily(target()), TargetFamily::NVVM);
  EXPECT_EQ(getTargetFamily(UnitAttr::get(&context)), TargetFamily::Other);
  EXPECT_EQ(stringifyTargetFamily(TargetFamily::ROCDL), "rocdl");
  EXPECT_EQ(stringifyTargetFamily(TargetFamily::NVVM), "nvvm");
}

TEST_F(ApplyHintsTest, EmptySetChangesNothing) {
  parse(kROCDLModule);
  std::string before = print(*module);
  apply("");
  EXPECT_EQ(print(*module), before);
}

TEST_F(ApplyHintsTest, WavesPerEUSetsKernelsOnly) {
  parse(kROCDLModule);
  apply("waves_per_eu=4");
  for (StringRef name : {"k", "k2"}) {
    auto attr = func(name)->getAttrOfType<IntegerAttr>("rocdl.waves_per_eu");
    ASSERT_TRUE(attr) << name.str();
    EXPECT_EQ(attr.getInt(), 4);
    EXPECT_TRUE(attr.getType().isInteger(32));
  }
  EXPECT_FALSE(func("helper")->hasAttr("rocdl.waves_per_eu"));
}

TEST_F(ApplyHintsTest, WavesPerEUZeroRemovesIt) {
  parse(kROCDLModule);
  ASSERT_TRUE(func("k")->hasAttr("rocdl.waves_per_eu"));
  apply("waves_per_eu=0");
  EXPECT_FALSE(func("k")->hasAttr("rocdl.waves_per_eu"));
  EXPECT_FALSE(func("k2")->hasAttr("rocdl.waves_per_eu"));
}

TEST_F(ApplyHintsTest, MaxnregROCDLIsAmdgpuNumVgpr) {
  parse(kROCDLModule);
  apply("maxnreg=64");
  // The existing entry is replaced, not duplicated; other entries stay.
  EXPECT_EQ(passthrough(func("k"), "amdgpu-num-vgpr"), "64");
  EXPECT_EQ(passthrough(func("k"), "amdgpu-unroll-threshold"), "1");
  EXPECT_EQ(passthrough(func("k2"), "amdgpu-num-vgpr"), "64");
  EXPECT_FALSE(passthrough(func("helper"), "amdgpu-num-vgpr"));
  EXPECT_FALSE(func("k")->hasAttr("nvvm.maxnreg"));
}

TEST_F(ApplyHintsTest, MaxnregNVVM) {
  parse(kNVVMModule);
  apply("maxnreg=128");
  auto attr = func("k")->getAttrOfType<IntegerAttr>("nvvm.maxnreg");
  ASSERT_TRUE(attr);
  EXPECT_EQ(attr.getInt(), 128);
  EXPECT_FALSE(passthrough(func("k"), "amdgpu-num-vgpr"));
  EXPECT_FALSE(func("helper")->hasAttr("nvvm.maxnreg"));
}

TEST_F(ApplyHintsTest, OptLevelRewritesTarget) {
  parse(kROCDLModule);
  apply("O=0");
  auto rocdl = cast<ROCDL::ROCDLTargetAttr>(target());
  EXPECT_EQ(rocdl.getO(), 0);
  // Everything else of the target is kept.
  EXPECT_EQ(rocdl.getChip(), "gfx942");
  ASSERT_TRUE(rocdl.getLink());
  EXPECT_EQ(rocdl.getLink().size(), 1u);
  ASSERT_TRUE(rocdl.getFlags());
  EXPECT_TRUE(rocdl.getFlags().contains("unsafe-math"));

  parse(kNVVMModule);
  apply("target.O=1");
  auto nvvm = cast<NVVM::NVVMTargetAttr>(target());
  EXPECT_EQ(nvvm.getO(), 1);
  EXPECT_EQ(nvvm.getChip(), "sm_90");
}

TEST_F(ApplyHintsTest, FastMathTogglesFlag) {
  parse(kROCDLModule);
  apply("fast_fp_math=1");
  auto rocdl = cast<ROCDL::ROCDLTargetAttr>(target());
  ASSERT_TRUE(rocdl.getFlags());
  EXPECT_TRUE(rocdl.getFlags().contains("fast"));
  EXPECT_TRUE(rocdl.getFlags().contains("unsafe-math"));

  apply("fast_fp_math=0,unsafe_fp_math=0");
  rocdl = cast<ROCDL::ROCDLTargetAttr>(target());
  // No flag left: no empty dictionary either.
  EXPECT_FALSE(rocdl.getFlags() && rocdl.getFlags().contains("fast"));
  EXPECT_FALSE(rocdl.getFlags() && !rocdl.getFlags().empty());

  parse(kNVVMModule);
  apply("fast_fp_math=1,unsafe_fp_math=1");
  auto nvvm = cast<NVVM::NVVMTargetAttr>(target());
  ASSERT_TRUE(nvvm.getFlags());
  EXPECT_TRUE(nvvm.getFlags().contains("fast"));
  EXPECT_TRUE(nvvm.getFlags().contains("ftz"));
  EXPECT_FALSE(nvvm.getFlags().contains("unsafe-math"));
}

TEST_F(ApplyHintsTest, TargetFieldsRewriteTarget) {
  parse(kROCDLModule);
  apply("target.chip=gfx90a,target.features=+xnack,target.abi=500");
  auto rocdl = cast<ROCDL::ROCDLTargetAttr>(target());
  EXPECT_EQ(rocdl.getChip(), "gfx90a");
  EXPECT_EQ(rocdl.getFeatures(), "+xnack");
  EXPECT_EQ(rocdl.getAbi(), "500");
  EXPECT_EQ(rocdl.getO(), 2);
  EXPECT_EQ(rocdl.getTriple(), "amdgcn-amd-amdhsa");

  parse(kNVVMModule);
  apply("target.chip=sm_80,target.triple=nvptx64-nvidia-cuda");
  auto nvvm = cast<NVVM::NVVMTargetAttr>(target());
  EXPECT_EQ(nvvm.getChip(), "sm_80");
  EXPECT_EQ(nvvm.getO(), 3);
}

TEST_F(ApplyHintsTest, FuncAndPassthroughHints) {
  parse(kROCDLModule);
  HintSet set = hints("func.rocdl.reqd_work_group_size=array<i32: 64, 1, 1>,"
                      "passthrough.amdgpu-ieee=false");
  ASSERT_FALSE(static_cast<bool>(
      set.add("func.rocdl.flat_work_group_size", "\"64,64\"")));
  ASSERT_TRUE(succeeded(applyHints(gpuModule, set)));
  ASSERT_TRUE(succeeded(verify(*module)));
  auto sizes =
      func("k")->getAttrOfType<DenseI32ArrayAttr>("rocdl.reqd_work_group_size");
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes.asArrayRef(), ArrayRef<int32_t>({64, 1, 1}));
  auto flat =
      func("k2")->getAttrOfType<StringAttr>("rocdl.flat_work_group_size");
  ASSERT_TRUE(flat);
  EXPECT_EQ(flat.getValue(), "64,64");
  EXPECT_EQ(passthrough(func("k"), "amdgpu-ieee"), "false");
  EXPECT_FALSE(func("helper")->hasAttr("rocdl.reqd_work_group_size"));
}

TEST_F(ApplyHintsTest, OptsIsNotIR) {
  parse(kROCDLModule);
  std::string before = print(*module);
  HintSet set = hints("opts=\"-O1 -v\"");
  EXPECT_EQ(getBinaryOptsHint(set, gpuModule), "-O1 -v");
  EXPECT_EQ(getBinaryOptsHint(HintSet(), gpuModule), "");
  ASSERT_TRUE(succeeded(applyHints(gpuModule, set)));
  EXPECT_EQ(print(*module), before);
}

TEST_F(ApplyHintsTest, OptsBecomePtxasOptionsOnNVVM) {
  parse(kNVVMModule);
  HintSet set = hints("opts=\"-O1 --extensible-whole-program\"");
  // Upstream appends flags["ptxas-cmd-options"] to ptxas right after `opts`:
  // the hint is IR, so it needs no binary pass instance of its own.
  EXPECT_EQ(getBinaryOptsHint(set, gpuModule), "");
  apply("opts=\"-O1 --extensible-whole-program\"");
  auto nvvm = cast<NVVM::NVVMTargetAttr>(target());
  ASSERT_TRUE(nvvm.hasCmdOptions());
  auto options = cast<ArrayAttr>(nvvm.getCmdOptions()->getValue());
  ASSERT_EQ(options.size(), 2u);
  EXPECT_EQ(cast<StringAttr>(options[0]).getValue(), "-O1");
  EXPECT_EQ(cast<StringAttr>(options[1]).getValue(),
            "--extensible-whole-program");
  EXPECT_EQ(nvvm.getO(), 3);

  // `-32` goes to fatbinary, which upstream only reads from `opts`.
  parse(kNVVMModule);
  EXPECT_EQ(getBinaryOptsHint(hints("opts=-32"), gpuModule), "-32");
  apply("opts=-32");
  EXPECT_FALSE(cast<NVVM::NVVMTargetAttr>(target()).getFlags());
}

TEST_F(ApplyHintsTest, VerifyAcceptsApplicableHints) {
  parse(kROCDLModule);
  std::vector<std::string> errors = captureErrors([&] {
    EXPECT_TRUE(succeeded(verifyHintsApply(
        gpuModule, hints("waves_per_eu=4,maxnreg=512,O=1,target.abi=500"))));
  });
  EXPECT_TRUE(errors.empty());
  parse(kNVVMModule);
  errors = captureErrors([&] {
    EXPECT_TRUE(
        succeeded(verifyHintsApply(gpuModule, hints("maxnreg=255,O=1"))));
  });
  EXPECT_TRUE(errors.empty());
}

TEST_F(ApplyHintsTest, VerifyRejectsWavesPerEUOnNVVM) {
  parse(kNVVMModule);
  std::string before = print(*module);
  std::vector<std::string> errors = captureErrors([&] {
    EXPECT_TRUE(failed(verifyHintsApply(gpuModule, hints("waves_per_eu=2"))));
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("hint 'waves_per_eu'"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("does not apply to a nvvm target"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("accepted for: rocdl"), std::string::npos)
      << errors[0];

  // applyHints verifies first and changes nothing when that fails.
  errors = captureErrors([&] {
    EXPECT_TRUE(
        failed(applyHints(gpuModule, hints("maxnreg=64,waves_per_eu=2"))));
  });
  EXPECT_EQ(errors.size(), 1u);
  EXPECT_EQ(print(*module), before);
}

TEST_F(ApplyHintsTest, VerifyRejectsOtherMisfits) {
  struct Case {
    StringRef module, hints, expected;
  } cases[] = {
      {kNVVMModule, "maxnreg=300", "= 300 exceeds the NVVM limit of 255"},
      {kNVVMModule, "target.abi=500",
       "does not apply to a nvvm target; it is accepted for: rocdl"},
      {kROCDLModule, "func.fly.x=[1, ",
       "has a value that is not an MLIR attribute: '[1,' (expected attribute "
       "value)"},
  };
  for (const Case &c : cases) {
    parse(c.module);
    std::vector<std::string> errors = captureErrors([&] {
      EXPECT_TRUE(failed(verifyHintsApply(gpuModule, hints(c.hints))));
    });
    // Exactly one error: the attribute parser's complaint is part of it.
    ASSERT_EQ(errors.size(), 1u) << c.hints.str();
    EXPECT_NE(errors[0].find(c.expected.str()), std::string::npos)
        << c.hints.str() << " -> " << errors[0];
  }
}

TEST_F(ApplyHintsTest, FamilyRulesComeFromTheRegistry) {
  for (const HintSpec &spec : getHintSpecs()) {
    if (spec.isFamily())
      continue;
    for (auto [family, text, chip] :
         {std::tuple{TargetFamily::ROCDL, kROCDLModule, "gfx942"},
          std::tuple{TargetFamily::NVVM, kNVVMModule, "sm_90"}}) {
      parse(text);
      // A value every family takes: the least integer, a known chip.
      std::string value = spec.type == HintType::Int ? std::to_string(spec.min)
                          : spec.type == HintType::Bool ? "1"
                                                        : chip;
      std::string key = spec.name;
      HintFamilyUse use = spec.getUse(family);
      SCOPED_TRACE(key + " on " + stringifyTargetFamily(family).str());
      std::vector<std::string> errors = captureErrors([&] {
        EXPECT_EQ(
            succeeded(verifyHintsApply(gpuModule, hints(key + "=" + value))),
            use.applies);
      });
      if (use.applies) {
        EXPECT_TRUE(errors.empty());
      } else {
        ASSERT_EQ(errors.size(), 1u);
        EXPECT_NE(errors[0].find(
                      "does not apply to a " +
                      stringifyTargetFamily(family).str() +
                      " target; it is accepted for: " + spec.listFamilies()),
                  std::string::npos)
            << errors[0];
      }
      // A family's own limit: its bound passes, one more fails.
      if (use.applies && use.max) {
        EXPECT_TRUE(succeeded(verifyHintsApply(
            gpuModule, hints(key + "=" + std::to_string(use.max)))));
        errors = captureErrors([&] {
          EXPECT_TRUE(failed(verifyHintsApply(
              gpuModule, hints(key + "=" + std::to_string(use.max + 1)))));
        });
        ASSERT_EQ(errors.size(), 1u);
        EXPECT_NE(errors[0].find("exceeds the " +
                                 stringifyTargetFamily(family).upper() +
                                 " limit of " + std::to_string(use.max)),
                  std::string::npos)
            << errors[0];
      }
    }
  }
}

constexpr StringRef kDualModule = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @dual [#rocdl.target<chip = "gfx90a">, #rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}
)mlir";

TEST_F(ApplyHintsTest, SelectorRewritesOneTarget) {
  parse(kDualModule);
  apply("target[gfx90a].O=1,O[gfx942]=0,fast_fp_math[rocdl]=1");
  ArrayAttr targets = gpuModule.getTargetsAttr();
  auto print = [](Attribute attr) {
    std::string text;
    llvm::raw_string_ostream(text) << attr;
    return text;
  };
  EXPECT_EQ(print(targets[0]),
            "#rocdl.target<O = 1, chip = \"gfx90a\", flags = {fast}>");
  EXPECT_EQ(print(targets[1]),
            "#rocdl.target<O = 0, chip = \"gfx942\", flags = {fast}>");
}

TEST_F(ApplyHintsTest, TargetsThatWouldBecomeOneAreAnError) {
  parse(kDualModule);
  std::vector<std::string> errors = captureErrors([&] {
    EXPECT_TRUE(
        failed(verifyHintsApply(gpuModule, hints("target.chip=gfx942"))));
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("makes targets #0"), std::string::npos) << errors[0];
  // Limited to one target it is fine.
  EXPECT_TRUE(succeeded(
      verifyHintsApply(gpuModule, hints("target[gfx90a].chip=gfx908"))));
}

TEST_F(ApplyHintsTest, UnknownChipsAndSelectorsAreErrors) {
  parse(kDualModule);
  for (StringRef text : {"target[gfx90a].chip=gfx9422", "target[sm_90].O=1"}) {
    std::vector<std::string> errors = captureErrors(
        [&] { EXPECT_TRUE(failed(verifyHintsApply(gpuModule, hints(text)))); });
    EXPECT_EQ(errors.size(), 1u) << text.str();
  }
}

} // namespace
