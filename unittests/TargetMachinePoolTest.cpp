//===- TargetMachinePoolTest.cpp - TargetMachines kept between variants ---===//
//
// Lends, keeps and discards machines (TargetMachinePool.h), checks that a
// kept machine comes back with the state a compilation changes restored, and
// that fly-module-to-binary's ISA on kept machines is that on new ones.
//
//===----------------------------------------------------------------------===//

#include "fly/Backend/TargetMachinePool.h"
#include "ModuleIsa.h"
#include "fly/Backend/ModuleToBinary.h"
#include "fly/Compiler/Registration.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace mlir;
using namespace fly;
using llvm::StringRef;

namespace {

/// Each test lends for a chip of its own: machines kept by one test are not
/// another's.
constexpr StringRef kTriple = "amdgcn-amd-amdhsa";

class TargetMachinePoolTest : public ::testing::Test {
protected:
  TargetMachinePoolTest() { ROCDL::SerializeGPUModuleBase::init(); }
  ~TargetMachinePoolTest() override { unsetenv("FLY_ROCDL_REUSE_TM"); }
};

TEST_F(TargetMachinePoolTest, KeptMachineServesTheNextLend) {
  llvm::TargetMachine *first = nullptr;
  TargetMachinePoolStats before = getTargetMachinePoolStats();
  {
    LentTargetMachine lent = lendTargetMachine(kTriple, "gfx900", "");
    ASSERT_TRUE(bool(lent));
    EXPECT_TRUE(lent.isNew());
    first = lent.get();
    lent.keep();
  }
  LentTargetMachine again = lendTargetMachine(kTriple, "gfx900", "");
  EXPECT_EQ(again.get(), first);
  EXPECT_FALSE(again.isNew());
  // Another chip or features: another machine.
  LentTargetMachine otherChip = lendTargetMachine(kTriple, "gfx906", "");
  EXPECT_NE(otherChip.get(), first);
  EXPECT_TRUE(otherChip.isNew());
  TargetMachinePoolStats after = getTargetMachinePoolStats();
  EXPECT_EQ(after.created - before.created, 2u);
  EXPECT_EQ(after.reused - before.reused, 1u);
  EXPECT_EQ(after.discarded - before.discarded, 0u);
}

TEST_F(TargetMachinePoolTest, MachineNotKeptIsDiscarded) {
  TargetMachinePoolStats before = getTargetMachinePoolStats();
  // A serialization that failed (or a fatal error left) does not keep().
  {
    LentTargetMachine lent = lendTargetMachine(kTriple, "gfx908", "");
  }
  LentTargetMachine next = lendTargetMachine(kTriple, "gfx908", "");
  EXPECT_TRUE(next.isNew());
  TargetMachinePoolStats after = getTargetMachinePoolStats();
  EXPECT_EQ(after.created - before.created, 2u);
  EXPECT_EQ(after.reused - before.reused, 0u);
  EXPECT_EQ(after.discarded - before.discarded, 1u);
}

TEST_F(TargetMachinePoolTest, ConcurrentLendsGetDistinctMachines) {
  LentTargetMachine one = lendTargetMachine(kTriple, "gfx90a", "");
  one.keep();
  LentTargetMachine two = lendTargetMachine(kTriple, "gfx90a", "");
  two.keep();
  EXPECT_NE(one.get(), two.get());
  // onlyNew: never a kept one.
  LentTargetMachine fresh =
      lendTargetMachine(kTriple, "gfx90a", "", /*onlyNew=*/true);
  EXPECT_TRUE(fresh.isNew());
}

TEST_F(TargetMachinePoolTest, NoMachineIsLentTwiceAtOnce) {
  // Eight threads lend, hold and give back machines of one target: a
  // machine is never held by two at once, and every give-back is reused.
  std::mutex mutex;
  std::set<llvm::TargetMachine *> held;
  bool lentTwice = false;
  TargetMachinePoolStats before = getTargetMachinePoolStats();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        LentTargetMachine lent = lendTargetMachine(kTriple, "gfx1010", "");
        {
          std::lock_guard<std::mutex> lock(mutex);
          lentTwice |= !held.insert(lent.get()).second;
        }
        std::this_thread::yield();
        {
          std::lock_guard<std::mutex> lock(mutex);
          held.erase(lent.get());
        }
        lent.keep();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_FALSE(lentTwice);
  TargetMachinePoolStats after = getTargetMachinePoolStats();
  EXPECT_EQ((after.created - before.created) + (after.reused - before.reused),
            400u);
  EXPECT_LE(after.created - before.created, 8u);
  EXPECT_EQ(after.discarded - before.discarded, 0u);
}

TEST_F(TargetMachinePoolTest, KeptMachineComesBackAsNew) {
  llvm::TargetOptions pristine;
  llvm::CodeGenOptLevel level;
  {
    LentTargetMachine lent = lendTargetMachine(kTriple, "gfx1100", "");
    ASSERT_TRUE(bool(lent));
    llvm::TargetMachine &machine = *lent.get();
    pristine = machine.Options;
    level = machine.getOptLevel();
    // What code generation leaves: resetTargetOptions' FP flags, the
    // instruction selector's choice, the level, the O0 wish.
    machine.Options.NoNaNsFPMath = true;
    machine.Options.NoInfsFPMath = true;
    machine.setFastISel(true);
    machine.setGlobalISel(true);
    machine.setOptLevel(llvm::CodeGenOptLevel::None);
    machine.setO0WantsFastISel(!machine.getO0WantsFastISel());
    lent.keep();
  }
  LentTargetMachine again = lendTargetMachine(kTriple, "gfx1100", "");
  ASSERT_FALSE(again.isNew());
  llvm::TargetMachine &machine = *again.get();
  EXPECT_EQ(machine.Options.NoNaNsFPMath, pristine.NoNaNsFPMath);
  EXPECT_EQ(machine.Options.NoInfsFPMath, pristine.NoInfsFPMath);
  EXPECT_EQ(machine.Options.EnableFastISel, pristine.EnableFastISel);
  EXPECT_EQ(machine.Options.EnableGlobalISel, pristine.EnableGlobalISel);
  EXPECT_EQ(machine.getOptLevel(), level);
}

TEST_F(TargetMachinePoolTest, UnknownTargetLendsNothing) {
  TargetMachinePoolStats before = getTargetMachinePoolStats();
  LentTargetMachine lent = lendTargetMachine("nosuch-unknown-target", "x", "");
  EXPECT_FALSE(bool(lent));
  TargetMachinePoolStats after = getTargetMachinePoolStats();
  EXPECT_EQ(after.created, before.created);
  EXPECT_EQ(after.reused, before.reused);
}

TEST_F(TargetMachinePoolTest, FastMathFunctionNeedsANewMachine) {
  llvm::LLVMContext context;
  llvm::Module module("m", context);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
  llvm::Function *f = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, "f", module);
  EXPECT_TRUE(canKeptTargetMachineServe(module));
  for (StringRef name : {"unsafe-fp-math", "no-infs-fp-math", "no-nans-fp-math",
                         "no-signed-zeros-fp-math", "approx-func-fp-math"}) {
    f->addFnAttr(name, "false");
    EXPECT_TRUE(canKeptTargetMachineServe(module)) << name.str();
    f->addFnAttr(name, "true");
    EXPECT_FALSE(canKeptTargetMachineServe(module)) << name.str();
    f->removeFnAttr(name);
  }
}

