//===- RocdlSharedOptTest.cpp - Which ROCDL variants share optimizeModule -===//
//
// Counts, per kind of hint, whether fly-module-to-binary reused one
// optimisation (RocdlSharedOpt.h), optimised on its own, or fell back, and
// checks that the ISA is the plain serialization's either way.
//
//===----------------------------------------------------------------------===//

#include "fly/Backend/RocdlSharedOpt.h"
#include "ModuleIsa.h"
#include "Support/FatalErrors.h"
#include "fly/Backend/ModuleToBinary.h"
#include "fly/Compiler/Registration.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/HintSet.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;
using namespace fly;
using llvm::StringRef;

namespace {

/// A kernel without alloca or callee; `@SCALE@` keeps each test's module
/// (and so its key) apart from the others'.
constexpr StringRef kPlainKernel = R"mlir(
gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
  llvm.func @k(%arg0: !llvm.ptr<1>, %n: i32) attributes {gpu.kernel, rocdl.kernel} {
    %s = llvm.mlir.constant(@SCALE@ : f32) : f32
    %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
    %1 = llvm.fmul %0, %s : f32
    llvm.store %1, %arg0 : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

/// A private array indexed at run time: an alloca after linking.
constexpr StringRef kAllocaKernel = R"mlir(
gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
  llvm.func @k(%arg0: !llvm.ptr<1>, %i: i32) attributes {gpu.kernel, rocdl.kernel} {
    %c = llvm.mlir.constant(16 : i32) : i32
    %a = llvm.alloca %c x f32 : (i32) -> !llvm.ptr<5>
    %g = llvm.getelementptr %a[%i] : (!llvm.ptr<5>, i32) -> !llvm.ptr<5>, f32
    %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
    llvm.store %0, %g : f32, !llvm.ptr<5>
    %1 = llvm.load %a : !llvm.ptr<5> -> f32
    llvm.store %1, %arg0 : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

/// A callee that optimisation keeps: AMDGPUAttributor would hand it the
/// kernel's register hints.
constexpr StringRef kCalleeKernel = R"mlir(
gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
  llvm.func @helper(%p: !llvm.ptr<1>) attributes {passthrough = ["noinline"]} {
    %0 = llvm.load %p : !llvm.ptr<1> -> f32
    %1 = llvm.fadd %0, %0 : f32
    llvm.store %1, %p : f32, !llvm.ptr<1>
    llvm.return
  }
  llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
    llvm.call @helper(%arg0) : (!llvm.ptr<1>) -> ()
    llvm.return
  }
}
)mlir";

