//===- RocdlSharedCodegen.cpp - One codegen prefix for ROCDL variants -----===//

#include "fly/Backend/RocdlSharedCodegen.h"
#include "Support/Environment.h"
#include "fly/Backend/CodegenCut.h"
#include "fly/Backend/TargetMachinePool.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <list>
#include <mutex>
#include <thread>

using llvm::StringRef;

namespace fly {

namespace {
/// The first code generation pass the register hints reach (bench/ROCDL-
/// SHARE.md, section 3).
constexpr StringRef kCutPass = "amdgpu-prepare-agpr-alloc";

/// The attributes RocdlSharedOpt moves between variants.
constexpr StringRef kRegisterHints[] = {"amdgpu-waves-per-eu",
                                        "amdgpu-num-vgpr", "amdgpu-num-sgpr"};

/// Whether LLVM said anything worse than a remark: the variant is then
/// compiled whole, where the same words reach its own context.
class DiagnosticsSeen final : public llvm::DiagnosticHandler {
public:
  explicit DiagnosticsSeen(bool &seen) : seen(seen) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    if (info.getSeverity() == llvm::DS_Error ||
        info.getSeverity() == llvm::DS_Warning) {
      seen = true;
      return true;
    }
    return false;
  }

private:
  bool &seen;
};

/// One shared module's code generation up to the cut, on a machine of its
/// own (the kept machine functions point into both).
struct CutState {
  std::shared_ptr<const RocdlOptimizedModule> optimized;
  std::optional<LentTargetMachine> machine;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<CodegenCut> cut;
  bool diagnosed = false;
};

/// Whether code generation of `module` before the cut reads nothing the
/// register hints change, on a target without a private-buffer register
/// chosen before it (bench/MIR-CUT-AUDIT.md).
bool isCuttable(const llvm::Module &module, const llvm::TargetMachine &tm) {
  if (!tm.getMCSubtargetInfo()->checkFeatures("+architected-flat-scratch"))
    return false;
  if (!canKeptTargetMachineServe(module))
    return false;
  for (const llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    for (const llvm::Argument &arg : f.args())
      if (arg.hasInRegAttr())
        return false;
    for (const llvm::Instruction &inst : llvm::instructions(f)) {
      if (llvm::isa<llvm::AllocaInst>(inst))
        return false;
      if (const auto *call = llvm::dyn_cast<llvm::CallBase>(&inst))
        if (call->isInlineAsm() || !llvm::isa<llvm::IntrinsicInst>(call))
          return false;
    }
  }
  return true;
}

/// Idle states, the most recently used first, and the shared modules that
/// cannot be cut (not tried again). Bounded: a state holds a module, its
/// machine functions and a machine.
class StatePool {
public:
  std::unique_ptr<CutState> take(const RocdlOptimizedModule *optimized,
                                 bool &refused) {
    std::lock_guard<std::mutex> lock(mutex);
    refused = llvm::any_of(refusedModules, [&](const auto &m) {
      return m.get() == optimized;
    });
    auto it = llvm::find_if(idle, [&](const std::unique_ptr<CutState> &s) {
      return s->optimized.get() == optimized;
    });
    if (it == idle.end())
      return nullptr;
    std::unique_ptr<CutState> state = std::move(*it);
    idle.erase(it);
    return state;
  }
  void give(std::unique_ptr<CutState> state) {
    std::lock_guard<std::mutex> lock(mutex);
    idle.push_front(std::move(state));
    if (idle.size() > maxIdle())
      idle.pop_back();
  }
  void refuse(std::shared_ptr<const RocdlOptimizedModule> optimized) {
    std::lock_guard<std::mutex> lock(mutex);
    refusedModules.push_back(std::move(optimized));
    if (refusedModules.size() > kMaxRefused)
      refusedModules.pop_front();
  }

private:
  static size_t maxIdle() {
    return std::max(2u, std::thread::hardware_concurrency());
  }
  static constexpr size_t kMaxRefused = 16;
  std::mutex mutex;
  std::list<std::unique_ptr<CutState>> idle;
  std::deque<std::shared_ptr<const RocdlOptimizedModule>> refusedModules;
};

/// Never destroyed, as the machine pool: states outlive any static
/// destructor that could still run LLVM code at exit.
StatePool &pool() {
  static StatePool *instance = new StatePool();
  return *instance;
}

std::atomic<uint64_t> cuts{0}, continued{0}, refused{0};

/// A state for `sharing`'s module, cut; null (the module refused for
/// good where that is why) where it cannot be.
std::unique_ptr<CutState> makeState(const RocdlSharing &sharing,
                                    StringRef triple, StringRef chip,
                                    StringRef features, int optLevel) {
  auto state = std::make_unique<CutState>();
  state->optimized = sharing.optimized;
  state->machine.emplace(lendTargetMachine(triple, chip, features));
  llvm::TargetMachine *tm = state->machine->get();
  if (!tm)
    return nullptr;
  tm->setOptLevel(static_cast<llvm::CodeGenOptLevel>(optLevel));
  const llvm::SmallVector<char, 0> &bitcode = sharing.optimized->bitcode;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(StringRef(bitcode.data(),
                                                             bitcode.size()),
                                                   "shared"),
                             state->context);
  if (!module) {
    llvm::consumeError(module.takeError());
    return nullptr;
  }
  state->module = std::move(*module);
  if (!isCuttable(*state->module, *tm)) {
    pool().refuse(sharing.optimized);
    return nullptr;
  }
  state->context.setDiagnosticHandler(
      std::make_unique<DiagnosticsSeen>(state->diagnosed));
  std::string error;
  state->cut = CodegenCut::make(*tm, *state->module, kCutPass, error);
  if (!state->cut || state->diagnosed || state->cut->size() == 0) {
    pool().refuse(sharing.optimized);
    return nullptr;
  }
  ++cuts;
  return state;
}
} // namespace