/// Two kernels, one with fast math: the second must not get a kept machine.
constexpr StringRef kKernels = R"mlir(
gpu.module @plain [#rocdl.target<chip = "gfx1030">] {
  llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
    %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
    %1 = llvm.fmul %0, %0 : f32
    llvm.store %1, %arg0 : f32, !llvm.ptr<1>
    llvm.return
  }
}
gpu.module @fast [#rocdl.target<chip = "gfx1030">] {
  llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel, passthrough = [["no-nans-fp-math", "true"]]} {
    %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
    %1 = llvm.fmul %0, %0 : f32
    llvm.store %1, %arg0 : f32, !llvm.ptr<1>
    llvm.return
  }
}
gpu.module @again [#rocdl.target<chip = "gfx1030">] {
  llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel, rocdl.waves_per_eu = 2 : i32} {
    %0 = llvm.load %arg0 : !llvm.ptr<1> -> f32
    %1 = llvm.fmul %0, %0 : f32
    llvm.store %1, %arg0 : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

std::vector<std::string> compileIsa(MLIRContext &context) {
  OwningOpRef<ModuleOp> source =
      parseSourceString<ModuleOp>(kKernels, &context);
  EXPECT_TRUE(bool(source));
  return source ? compileToIsa(*source) : std::vector<std::string>();
}

TEST_F(TargetMachinePoolTest, PassOnKeptMachinesMakesTheSameIsa) {
  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  setenv("FLY_ROCDL_REUSE_TM", "0", 1);
  TargetMachinePoolStats before = getTargetMachinePoolStats();
  std::vector<std::string> plain = compileIsa(context);
  TargetMachinePoolStats off = getTargetMachinePoolStats();
  EXPECT_EQ(off.created, before.created);
  EXPECT_EQ(off.reused, before.reused);
  unsetenv("FLY_ROCDL_REUSE_TM");
  std::vector<std::string> kept = compileIsa(context);
  std::vector<std::string> keptAgain = compileIsa(context);
  TargetMachinePoolStats after = getTargetMachinePoolStats();
  ASSERT_EQ(plain.size(), 3u);
  EXPECT_EQ(kept, plain);
  EXPECT_EQ(keptAgain, plain);
  // First run: @plain on a new machine, kept; @fast is lent @plain's, gives
  // it back on seeing its module and compiles on a new one, not kept;
  // @again on @plain's. Second run: the same with @plain's from the start.
  EXPECT_EQ(after.created - off.created, 3u);
  EXPECT_EQ(after.reused - off.reused, 5u);
  EXPECT_EQ(after.discarded - off.discarded, 2u);
}

} // namespace