class RocdlSharedOptTest : public ::testing::Test {
protected:
  RocdlSharedOptTest() {
    registerCompilerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  ~RocdlSharedOptTest() override { unsetenv("FLY_ROCDL_SHARE_OPT"); }

  /// compileHintSetsToIsa in this fixture's context.
  std::vector<std::string> compile(std::string gpuModule, StringRef sets) {
    return compileHintSetsToIsa(context, gpuModule, sets);
  }

  /// compile() with sharing on, the stats it moved, and the ISA checked
  /// against compile() with sharing off.
  RocdlSharedOptStats compileBothWays(std::string gpuModule, StringRef sets) {
    RocdlSharedOptStats before = getRocdlSharedOptStats();
    std::vector<std::string> shared = compile(gpuModule, sets);
    RocdlSharedOptStats after = getRocdlSharedOptStats();
    setenv("FLY_ROCDL_SHARE_OPT", "0", 1);
    std::vector<std::string> plain = compile(gpuModule, sets);
    unsetenv("FLY_ROCDL_SHARE_OPT");
    EXPECT_EQ(getRocdlSharedOptStats().produced, after.produced);
    EXPECT_EQ(getRocdlSharedOptStats().reused, after.reused);
    EXPECT_EQ(getRocdlSharedOptStats().fallbacks, after.fallbacks);
    EXPECT_EQ(shared.size(), plain.size());
    for (size_t i = 0; i < std::min(shared.size(), plain.size()); ++i)
      EXPECT_TRUE(shared[i] == plain[i]) << "ISA of hint set #" << i;
    return {after.produced - before.produced, after.reused - before.reused,
            after.fallbacks - before.fallbacks};
  }

  static std::string withScale(StringRef scale) {
    std::string text = kPlainKernel.str();
    text.replace(text.find("@SCALE@"), 7, scale.str());
    return text;
  }

  DialectRegistry registry;
  MLIRContext context{MLIRContext::Threading::DISABLED};
};

TEST_F(RocdlSharedOptTest, RegisterHintsShareOneOptimisation) {
  RocdlSharedOptStats stats = compileBothWays(
      withScale("2.0"), "waves_per_eu=0;waves_per_eu=2;waves_per_eu=4;"
                        "maxnreg=64;waves_per_eu=4,maxnreg=96;"
                        "passthrough.amdgpu-num-sgpr=64;"
                        "func.rocdl.waves_per_eu=3 : i32");
  EXPECT_EQ(stats.produced, 1u);
  EXPECT_EQ(stats.reused, 6u);
  EXPECT_EQ(stats.fallbacks, 0u);
}

TEST_F(RocdlSharedOptTest, TargetAndOtherAttributeHintsOptimiseOnTheirOwn) {
  // Each changes what optimisation reads (level, chip, features, another
  // function attribute): a key of its own, so no variant reuses another's.
  // (The target's default level is 2: O=3 changes it.)
  RocdlSharedOptStats stats = compileBothWays(
      withScale("3.0"), "O=3;target.chip=gfx90a;target.features=+sramecc;"
                        "passthrough.amdgpu-unroll-threshold=10;"
                        "passthrough.amdgpu-ieee=false");
  EXPECT_EQ(stats.produced, 5u);
  EXPECT_EQ(stats.reused, 0u);
  EXPECT_EQ(stats.fallbacks, 0u);
}

TEST_F(RocdlSharedOptTest, AllocaFallsBack) {
  RocdlSharedOptStats stats = compileBothWays(
      kAllocaKernel.str(), "waves_per_eu=1;waves_per_eu=8;maxnreg=32");
  EXPECT_EQ(stats.produced, 0u);
  EXPECT_EQ(stats.reused, 0u);
  EXPECT_EQ(stats.fallbacks, 3u);
}

TEST_F(RocdlSharedOptTest, CalleeLeftByOptimisationFallsBack) {
  // The first variant finds out (optimised twice), the others skip the try.
  RocdlSharedOptStats stats = compileBothWays(
      kCalleeKernel.str(), "waves_per_eu=1;waves_per_eu=8;maxnreg=32");
  EXPECT_EQ(stats.produced, 0u);
  EXPECT_EQ(stats.reused, 0u);
  EXPECT_EQ(stats.fallbacks, 3u);
}

TEST_F(RocdlSharedOptTest, ConcurrentVariantsWaitForOneOptimisation) {
  // Eight variants, each its own builtin.module as in a replay batch, on
  // four threads: the first optimises, the others wait and reuse it.
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(4));
  MLIRContext threaded(registry, MLIRContext::Threading::DISABLED);
  threaded.setThreadPool(pool);
  threaded.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> base =
      parseSourceString<ModuleOp>(withScale("9.0"), &threaded);
  ASSERT_TRUE(bool(base));
  auto gpuModule = *base->getOps<gpu::GPUModuleOp>().begin();
  llvm::Expected<std::vector<HintSet>> sets =
      parseHintSets("waves_per_eu=1;waves_per_eu=2;waves_per_eu=3;"
                    "waves_per_eu=4;waves_per_eu=5;waves_per_eu=6;"
                    "maxnreg=64;maxnreg=96");
  ASSERT_TRUE(bool(sets));
  OpBuilder b(&threaded);
  OwningOpRef<ModuleOp> container =
      ModuleOp::create(UnknownLoc::get(&threaded));
  for (const HintSet &hints : *sets) {
    b.setInsertionPointToEnd(container->getBody());
    auto variant = ModuleOp::create(b, UnknownLoc::get(&threaded));
    b.setInsertionPointToEnd(variant.getBody());
    auto clone = cast<gpu::GPUModuleOp>(b.clone(*gpuModule));
    ASSERT_TRUE(succeeded(applyHints(clone, hints)));
  }
  PassManager pm(&threaded);
  FlyModuleToBinaryOptions options;
  options.compilationTarget = "isa";
  pm.nest<ModuleOp>().addPass(createFlyModuleToBinary(options, nullptr));
  RocdlSharedOptStats before = getRocdlSharedOptStats();
  ASSERT_TRUE(succeeded(pm.run(*container)));
  RocdlSharedOptStats after = getRocdlSharedOptStats();
  EXPECT_EQ(after.produced - before.produced, 1u);
  EXPECT_EQ(after.reused - before.reused, sets->size() - 1);
  EXPECT_EQ(after.fallbacks - before.fallbacks, 0u);
}