RocdlSharedCodegenStats getRocdlSharedCodegenStats() {
  return {cuts.load(), continued.load(), refused.load()};
}

RocdlSharedCodegenMode getRocdlSharedCodegenMode() {
  const char *value = std::getenv("FLY_ROCDL_CODEGEN_CUT");
  if (value && StringRef(value).equals_insensitive("verify"))
    return RocdlSharedCodegenMode::Verify;
  return getEnvFlag("FLY_ROCDL_CODEGEN_CUT").value_or(true)
             ? RocdlSharedCodegenMode::On
             : RocdlSharedCodegenMode::Off;
}

std::optional<llvm::SmallString<0>>
codegenSharingRocdl(const RocdlSharing &sharing, StringRef triple,
                    StringRef chip, StringRef features, int optLevel) {
  if (!sharing.optimized || !sharing.optimized->eligible ||
      getRocdlSharedCodegenMode() == RocdlSharedCodegenMode::Off)
    return std::nullopt;
  bool refusedBefore = false;
  std::unique_ptr<CutState> state =
      pool().take(sharing.optimized.get(), refusedBefore);
  if (!state && !refusedBefore)
    state = makeState(sharing, triple, chip, features, optLevel);
  if (!state) {
    ++refused;
    return std::nullopt;
  }
  // The variant's hints in place of the last one's.
  for (llvm::Function &f : *state->module)
    for (StringRef name : kRegisterHints)
      f.removeFnAttr(name);
  for (const RocdlRegisterHint &hint : sharing.hints) {
    llvm::Function *f = state->module->getFunction(hint.function);
    if (!f) {
      ++refused;
      return std::nullopt;
    }
    f->addFnAttr(hint.attribute, hint.value);
  }
  CodegenCut::Refusal refusal;
  std::optional<llvm::SmallString<0>> isa =
      state->cut->continueToAssembly(refusal);
  if (state->diagnosed) {
    // Its context said something about this variant: not used again.
    ++refused;
    return std::nullopt;
  }
  if (isa)
    ++continued;
  else
    ++refused;
  if (isa || refusal == CodegenCut::Refusal::PressureLimits)
    pool().give(std::move(state));
  return isa;
}

} // namespace fly
