//===- RocdlSharedCodegen.cpp - One codegen prefix for ROCDL variants -----===//

#include "fly/Backend/RocdlSharedCodegen.h"
#include "Support/Environment.h"
#include "fly/Backend/CodegenCut.h"
#include "fly/Backend/TargetMachinePool.h"

#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
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

bool isWarningOrError(const llvm::DiagnosticInfo &info) {
  return info.getSeverity() == llvm::DS_Error ||
         info.getSeverity() == llvm::DS_Warning;
}

/// A kept state's handler: whether LLVM said anything worse than a remark
/// about the variant continuing it (compiled whole then, where the same
/// words reach its own context).
class DiagnosticsSeen final : public llvm::DiagnosticHandler {
public:
  explicit DiagnosticsSeen(bool &seen) : seen(seen) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    if (!isWarningOrError(info))
      return false;
    seen = true;
    return true;
  }

private:
  bool &seen;
};

/// The caller's handler during a whole compile that may be kept: noting
/// whether anything worse than a remark went through it.
class DiagnosticsNoted final : public llvm::DiagnosticHandler {
public:
  DiagnosticsNoted(std::unique_ptr<llvm::DiagnosticHandler> inner, bool &seen)
      : inner(std::move(inner)), seen(seen) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    seen |= isWarningOrError(info);
    return inner && inner->handleDiagnostics(info);
  }
  bool isAnalysisRemarkEnabled(StringRef pass) const override {
    return inner && inner->isAnalysisRemarkEnabled(pass);
  }
  bool isMissedOptRemarkEnabled(StringRef pass) const override {
    return inner && inner->isMissedOptRemarkEnabled(pass);
  }
  bool isPassedOptRemarkEnabled(StringRef pass) const override {
    return inner && inner->isPassedOptRemarkEnabled(pass);
  }
  bool isAnyRemarkEnabled() const override {
    return inner && inner->isAnyRemarkEnabled();
  }
  std::unique_ptr<llvm::DiagnosticHandler> inner;

private:
  bool &seen;
};

/// One shared module's machine functions at the cut, with the module,
/// context and machine of the variant that compiled them (the kept machine
/// functions point into all three).
struct CutState {
  std::shared_ptr<const RocdlOptimizedModule> optimized;
  std::optional<LentTargetMachine> machine;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<CodegenCut> cut;
  bool diagnosed = false;

  /// The machine back to its pool once the machine functions are gone.
  ~CutState() {
    if (machine && *machine && !diagnosed)
      machine->keep();
  }
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
    refused = llvm::any_of(refusedModules,
                           [&](const auto &m) { return m.get() == optimized; });
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
    std::unique_ptr<CutState> evicted;
    std::lock_guard<std::mutex> lock(mutex);
    idle.push_front(std::move(state));
    if (idle.size() > maxIdle()) {
      evicted = std::move(idle.back());
      idle.pop_back();
    }
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

std::atomic<uint64_t> cuts{0}, continued{0}, refusedModules{0},
    refusedVariants{0};

/// `state` continued with `sharing`'s hints; nullopt where it would not be
/// exact or LLVM said something (`state` is given back where it may serve
/// another variant).
std::optional<llvm::SmallString<0>>
continueState(std::unique_ptr<CutState> state, const RocdlSharing &sharing) {
  // The variant's hints in place of the last one's.
  for (llvm::Function &f : *state->module)
    for (StringRef name : kRegisterHints)
      f.removeFnAttr(name);
  for (const RocdlRegisterHint &hint : sharing.hints) {
    llvm::Function *f = state->module->getFunction(hint.function);
    if (!f)
      return std::nullopt;
    f->addFnAttr(hint.attribute, hint.value);
  }
  CodegenCut::Refusal refusal;
  std::optional<llvm::SmallString<0>> isa =
      state->cut->continueToAssembly(refusal);
  if (state->diagnosed)
    return std::nullopt;
  if (isa || refusal == CodegenCut::Refusal::PressureLimits)
    pool().give(std::move(state));
  return isa;
}
} // namespace

RocdlSharedCodegenStats getRocdlSharedCodegenStats() {
  return {cuts.load(), continued.load(), refusedModules.load(),
          refusedVariants.load()};
}

RocdlSharedCodegenMode getRocdlSharedCodegenMode() {
  const char *value = std::getenv("FLY_ROCDL_CODEGEN_CUT");
  if (value && StringRef(value).equals_insensitive("verify"))
    return RocdlSharedCodegenMode::Verify;
  return getEnvFlag("FLY_ROCDL_CODEGEN_CUT").value_or(true)
             ? RocdlSharedCodegenMode::On
             : RocdlSharedCodegenMode::Off;
}

std::optional<RocdlSharedIsa>
codegenSharingRocdl(const RocdlSharing &sharing,
                    std::unique_ptr<llvm::LLVMContext> &context,
                    std::unique_ptr<llvm::Module> &module,
                    std::optional<LentTargetMachine> &machine) {
  if (!sharing.optimized || !sharing.optimized->eligible || !context ||
      !module || !machine || !*machine ||
      getRocdlSharedCodegenMode() == RocdlSharedCodegenMode::Off)
    return std::nullopt;
  bool refused = false;
  if (std::unique_ptr<CutState> state =
          pool().take(sharing.optimized.get(), refused)) {
    std::optional<llvm::SmallString<0>> isa =
        continueState(std::move(state), sharing);
    if (!isa) {
      ++refusedVariants;
      return std::nullopt;
    }
    ++continued;
    return RocdlSharedIsa{std::move(*isa), /*continued=*/true};
  }
  llvm::TargetMachine &tm = *machine->get();
  if (refused || !isCuttable(*module, tm)) {
    if (!refused)
      pool().refuse(sharing.optimized);
    ++refusedModules;
    return std::nullopt;
  }

  // Compiled whole, the machine functions kept at the cut.
  bool seen = false;
  context->setDiagnosticHandler(std::make_unique<DiagnosticsNoted>(
      context->getDiagnosticHandler(), seen));
  CodegenCut::Whole whole = CodegenCut::compileKeeping(tm, *module, kCutPass);
  std::unique_ptr<llvm::DiagnosticHandler> noted =
      context->getDiagnosticHandler();
  if (!whole.assembly || !whole.cut || seen) {
    context->setDiagnosticHandler(
        std::move(static_cast<DiagnosticsNoted &>(*noted).inner));
    if (!whole.assembly)
      return std::nullopt;
    if (!whole.cut)
      pool().refuse(sharing.optimized);
    return RocdlSharedIsa{std::move(*whole.assembly), /*continued=*/false};
  }
  auto state = std::make_unique<CutState>();
  state->optimized = sharing.optimized;
  state->machine.emplace(std::move(*machine));
  machine.reset();
  state->context = std::move(context);
  state->module = std::move(module);
  state->cut = std::move(whole.cut);
  state->context->setDiagnosticHandler(
      std::make_unique<DiagnosticsSeen>(state->diagnosed));
  ++cuts;
  pool().give(std::move(state));
  return RocdlSharedIsa{std::move(*whole.assembly), /*continued=*/false};
}

} // namespace fly