/// A linked AMDGPU module with a register hint; `scale` sets its key apart.
static std::unique_ptr<llvm::Module> hintedModule(llvm::LLVMContext &context,
                                                  StringRef scale) {
  std::string text = (R"(
define amdgpu_kernel void @k(ptr addrspace(1) %p) #0 {
  %v = load float, ptr addrspace(1) %p
  %m = fmul float %v, )" +
                      scale + R"(
  store float %m, ptr addrspace(1) %p
  ret void
}
attributes #0 = { "amdgpu-waves-per-eu"="2" }
)")
                         .str();
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(text, error, context);
  EXPECT_TRUE(module) << error.getMessage().str();
  return module;
}

TEST_F(RocdlSharedOptTest, FatalErrorInTheSharedOptimisationReleasesIt) {
  // The variants of a module wait while one optimises it: a fatal error in
  // that optimisation must not leave them waiting (lookup's backstop is 30 s).
  llvm::LLVMContext llvmContext;
  auto failing = [](llvm::Module &) -> LogicalResult {
    llvm::report_fatal_error("optimisation failed on purpose");
  };
  auto optimise = [](llvm::Module &) -> LogicalResult { return success(); };
  // Then the next variant optimises it itself, as the one to share it.
  // `unwinding` runs its function and returns the fatal error's reason.
  auto sharesAfter =
      [&](llvm::function_ref<std::string(llvm::function_ref<void()>)> unwinding,
          StringRef scale) {
        std::unique_ptr<llvm::Module> first = hintedModule(llvmContext, scale);
        std::string reason = unwinding(
            [&] { (void)optimizeSharingRocdl(first, "test-target", failing); });
        EXPECT_NE(reason.find("on purpose"), std::string::npos);
        RocdlSharedOptStats before = getRocdlSharedOptStats();
        std::unique_ptr<llvm::Module> second = hintedModule(llvmContext, scale);
        EXPECT_TRUE(
            succeeded(optimizeSharingRocdl(second, "test-target", optimise)));
        RocdlSharedOptStats after = getRocdlSharedOptStats();
        EXPECT_EQ(after.produced - before.produced, 1u);
        EXPECT_EQ(after.fallbacks - before.fallbacks, 0u);
      };
  // The batch executor's way: the binary pass unwinds the fatal error.
  sharesAfter(
      [](llvm::function_ref<void()> fn) {
        return runUnwindingFatalErrors(fn).value_or("");
      },
      "3.0");
  // The isolated executor's: a crash recovery context per variant.
  llvm::CrashRecoveryContext::Enable();
  FatalErrorsUnwindCrashRecovery fatalErrors;
  sharesAfter(
      [](llvm::function_ref<void()> fn) {
        llvm::CrashRecoveryContext crc;
        EXPECT_FALSE(crc.RunSafely(fn));
        return takeLastFatalError();
      },
      "5.0");
}

TEST_F(RocdlSharedOptTest, OffSwitchCountsNothing) {
  setenv("FLY_ROCDL_SHARE_OPT", "0", 1);
  RocdlSharedOptStats before = getRocdlSharedOptStats();
  compile(withScale("5.0"), "waves_per_eu=2;waves_per_eu=4");
  RocdlSharedOptStats after = getRocdlSharedOptStats();
  EXPECT_EQ(after.produced, before.produced);
  EXPECT_EQ(after.reused, before.reused);
  EXPECT_EQ(after.fallbacks, before.fallbacks);
}

} // namespace
