//===- RocdlSharedCodegen.cpp - One codegen prefix for ROCDL variants -----===//

#include "fly/Backend/RocdlSharedCodegen.h"
#include "CompileObserved.h"
#include "RocdlSharedCodegenTesting.h"
#include "Support/Environment.h"
#include "Support/FatalErrors.h"
#include "fly/Backend/CodegenCut.h"
#include "fly/Backend/TargetMachinePool.h"
#include "fly/Backend/VariantQueue.h"
#include "fly/Support/TimeTrace.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using llvm::StringRef;

namespace fly {

namespace {
/// The first code generation pass the register hints reach (bench/ROCDL-
/// SHARE.md, section 3).
constexpr StringRef kCutPass = "amdgpu-prepare-agpr-alloc";

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

/// What all kept states of a process may take (CodegenCut::getBytes): on
/// gfx942 a machine function is ~290 KB, so ~220 small kernels, or a dozen
/// or more large GEMM kernels a thread.
constexpr size_t kMaxKeptBytes = size_t(64) << 20;

/// sharesBySize's default: on the 16-core node, sweeps of 15 and 31 ISA
/// compiles (one and two rounds of its threads) were as fast compiled whole,
/// sweeps of 93 and 217 faster shared (bench/node-rule).
constexpr uint64_t kDefaultShareRounds = 3;

/// One shared module's machine functions at the cut, with the module,
/// context and machine of the variant that compiled them (the kept machine
/// functions point into all three).
struct CutState {
  std::shared_ptr<const RocdlOptimizedModule> optimized;
  std::optional<LentTargetMachine> machine;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<CodegenCut> cut;
  /// Kept from a variant without register hints: the register pressure
  /// limits most variants see, so preferred.
  bool unhinted = false;
  bool diagnosed = false;

  /// The hints other than the VGPR budget of the probes of register
  /// pressure limits made for this state (probeLimits); none after one that
  /// found the limits make a difference.
  std::vector<std::vector<RocdlRegisterHint>> probed;
  bool probeDiffered = false;

  /// What `cut` takes, counted in the pool's budget while the state lives.
  size_t bytes = 0;
  /// Triple, chip and features; until a continuation on this target has
  /// been checked in the process, the kept variant's hints and ISA.
  std::string target;
  std::vector<RocdlRegisterHint> keptHints;
  llvm::SmallString<0> keptIsa;
  /// What lends a machine for a check elsewhere (lendTargetMachine), and
  /// the opt level it compiles at (the shared module's).
  std::string triple, chip, features;
  llvm::CodeGenOptLevel optLevel = llvm::CodeGenOptLevel::Default;

  /// The machine back to its pool once the machine functions are gone.
  ~CutState();
};

/// Whether code generation of `module` before the cut reads nothing the
/// register hints change, on a target without a private-buffer register
/// chosen before it (bench/MIR-CUT-AUDIT.md).
bool isCuttable(const llvm::Module &module, const llvm::TargetMachine &tm) {
  if (!tm.getTargetTriple().isAMDGCN())
    return false;
  const llvm::MCSubtargetInfo &sti = *tm.getMCSubtargetInfo();
  // checkFeatures is a fatal error for a feature the target does not know.
  auto has = [&](StringRef feature) {
    return llvm::any_of(sti.getAllProcessorFeatures(),
                        [&](const llvm::SubtargetFeatureKV &kv) {
                          return feature == kv.Key;
                        }) &&
           sti.checkFeatures(("+" + feature).str());
  };
  if (!has("architected-flat-scratch"))
    return false;
  // Instruction selection pads the user SGPRs for this bug, and the padding
  // is not part of what a copy's MachineFunctionInfo is rebuilt from.
  if (has("user-sgpr-init16-bug"))
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

/// setRocdlKeepForLaterSweeps.
std::atomic<bool> keepForLaterSweeps{true};

/// Whether a sweep is large enough to share its code generation
/// (FLY_ROCDL_CODEGEN_CUT_ROUNDS): where its variants fill at least that
/// many rounds of the pool's threads. States, their targets' checks and the
/// waits for verdicts cost as much as a sweep that runs in a round or two
/// saves; decided by the sweep's size, not by what is left when a variant
/// gets there, so that a sweep shares all the way or not at all (a few
/// states made early, as threads start, paid for the checks and saved
/// little).
bool sharesBySize(const VariantQueueCounts &queue) {
  uint64_t rounds = getEnvUnsigned("FLY_ROCDL_CODEGEN_CUT_ROUNDS")
                        .value_or(kDefaultShareRounds);
  // Divided, not multiplied: any value set is safe.
  return queue.total / std::max<size_t>(1, queue.threads) >= rounds;
}

/// Idle states, the most recently used first, and the shared modules that
/// cannot be cut (not tried again). Bounded: a state holds a module, its
/// machine functions and a machine.
class StatePool {
public:
  /// An idle state of `optimized` other than those in `tried`, one kept
  /// unhinted first, else the most recently used.
  std::shared_ptr<CutState> take(const RocdlOptimizedModule *optimized,
                                 llvm::ArrayRef<const CutState *> tried,
                                 bool &refused) {
    std::lock_guard<std::mutex> lock(mutex);
    return takeLocked(optimized, tried, refused);
  }
  /// take(), waiting while none is idle for one to be given back (by a
  /// variant done with it, or by the check `checkKey` run beside with a
  /// yes); nullptr once that check ended without one to take (it said no,
  /// or another variant took its state), the module is refused, or after
  /// kVerdictWait.
  std::shared_ptr<CutState> takeOnceIdle(const RocdlOptimizedModule *optimized,
                                         llvm::ArrayRef<const CutState *> tried,
                                         const std::string &checkKey,
                                         bool &refused) {
    std::unique_lock<std::mutex> lock(mutex);
    std::shared_ptr<CutState> state;
    changed.wait_for(lock, kVerdictWait, [&] {
      state = takeLocked(optimized, tried, refused);
      return state || refused || checksEnded.count(checkKey);
    });
    return state;
  }
  /// The check `checkKey` run beside a variant has ended, its state given
  /// back after a yes.
  void checkEnded(const std::string &checkKey) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      checksEnded.insert(checkKey);
    }
    changed.notify_all();
  }
  void give(std::shared_ptr<CutState> state) {
    std::shared_ptr<CutState> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex);
      idle.push_front(std::move(state));
      if (idle.size() > maxIdle()) {
        evicted = std::move(idle.back());
        idle.pop_back();
      }
    }
    changed.notify_all();
  }
  /// Widens the limits of the idle states of `optimized` by a whole
  /// compile's trace (CodegenCut::widenLimits).
  void widenIdle(const RocdlOptimizedModule *optimized,
                 const CodegenCut::Trace &trace) {
    std::lock_guard<std::mutex> lock(mutex);
    for (std::shared_ptr<CutState> &state : idle)
      if (state->optimized.get() == optimized)
        state->cut->widenLimits(trace);
  }
  /// Counts `bytes` more in the budget, idle states out (least recently
  /// used first) as needed; false where it does not fit even then.
  bool reserve(size_t bytes) {
    std::vector<std::shared_ptr<CutState>> evicted;
    std::lock_guard<std::mutex> lock(mutex);
    for (auto *states : {&idle, &portable})
      while (liveBytes + bytes > kMaxKeptBytes && !states->empty()) {
        liveBytes -= states->back()->bytes;
        states->back()->bytes = 0;
        evicted.push_back(std::move(states->back()));
        states->pop_back();
      }
    if (liveBytes + bytes > kMaxKeptBytes)
      return false;
    liveBytes += bytes;
    return true;
  }
  void release(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    liveBytes -= bytes;
  }
  /// Whether a continuation on `target` (triple, chip, features) gave the
  /// whole compile's ISA in this process: true, false, or not tried yet.
  std::optional<bool> isTargetFaithful(const std::string &target) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = faithful.find(target);
    if (it == faithful.end())
      return std::nullopt;
    return it->second;
  }
  void setTargetFaithful(const std::string &target, bool value) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      faithful.try_emplace(target, value);
      checking.erase(target);
    }
    changed.notify_all();
  }
  /// The verdict on `target`, once the thread checking it has given one: it
  /// always does, a crash in the check included (isFaithful), and a check
  /// never waits for another. nullopt after kVerdictWait without one, a
  /// backstop.
  std::optional<bool> awaitTargetFaithful(const std::string &target) {
    std::unique_lock<std::mutex> lock(mutex);
    if (!changed.wait_for(lock, kVerdictWait,
                          [&] { return faithful.count(target) != 0; }))
      return std::nullopt;
    return faithful.find(target)->second;
  }
  /// Whether the caller is the one to check `target` now: not known yet and
  /// nobody checking it (a check costs a continuation; one is enough).
  bool claimCheck(const std::string &target) {
    std::lock_guard<std::mutex> lock(mutex);
    return !faithful.count(target) && checking.insert(target).second;
  }
  /// The claim of a check of `target` that ended without a verdict: the next
  /// to claim it checks.
  void unclaimCheck(const std::string &target) {
    std::lock_guard<std::mutex> lock(mutex);
    checking.erase(target);
  }
  /// Whether a whole compile of `optimized` is worth keeping, by what is
  /// left of its sweep (`queue`; nullopt: not known, kept): where more of
  /// its variants are still to start than there are idle states of it and
  /// compiles keeping one, in a sweep large enough (sharesBySize), or where
  /// there are none of either and it compiles alone (a caller's loop of
  /// one-variant sweeps continues from it in its next sweep). `oneIsEnough`
  /// (continued elsewhere): where none is kept or being kept, in a sweep
  /// large enough, or it compiles alone and a later sweep may come. Where
  /// true, counted as keeping until keepDone.
  bool claimKeep(const RocdlOptimizedModule *optimized,
                 std::optional<VariantQueueCounts> queue,
                 bool oneIsEnough = false) {
    std::lock_guard<std::mutex> lock(mutex);
    bool alone = queue && queue->notStarted == 0 && queue->running <= 1;
    // Continued elsewhere, one state serves every variant of its module, those
    // running beside this one too (from once it is made).
    if (oneIsEnough) {
      if (keeping.count(optimized) || takePortableLocked(optimized))
        return false;
      bool worth =
          !queue || (alone ? keepForLaterSweeps.load() : sharesBySize(*queue));
      if (worth)
        ++keeping[optimized];
      return worth;
    }
    auto inFlight = keeping.find(optimized);
    size_t states = (inFlight == keeping.end() ? 0 : inFlight->second) +
                    llvm::count_if(idle, [&](const auto &state) {
                      return state->optimized.get() == optimized;
                    });
    bool worth = !queue ||
                 (queue->notStarted > states && sharesBySize(*queue)) ||
                 (states == 0 && alone && keepForLaterSweeps);
    if (worth)
      ++keeping[optimized];
    return worth;
  }
  void keepDone(const RocdlOptimizedModule *optimized) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = keeping.find(optimized);
      if (it != keeping.end() && --it->second == 0)
        keeping.erase(it);
    }
    changed.notify_all();
  }
  /// A state continuable elsewhere (CodegenCut::makePortable): served to
  /// any number of threads at once by takePortable, idle or not.
  void addPortable(const std::shared_ptr<CutState> &state) {
    std::shared_ptr<CutState> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex);
      portable.push_front(state);
      if (portable.size() > maxIdle()) {
        evicted = std::move(portable.back());
        portable.pop_back();
      }
    }
    changed.notify_all();
  }
  /// Whether a state of `optimized` is being made (claimKeep).
  bool isKeeping(const RocdlOptimizedModule *optimized) {
    std::lock_guard<std::mutex> lock(mutex);
    return keeping.count(optimized) != 0;
  }
  bool isRefused(const RocdlOptimizedModule *optimized) {
    std::lock_guard<std::mutex> lock(mutex);
    return isRefusedLocked(optimized);
  }
  /// The most recently kept portable state of `optimized`; null where none
  /// is, or the module is refused.
  std::shared_ptr<CutState>
  takePortable(const RocdlOptimizedModule *optimized) {
    std::lock_guard<std::mutex> lock(mutex);
    return takePortableLocked(optimized);
  }

private:
  bool isRefusedLocked(const RocdlOptimizedModule *optimized) {
    return llvm::any_of(refusedModules,
                        [&](const auto &m) { return m.get() == optimized; });
  }
  std::shared_ptr<CutState>
  takePortableLocked(const RocdlOptimizedModule *optimized) {
    if (isRefusedLocked(optimized))
      return nullptr;
    for (const std::shared_ptr<CutState> &state : portable)
      if (state->optimized.get() == optimized)
        return state;
    return nullptr;
  }

public:
  void refuse(std::shared_ptr<const RocdlOptimizedModule> optimized) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      refusedModules.push_back(std::move(optimized));
      if (refusedModules.size() > kMaxRefused)
        refusedModules.pop_front();
    }
    changed.notify_all();
  }

private:
  /// take() under the lock.
  std::shared_ptr<CutState> takeLocked(const RocdlOptimizedModule *optimized,
                                       llvm::ArrayRef<const CutState *> tried,
                                       bool &refused) {
    refused = llvm::any_of(refusedModules,
                           [&](const auto &m) { return m.get() == optimized; });
    auto it = idle.end();
    for (auto s = idle.begin(); s != idle.end(); ++s)
      if ((*s)->optimized.get() == optimized &&
          !llvm::is_contained(tried, s->get()) &&
          (it == idle.end() || (*s)->unhinted > (*it)->unhinted))
        it = s;
    if (it == idle.end())
      return nullptr;
    std::shared_ptr<CutState> state = std::move(*it);
    idle.erase(it);
    return state;
  }
  static size_t maxIdle() {
    return std::max(16u, 2 * std::thread::hardware_concurrency());
  }
  static constexpr size_t kMaxRefused = 16;
  static constexpr std::chrono::seconds kVerdictWait{60};
  std::mutex mutex;
  std::list<std::shared_ptr<CutState>> idle;
  /// The most recently kept first.
  std::list<std::shared_ptr<CutState>> portable;
  std::deque<std::shared_ptr<const RocdlOptimizedModule>> refusedModules;
  std::map<std::string, bool> faithful;
  /// A verdict set, a state given back or a module refused.
  std::condition_variable changed;
  std::set<std::string> checking;
  std::set<std::string> checksEnded;
  std::map<const RocdlOptimizedModule *, size_t> keeping;
  size_t liveBytes = 0;
};

/// Never destroyed, as the machine pool: states outlive any static
/// destructor that could still run LLVM code at exit.
StatePool &pool() {
  static StatePool *instance = new StatePool();
  return *instance;
}

CutState::~CutState() {
  if (bytes)
    pool().release(bytes);
  if (machine && *machine && !diagnosed)
    machine->keep();
}

std::atomic<uint64_t> cuts{0}, continued{0}, refusedModules{0},
    refusedVariants{0}, probes{0}, widenedProbes{0}, continuedEarly{0},
    notKept{0}, awaitedChecks{0}, checksBeside{0}, continuedElsewhere{0},
    wholeWhileStateMade{0}, continuedElsewhereFromCut{0};

RocdlSharedCodegenTestHooks &getTestHooks() {
  static RocdlSharedCodegenTestHooks hooks;
  return hooks;
}

/// Whether a variant with `hints` may be kept: not if it caps the waves per
/// EU (a continuation's occupancy is the kept one, lowered to its own limit,
/// never raised).
bool mayKeep(const std::vector<RocdlRegisterHint> &hints) {
  return llvm::none_of(hints, [](const RocdlRegisterHint &hint) {
    return hint.attribute == "amdgpu-waves-per-eu" &&
           StringRef(hint.value).contains(',');
  });
}

/// Sets `hints` on `module`'s functions in place of the register hints they
/// had; false where one names no function of it.
bool setHints(llvm::Module &module,
              const std::vector<RocdlRegisterHint> &hints) {
  for (llvm::Function &f : module)
    for (StringRef name : getRocdlRegisterHintAttributes())
      f.removeFnAttr(name);
  for (const RocdlRegisterHint &hint : hints) {
    llvm::Function *f = module.getFunction(hint.function);
    if (!f)
      return false;
    f->addFnAttr(hint.attribute, hint.value);
  }
  return true;
}

/// Probes one state may make.
constexpr unsigned kMaxProbes = 4;

/// Where `sharing`'s variant would see other register pressure limits than
/// `state` is known for: code generation from before the first pass that
/// reads them up to the cut, with the variant's hints but the least VGPR
/// budget (limits at or below the variant's), traced. Where it made every
/// function as the kept compile did, the state serves every variant with
/// limits between the two (CodegenCut::widenLimits): a sweep over register
/// budgets then continues from the cut. Leaves the variant's hints set.
bool probeLimits(CutState &state, const RocdlSharing &sharing) {
  std::vector<RocdlRegisterHint> others;
  for (const RocdlRegisterHint &hint : sharing.hints)
    if (hint.attribute != "amdgpu-num-vgpr")
      others.push_back(hint);
  if (state.probeDiffered || state.probed.size() >= kMaxProbes ||
      llvm::is_contained(state.probed, others))
    return false;
  state.probed.push_back(others);
  ++probes;
  std::vector<RocdlRegisterHint> least = others;
  for (llvm::Function &f : *state.module)
    if (!f.isDeclaration())
      least.push_back({f.getName().str(), "amdgpu-num-vgpr", "1"});
  std::optional<CodegenCut::Trace> trace;
  if (setHints(*state.module, least))
    trace = state.cut->traceFromEarly();
  setHints(*state.module, sharing.hints);
  if (!trace || state.diagnosed)
    return false;
  switch (state.cut->widenLimits(*trace)) {
  case CodegenCut::Widening::Widened:
    ++widenedProbes;
    return true;
  case CodegenCut::Widening::Unchanged:
    return false;
  case CodegenCut::Widening::Differs:
    state.probeDiffered = true;
    return false;
  }
  return false;
}

enum class Faithful { Yes, No, Pending };

/// What isFaithful records for continuations on `target` from the cut, or
/// from before the first pass that reads the pressure limits (`early`).
std::string checkKey(const std::string &target, bool early) {
  return early ? target + "\nearly" : target;
}

/// The check of a target's continuations from the cut or from before the
/// first pass that reads the pressure limits (`early`), claimed by the
/// caller: whether a continuation of `state` with the kept variant's own
/// hints gives its ISA. Sets the verdict.
bool checkContinuation(CutState &state, bool early) {
  if (const std::function<void(bool)> &hook = getTestHooks().checking)
    hook(early);
  std::string key = checkKey(state.target, early);
  // A crash in the check says no: the kept variant compiled whole, so what
  // crashed is the continuation.
  ReleaseOnUnwind crashed([key] { pool().setTargetFaithful(key, false); });
  llvm::TimeTraceScope span("Check a continuation",
                            early ? "from before the limits" : "from the cut");
  std::optional<llvm::SmallString<0>> again;
  CodegenCut::Refusal refusal;
  CodegenCut::Trace trace;
  if (setHints(*state.module, state.keptHints))
    again = early ? state.cut->continueFromEarly(refusal, trace)
                  : state.cut->continueToAssembly(refusal);
  bool faithful = !state.diagnosed && again && *again == state.keptIsa;
  pool().setTargetFaithful(key, faithful);
  return faithful;
}

/// Once both routes of its target are checked, a state needs no copy of the
/// kept variant's ISA any more.
void forgetKeptIsaOnceChecked(CutState &state) {
  if (pool().isTargetFaithful(checkKey(state.target, /*early=*/false)) &&
      pool().isTargetFaithful(checkKey(state.target, /*early=*/true))) {
    state.keptHints.clear();
    state.keptIsa.clear();
  }
}

/// Whether the caller is now the one to check `state`'s target from the cut
/// or from before the limits (`early`): no verdict yet, nobody else checking
/// it, and `state` can (it has the kept variant's ISA).
bool claimCheckOf(const CutState &state, bool early) {
  return !state.keptIsa.empty() &&
         pool().claimCheck(checkKey(state.target, early));
}

/// Whether a continuation of `state` with the kept variant's own hints, from
/// the cut or from before the first pass that reads the pressure limits
/// (`early`), gives its ISA: once per target and point in the process,
/// before the first such continuation, or the copies leave out something
/// this target's code generation put into the machine functions (then
/// nothing of this target is continued from there). Pending while another
/// thread checks (a state without the kept ISA is only made once both
/// verdicts are known).
Faithful isFaithful(CutState &state, bool early) {
  std::string key = checkKey(state.target, early);
  if (std::optional<bool> known = pool().isTargetFaithful(key))
    return *known ? Faithful::Yes : Faithful::No;
  if (!claimCheckOf(state, early))
    return Faithful::Pending;
  return checkContinuation(state, early) ? Faithful::Yes : Faithful::No;
}

/// The checks a variant started on threads of their own, joined before it
/// returns: none outlives the variant that started it. (A crash in the
/// variant abandons this with its frames; its checks then end on their
/// own, each with a verdict.)
struct ChecksBeside {
  ~ChecksBeside() {
    for (std::thread &check : threads)
      check.join();
  }
  std::vector<std::thread> threads;
};

/// Whether a check goes to a thread of its own beside the variant that
/// claims it (FLY_ROCDL_CHECK_BESIDE, on by default): where other variants
/// of its sweep run beside it under crash recovery (the isolated executor),
/// never in a sweep of one thread. That variant then continues on another
/// kept state (waiting for one to be given back, the checked one at the
/// latest) while the check runs; on the same thread, the check and its own
/// continuation came one after the other, and on a big GEMM that variant
/// ended the sweep (bench/node-trace/README.md, bench/node-check-beside).
bool checksGoBeside() {
  if (!getEnvFlag("FLY_ROCDL_CHECK_BESIDE").value_or(true) ||
      !llvm::CrashRecoveryContext::GetCurrent())
    return false;
  std::optional<VariantQueueCounts> queue = getCurrentVariantQueue();
  return queue && queue->running > 1;
}

/// Runs the check of `state`'s target from the cut or from before the
/// limits (`early`), claimed by the caller (claimCheckOf), on a thread of its
/// own (in `checks`), which gives `state` back to the pool after a yes.
/// Returns the check's key.
std::string checkBeside(std::shared_ptr<CutState> state, bool early,
                        ChecksBeside &checks) {
  std::string key = checkKey(state->target, early);
  ++checksBeside;
  checks.threads.emplace_back([state = std::move(state), early, key]() mutable {
    FatalErrorsUnwindCrashRecovery fatalErrors;
    TimeTraceThreadScope threadTrace;
    llvm::TimeTraceScope task("Continuation check", early ? "from before the "
                                                            "limits"
                                                          : "from the cut");
    bool faithful = false;
    llvm::CrashRecoveryContext crc;
    if (!crc.RunSafely([&] { faithful = checkContinuation(*state, early); })) {
      // Abandoned, as a crashed continuation's state: out of the budget.
      pool().release(state->bytes);
      (void)new std::shared_ptr<CutState>(std::move(state));
    } else if (!faithful) {
      pool().refuse(state->optimized);
    } else {
      forgetKeptIsaOnceChecked(*state);
      pool().give(std::move(state));
    }
    pool().checkEnded(key);
  });
  return key;
}

/// Whether a variant that takes a kept state while another thread checks its
/// target continues too and waits for that verdict, or compiles whole
/// (FLY_ROCDL_AWAIT_CHECK; the objects are the same either way).
bool awaitsChecks() {
  return getEnvFlag("FLY_ROCDL_AWAIT_CHECK").value_or(true);
}

/// Whether a continuation made while the check of its target and point was
/// pending (`verdict`) stands: it waits for that check, which started first
/// and costs one continuation too, rather than compiling whole meanwhile
/// (at P threads, the P variants after the first P all found the check
/// running). nullopt: no verdict within the backstop.
std::optional<bool> standsOnVerdict(const CutState &state, bool early,
                                    Faithful verdict) {
  if (verdict != Faithful::Pending)
    return verdict == Faithful::Yes;
  ++awaitedChecks;
  if (const std::function<void(bool)> &hook = getTestHooks().awaitingVerdict)
    hook(early);
  llvm::TimeTraceScope span("Wait for the continuation check");
  return pool().awaitTargetFaithful(checkKey(state.target, early));
}

/// `state` continued with `sharing`'s hints; nullopt where it would not be
/// exact (`refusal` says why) or LLVM said something (`diagnosed`); `state`
/// is given back where it may serve another variant. With `checks`, a check
/// of its target this variant is the first to need goes there with `state`
/// (nullopt, `handedTo` the check's key): the caller takes another state.
std::optional<llvm::SmallString<0>>
continueState(std::shared_ptr<CutState> state, const RocdlSharing &sharing,
              CodegenCut::Refusal &refusal, bool &diagnosed,
              ChecksBeside *checks, std::optional<std::string> &handedTo) {
  refusal = CodegenCut::Refusal::None;
  diagnosed = false;
  if (checks && claimCheckOf(*state, /*early=*/false)) {
    handedTo = checkBeside(std::move(state), /*early=*/false, *checks);
    return std::nullopt;
  }
  // A crash in a continuation abandons the state with the variant's frames:
  // its bytes out of the budget. Not once given back: then it is the pool's.
  ReleaseOnUnwind abandoned([bytes = state->bytes] { pool().release(bytes); });
  // Compiled whole, the state kept for others: no verdict in time, or one
  // pending where continuations do not wait for it.
  auto unjudged = [&] {
    refusal = CodegenCut::Refusal::None;
    abandoned.unregister();
    pool().give(std::move(state));
    return std::nullopt;
  };
  bool awaits = awaitsChecks();
  Faithful fromCut = isFaithful(*state, /*early=*/false);
  if (fromCut == Faithful::No) {
    pool().refuse(state->optimized);
    return std::nullopt;
  }
  if (fromCut == Faithful::Pending && !awaits)
    return unjudged();
  if (!setHints(*state->module, sharing.hints))
    return std::nullopt;
  std::optional<llvm::TimeTraceScope> span(std::in_place,
                                           "Continue from the cut");
  std::optional<llvm::SmallString<0>> isa =
      state->cut->continueToAssembly(refusal);
  if (!isa && refusal == CodegenCut::Refusal::PressureLimits &&
      probeLimits(*state, sharing))
    isa = state->cut->continueToAssembly(refusal);
  if (!isa && refusal == CodegenCut::Refusal::PressureLimits &&
      !state->diagnosed && checks && claimCheckOf(*state, /*early=*/true)) {
    abandoned.unregister();
    handedTo = checkBeside(std::move(state), /*early=*/true, *checks);
    return std::nullopt;
  }
  // Other limits than the state serves: from before the passes that read
  // them, and what they made widens the state's limits once that route is
  // known to be faithful.
  std::optional<CodegenCut::Trace> earlyTrace;
  Faithful fromEarly = Faithful::Yes;
  if (!isa && refusal == CodegenCut::Refusal::PressureLimits &&
      !state->diagnosed &&
      (fromEarly = isFaithful(*state, /*early=*/true)) != Faithful::No &&
      (awaits || fromEarly == Faithful::Yes) &&
      setHints(*state->module, sharing.hints)) {
    CodegenCut::Trace trace;
    span.emplace("Continue from before the limits");
    isa = state->cut->continueFromEarly(refusal, trace);
    if (isa)
      earlyTrace = std::move(trace);
  }
  span.reset();
  if (state->diagnosed) {
    diagnosed = true;
    return std::nullopt;
  }
  if (isa) {
    std::optional<bool> stands =
        standsOnVerdict(*state, /*early=*/false, fromCut);
    if (!stands)
      return unjudged();
    if (!*stands) {
      pool().refuse(state->optimized);
      return std::nullopt;
    }
  }
  if (earlyTrace) {
    std::optional<bool> stands =
        standsOnVerdict(*state, /*early=*/true, fromEarly);
    if (!stands)
      return unjudged();
    if (*stands) {
      ++continuedEarly;
      state->cut->widenLimits(*earlyTrace);
    } else {
      // As where the verdict came first: compiled whole, and maybe kept.
      isa.reset();
      refusal = CodegenCut::Refusal::PressureLimits;
    }
  }
  forgetKeptIsaOnceChecked(*state);
  abandoned.unregister();
  if (isa || refusal == CodegenCut::Refusal::PressureLimits)
    pool().give(std::move(state));
  return isa;
}
/// Whether variants continue elsewhere (FLY_ROCDL_CONTINUE_ELSEWHERE, off by
/// default): each in its own context, on a copy of a state's module
/// (CodegenCut::continueElsewhere), so one state serves any number of
/// threads at once; else a state serves one thread at a time. On 2 cores it
/// took 6 % less wall time, but on the 16-core node no less on the config
/// sweep and more on a GEMM at N = 64 (bench/node-held).
bool continuesElsewhere() {
  return getEnvFlag("FLY_ROCDL_CONTINUE_ELSEWHERE").value_or(false);
}

/// What the verdict on continuations elsewhere on a target is recorded as:
/// from before the passes that read the pressure limits, or from the cut.
std::string elsewhereKey(const std::string &target, bool fromCut = false) {
  return target + (fromCut ? "\nelsewhere from the cut" : "\nelsewhere");
}

/// While alive, LLVM's words in `context` only set `seen` (DiagnosticsSeen);
/// its handler is given back after.
class ScopedDiagnosticsSeen {
public:
  ScopedDiagnosticsSeen(llvm::LLVMContext &context, bool &seen)
      : context(context), callers(context.getDiagnosticHandler()) {
    context.setDiagnosticHandler(std::make_unique<DiagnosticsSeen>(seen));
  }
  ~ScopedDiagnosticsSeen() { context.setDiagnosticHandler(std::move(callers)); }
  ScopedDiagnosticsSeen(const ScopedDiagnosticsSeen &) = delete;
  ScopedDiagnosticsSeen &operator=(const ScopedDiagnosticsSeen &) = delete;

private:
  llvm::LLVMContext &context;
  std::unique_ptr<llvm::DiagnosticHandler> callers;
};

/// The shared module of `sharing` read into `context` (named `identifier`,
/// as the variant's), with `hints`; null where it cannot be.
std::unique_ptr<llvm::Module>
readShared(const RocdlSharing &sharing, llvm::LLVMContext &context,
           StringRef identifier, const std::vector<RocdlRegisterHint> &hints) {
  const llvm::SmallVector<char, 0> &bitcode = sharing.optimized->bitcode;
  llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(StringRef(bitcode.data(), bitcode.size()),
                            identifier),
      context);
  if (!module) {
    llvm::consumeError(module.takeError());
    return nullptr;
  }
  if (!setHints(**module, hints))
    return nullptr;
  return std::move(*module);
}

/// `state` continued elsewhere from `from` (the cut, or before the passes
/// that read the pressure limits, so under any limits; `trace` then gets
/// what those made): in `context` on `machine`, with `hints`; nullopt where
/// refused (`refusal`) or LLVM said anything worse than a remark (refusal
/// None then; compiled whole, its words reaching the caller there).
std::optional<llvm::SmallString<0>>
continueFrom(const CutState &state, llvm::LLVMContext &context,
             llvm::TargetMachine &machine,
             const std::vector<RocdlRegisterHint> &hints,
             CodegenCut::Point from, CodegenCut::Refusal &refusal,
             CodegenCut::Trace *trace = nullptr) {
  bool diagnosed = false;
  ScopedDiagnosticsSeen seen(context, diagnosed);
  llvm::TimeTraceScope span(from == CodegenCut::Point::Cut
                                ? "Continue elsewhere from the cut"
                                : "Continue elsewhere from before the limits");
  std::optional<llvm::SmallString<0>> isa = state.cut->continueElsewhere(
      machine, context,
      [&](llvm::Module &copy) { return setHints(copy, hints); }, from, refusal,
      trace);
  if (!diagnosed)
    return isa;
  refusal = CodegenCut::Refusal::None;
  return std::nullopt;
}

/// Where a continuation elsewhere started.
enum class Elsewhere { FromCut, FromEarly };

/// `state` continued elsewhere with `hints`: from the cut where `fromCut`
/// and the variant's pressure limits lie in the range the state is known
/// for, else from before the passes that read them (`trace` then gets what
/// those made); `started` says which. nullopt as continueFrom.
std::optional<llvm::SmallString<0>>
runElsewhere(const CutState &state, llvm::LLVMContext &context,
             llvm::TargetMachine &machine,
             const std::vector<RocdlRegisterHint> &hints, bool fromCut,
             Elsewhere &started, CodegenCut::Trace *trace = nullptr) {
  CodegenCut::Refusal refusal = CodegenCut::Refusal::PressureLimits;
  started = Elsewhere::FromCut;
  if (fromCut) {
    std::optional<llvm::SmallString<0>> isa = continueFrom(
        state, context, machine, hints, CodegenCut::Point::Cut, refusal);
    if (isa || refusal != CodegenCut::Refusal::PressureLimits)
      return isa;
  }
  started = Elsewhere::FromEarly;
  return continueFrom(state, context, machine, hints, CodegenCut::Point::Early,
                      refusal, trace);
}

/// The ISA of `module` compiled whole on `machine`, as the caller's plain
/// code generation makes it; nullopt where LLVM said anything worse than a
/// remark (compiled whole again by the caller then, its words reaching the
/// caller's handler, which is back).
std::optional<llvm::SmallString<0>> compileWhole(llvm::Module &module,
                                                 llvm::TargetMachine &machine) {
  bool diagnosed = false;
  ScopedDiagnosticsSeen seen(module.getContext(), diagnosed);
  llvm::SmallString<0> isa;
  {
    llvm::raw_svector_ostream stream(isa);
    llvm::buffer_ostream out(stream);
    llvm::legacy::PassManager passes;
    if (machine.addPassesToEmitFile(passes, out, nullptr,
                                    llvm::CodeGenFileType::AssemblyFile))
      return std::nullopt;
    passes.run(module);
  }
  if (diagnosed)
    return std::nullopt;
  return isa;
}

/// The check of continuations elsewhere on a target, made with the first
/// state kept on it in the process: a whole compile of its keeper's
/// variant (the reference, on a thread of its own beside the keeper, or
/// first) and that variant continued elsewhere (the candidate); whichever
/// comes second gives the verdict, yes where both are there and equal.
class ReferenceCheck {
public:
  explicit ReferenceCheck(std::string key) : key(std::move(key)) {}
  void offer(bool isReference, std::optional<llvm::SmallString<0>> isa) {
    std::lock_guard<std::mutex> lock(mutex);
    (isReference ? reference : candidate) = std::move(isa);
    if (!reference || !candidate || decided)
      return;
    decided = true;
    pool().setTargetFaithful(key, *reference && *candidate &&
                                      **reference == **candidate);
  }

private:
  std::mutex mutex;
  std::string key;
  /// Outer: offered; inner: nullopt where it failed or crashed.
  std::optional<std::optional<llvm::SmallString<0>>> reference, candidate;
  bool decided = false;
};

/// A machine for `state`'s target at its opt level, from the pool; empty
/// where the target refuses.
LentTargetMachine lendMachineOf(const CutState &state) {
  LentTargetMachine machine =
      lendTargetMachine(state.triple, state.chip, state.features);
  if (machine)
    machine.get()->setOptLevel(state.optLevel);
  return machine;
}

/// The reference of `check` (where one is): `sharing`'s variant (`hints`)
/// compiled whole in a context and on a machine of its own; a crash offers
/// none. With `checkCut`, the claimed check of its target's continuations
/// elsewhere from the cut too: that variant continued from there must give
/// the reference; where its pressure limits lie outside those of `state`,
/// the check is left to the next state made.
void offerReference(const std::shared_ptr<ReferenceCheck> &check, bool checkCut,
                    const RocdlSharing &sharing, const CutState &state,
                    const std::string &identifier,
                    const std::vector<RocdlRegisterHint> &hints) {
  const std::function<void(bool)> &hook = getTestHooks().checkingElsewhere;
  if (hook)
    hook(/*fromCut=*/false);
  std::optional<llvm::SmallString<0>> isa;
  llvm::CrashRecoveryContext crc;
  bool ran = crc.RunSafely([&] {
    llvm::TimeTraceScope span("Check a continuation elsewhere",
                              "the whole compile");
    LentTargetMachine machine = lendMachineOf(state);
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> module =
        machine ? readShared(sharing, context, identifier, hints) : nullptr;
    if (!module)
      return;
    isa = compileWhole(*module, *machine.get());
    if (isa)
      machine.keep();
  });
  if (!ran)
    isa.reset();
  // Offered first: the continuations waiting for this verdict need not wait
  // for the check from the cut too.
  if (check)
    check->offer(/*isReference=*/true, isa);
  if (checkCut) {
    if (hook)
      hook(/*fromCut=*/true);
    std::string cutKey = elsewhereKey(state.target, /*fromCut=*/true);
    std::optional<llvm::SmallString<0>> candidate;
    CodegenCut::Refusal refusal = CodegenCut::Refusal::None;
    llvm::CrashRecoveryContext crcCut;
    bool cutRan = isa && crcCut.RunSafely([&] {
      LentTargetMachine machine = lendMachineOf(state);
      llvm::LLVMContext context;
      if (machine)
        candidate = continueFrom(state, context, *machine.get(), hints,
                                 CodegenCut::Point::Cut, refusal);
    });
    if (cutRan && !candidate && refusal == CodegenCut::Refusal::PressureLimits)
      pool().unclaimCheck(cutKey);
    else
      pool().setTargetFaithful(cutKey,
                               cutRan && candidate && *candidate == *isa);
  }
}

/// The ISA of `sharing`'s variant continued elsewhere from `state` (in
/// `context`, on `machine`), once the verdict on continuations elsewhere on
/// its target is yes; nullopt where refused or the verdict is no (compiled
/// whole then). With `check`, the variant's ISA is its candidate.
std::optional<llvm::SmallString<0>>
continueElsewhereFrom(const CutState &state, const RocdlSharing &sharing,
                      llvm::LLVMContext &context, llvm::TargetMachine &machine,
                      const std::shared_ptr<ReferenceCheck> &check) {
  std::string key = elsewhereKey(state.target);
  std::optional<bool> known = pool().isTargetFaithful(key);
  if (known && !*known)
    return std::nullopt;
  // A state kept by a variant compiled whole alone, its ISA the reference:
  // the first variant to continue from it checks the target first.
  if (!known && !check && !state.keptIsa.empty() && pool().claimCheck(key)) {
    std::optional<llvm::SmallString<0>> again;
    llvm::CrashRecoveryContext crc;
    bool ran = crc.RunSafely([&] {
      llvm::TimeTraceScope span("Check a continuation elsewhere",
                                "the kept variant's");
      CodegenCut::Refusal refusal;
      again = continueFrom(state, context, machine, state.keptHints,
                           CodegenCut::Point::Early, refusal);
    });
    pool().setTargetFaithful(key, ran && again && *again == state.keptIsa);
    known = pool().isTargetFaithful(key);
    if (!*known)
      return std::nullopt;
  }
  // A crash here offers no candidate: the check says no.
  ReleaseOnUnwind crashed([check] {
    if (check)
      check->offer(/*isReference=*/false, std::nullopt);
  });
  // From the cut only once that route is known to be faithful (and not for
  // the check's candidate); from before the limits otherwise, traced where
  // what those passes made widens the state's limits for the cut route.
  bool fromCut = !check && pool()
                               .isTargetFaithful(elsewhereKey(state.target,
                                                              /*fromCut=*/true))
                               .value_or(false);
  Elsewhere started;
  CodegenCut::Trace trace;
  std::optional<llvm::SmallString<0>> isa =
      runElsewhere(state, context, machine, sharing.hints, fromCut, started,
                   fromCut ? &trace : nullptr);
  crashed.unregister();
  if (check)
    check->offer(/*isReference=*/false, isa);
  if (!isa)
    return std::nullopt;
  if (started == Elsewhere::FromCut) {
    ++continuedElsewhereFromCut;
    return isa;
  }
  if (!known)
    known = pool().isTargetFaithful(key);
  if (!known) {
    ++awaitedChecks;
    llvm::TimeTraceScope span("Wait for the continuation check");
    known = pool().awaitTargetFaithful(key);
  }
  if (!known || !*known)
    return std::nullopt;
  if (fromCut)
    state.cut->widenLimits(trace);
  return isa;
}

/// A portable state of `sharing`'s shared module for its variant made here,
/// where none is and none is being made: a copy of the shared module without
/// register hints, in a context and on a machine of its own, compiled up to
/// the cut (variants of the module that start meanwhile compile whole). With
/// `check`, it is published, and its target's check elsewhere, where none
/// was made, is claimed with it: the reference starts beside the variant, in
/// `checks`, or else is left in `checkHere`, for the caller to run first
/// once it no longer holds its sweep back (the other variants need not wait
/// for it to take the state); without, the caller publishes it. Null where
/// the module cannot be kept (refused then).
std::shared_ptr<CutState> makeState(const RocdlSharing &sharing,
                                    const llvm::Module &variant,
                                    LentTargetMachine &machine,
                                    ChecksBeside *checks,
                                    std::shared_ptr<ReferenceCheck> *check,
                                    std::function<void()> *checkHere) {
  if (const std::function<void()> &hook = getTestHooks().makingState)
    hook();
  llvm::TimeTraceScope span("Code generation to the cut, kept");
  auto state = std::make_shared<CutState>();
  llvm::TargetMachine &tm = *machine.get();
  state->optimized = sharing.optimized;
  state->unhinted = true;
  state->target = machine.getKey();
  state->triple = tm.getTargetTriple().str();
  state->chip = tm.getTargetCPU().str();
  state->features = tm.getTargetFeatureString().str();
  state->optLevel = tm.getOptLevel();
  state->context = std::make_unique<llvm::LLVMContext>();
  state->context->setDiagnosticHandler(
      std::make_unique<DiagnosticsSeen>(state->diagnosed));
  state->module =
      readShared(sharing, *state->context, variant.getModuleIdentifier(), {});
  LentTargetMachine own = lendMachineOf(*state);
  if (!state->module || !own)
    return nullptr;
  state->machine.emplace(std::move(own));
  std::optional<llvm::TimeTraceScope> step(std::in_place, "Compile to the cut");
  CodegenCut::Whole cut =
      CodegenCut::compileKeeping(*state->machine->get(), *state->module,
                                 kCutPass, kMaxKeptBytes, /*toAssembly=*/false);
  step.emplace("Make the cut portable");
  size_t bytes = cut.cut ? cut.cut->getBytes() : 0;
  bool portable = cut.cut && !state->diagnosed && cut.cut->makePortable();
  step.reset();
  if (!portable || !pool().reserve(bytes)) {
    pool().refuse(sharing.optimized);
    return nullptr;
  }
  state->bytes = bytes;
  state->cut = std::move(cut.cut);
  ++cuts;
  if (!check)
    return state;
  std::string key = elsewhereKey(state->target);
  std::string cutKey = elsewhereKey(state->target, /*fromCut=*/true);
  if (!pool().isTargetFaithful(key) && pool().claimCheck(key))
    *check = std::make_shared<ReferenceCheck>(key);
  bool checkCut = !pool().isTargetFaithful(cutKey) && pool().claimCheck(cutKey);
  if (*check || checkCut) {
    std::shared_ptr<ReferenceCheck> reference = *check;
    std::string identifier = variant.getModuleIdentifier();
    if (checks) {
      ++checksBeside;
      checks->threads.emplace_back(
          [reference, checkCut, sharing, state, identifier] {
            FatalErrorsUnwindCrashRecovery fatalErrors;
            TimeTraceThreadScope threadTrace;
            llvm::TimeTraceScope task("Continuation check",
                                      "elsewhere, the whole compile");
            offerReference(reference, checkCut, sharing, *state, identifier,
                           sharing.hints);
          });
    } else {
      *checkHere = [reference, checkCut, sharing, state, identifier] {
        offerReference(reference, checkCut, sharing, *state, identifier,
                       sharing.hints);
      };
    }
  }
  pool().addPortable(state);
  return state;
}

/// codegenSharingRocdl where variants continue elsewhere.
std::optional<RocdlSharedIsa> codegenElsewhere(const RocdlSharing &sharing,
                                               llvm::LLVMContext &context,
                                               const llvm::Module &module,
                                               LentTargetMachine &machine,
                                               ChecksBeside *checks) {
  const RocdlOptimizedModule *optimized = sharing.optimized.get();
  // A target where continuing elsewhere was found not to give the whole
  // compile's ISA makes no more states.
  std::optional<bool> faithful =
      pool().isTargetFaithful(elsewhereKey(machine.getKey()));
  if (faithful && !*faithful) {
    ++refusedVariants;
    return std::nullopt;
  }
  std::shared_ptr<CutState> state = pool().takePortable(optimized);
  // One being made: compiled whole rather than waiting for it. Its maker
  // holds the sweep back meanwhile, so only a thread with nothing else to
  // take, or one that started beside the maker, gets here.
  if (!state && pool().isKeeping(optimized)) {
    ++wholeWhileStateMade;
    return std::nullopt;
  }
  std::shared_ptr<ReferenceCheck> check;
  if (!state) {
    if (pool().isRefused(optimized)) {
      ++refusedModules;
      return std::nullopt;
    }
    if (!isCuttable(module, *machine.get()) ||
        CodegenCut::estimateLeastBytes(*machine.get(), module) >
            kMaxKeptBytes) {
      pool().refuse(sharing.optimized);
      ++refusedModules;
      return std::nullopt;
    }
    std::optional<VariantQueueCounts> queue = getCurrentVariantQueue();
    if (!pool().claimKeep(optimized, queue, /*oneIsEnough=*/true)) {
      ++notKept;
      return std::nullopt;
    }
    llvm::scope_exit claimed([&] { pool().keepDone(optimized); });
    ReleaseOnUnwind claimedOnUnwind(
        [optimized] { pool().keepDone(optimized); });
    // Alone in its sweep (a one-variant compile, a caller's loop of them):
    // compiled whole, its ISA kept as the reference of the check a later
    // variant makes, so a compile that stays alone pays only the state.
    if (queue && queue->notStarted == 0 && queue->running <= 1) {
      state = makeState(sharing, module, machine, checks, nullptr, nullptr);
      if (!state)
        return std::nullopt;
      std::optional<llvm::SmallString<0>> isa;
      {
        llvm::TimeTraceScope span("Whole code generation, kept at the cut");
        isa = compileWhole(const_cast<llvm::Module &>(module), *machine.get());
      }
      if (!isa)
        return std::nullopt;
      state->keptHints = sharing.hints;
      state->keptIsa = *isa;
      pool().addPortable(state);
      return RocdlSharedIsa{std::move(*isa), /*continued=*/false};
    }
    std::function<void()> checkHere;
    {
      HeldBackSweep held;
      state = makeState(sharing, module, machine, checks, &check, &checkHere);
    }
    if (checkHere)
      checkHere();
  }
  if (!state)
    return std::nullopt;
  letGoOpeningHold();
  std::optional<llvm::SmallString<0>> isa =
      continueElsewhereFrom(*state, sharing, context, *machine.get(), check);
  if (!isa) {
    ++refusedVariants;
    return std::nullopt;
  }
  ++continued;
  ++continuedElsewhere;
  return RocdlSharedIsa{std::move(*isa), /*continued=*/true};
}
} // namespace

RocdlSharedCodegenStats getRocdlSharedCodegenStats() {
  return {cuts.load(),
          continued.load(),
          refusedModules.load(),
          refusedVariants.load(),
          probes.load(),
          widenedProbes.load(),
          continuedEarly.load(),
          notKept.load(),
          awaitedChecks.load(),
          checksBeside.load(),
          continuedElsewhere.load(),
          wholeWhileStateMade.load(),
          continuedElsewhereFromCut.load()};
}

void setRocdlSharedCodegenTestHooks(RocdlSharedCodegenTestHooks hooks) {
  getTestHooks() = std::move(hooks);
}

void setRocdlKeepForLaterSweeps(bool keep) { keepForLaterSweeps = keep; }

bool rocdlSweepsOpenWithAState() {
  return continuesElsewhere() &&
         getRocdlSharedCodegenMode() != RocdlSharedCodegenMode::Off;
}

RocdlSharedCodegenMode getRocdlSharedCodegenMode() {
  std::optional<std::string> value =
      getEnvFlagOrWord("FLY_ROCDL_CODEGEN_CUT", "verify");
  if (!value || *value == "1")
    return RocdlSharedCodegenMode::On;
  return *value == "0" ? RocdlSharedCodegenMode::Off
                       : RocdlSharedCodegenMode::Verify;
}

std::optional<RocdlSharedIsa>
codegenSharingRocdl(const RocdlSharing &sharing,
                    std::unique_ptr<llvm::LLVMContext> &context,
                    std::unique_ptr<llvm::Module> &module,
                    std::optional<LentTargetMachine> &machine) {
  // Whatever it returns, this variant knows by then what it continues from;
  // codegenElsewhere lets go sooner where it can.
  llvm::scope_exit opened([] { letGoOpeningHold(); });
  if (!sharing.optimized || !sharing.optimized->eligible || !context ||
      !module || !machine || !*machine ||
      getRocdlSharedCodegenMode() == RocdlSharedCodegenMode::Off)
    return std::nullopt;
  if (isLlvmCompileObserved(*context))
    return std::nullopt;
  // Joined before this variant returns, whatever it returns.
  ChecksBeside checks;
  ChecksBeside *beside = checksGoBeside() ? &checks : nullptr;
  if (continuesElsewhere())
    return codegenElsewhere(sharing, *context, *module, *machine, beside);
  // Each idle state once, until one has this variant's pressure limits.
  bool refused = false;
  llvm::SmallVector<const CutState *> tried;
  // The check this variant last handed a state to: while it runs, the
  // variant waits for a state to be given back (that one at the latest)
  // rather than compile whole.
  std::optional<std::string> handedCheck;
  for (;;) {
    std::shared_ptr<CutState> state =
        pool().take(sharing.optimized.get(), tried, refused);
    if (!state && handedCheck) {
      llvm::TimeTraceScope span("Wait for a kept state");
      state = pool().takeOnceIdle(sharing.optimized.get(), tried, *handedCheck,
                                  refused);
      handedCheck.reset();
    }
    if (!state)
      break;
    tried.push_back(state.get());
    CodegenCut::Refusal refusal;
    bool diagnosed;
    std::optional<std::string> handedTo;
    std::optional<llvm::SmallString<0>> isa = continueState(
        std::move(state), sharing, refusal, diagnosed, beside, handedTo);
    if (isa) {
      ++continued;
      return RocdlSharedIsa{std::move(*isa), /*continued=*/true};
    }
    if (handedTo) {
      // The check gives it back after a yes: it may serve this variant then.
      tried.pop_back();
      handedCheck = std::move(handedTo);
      continue;
    }
    if (diagnosed || refusal != CodegenCut::Refusal::PressureLimits) {
      ++refusedVariants;
      return std::nullopt;
    }
  }
  // Other pressure limits than every kept compile's: this variant may be
  // kept with its own.
  if (!tried.empty())
    ++refusedVariants;
  llvm::TargetMachine &tm = *machine->get();
  if (refused || !isCuttable(*module, tm) ||
      CodegenCut::estimateLeastBytes(tm, *module) > kMaxKeptBytes) {
    if (!refused)
      pool().refuse(sharing.optimized);
    ++refusedModules;
    return std::nullopt;
  }
  if (!mayKeep(sharing.hints))
    return std::nullopt;
  // Keeping costs 5-10 % of the compile and its memory stays: only for
  // variants to come.
  const RocdlOptimizedModule *optimized = sharing.optimized.get();
  if (!pool().claimKeep(optimized, getCurrentVariantQueue())) {
    ++notKept;
    return std::nullopt;
  }
  llvm::scope_exit claimed([&] { pool().keepDone(optimized); });
  ReleaseOnUnwind claimedOnUnwind([optimized] { pool().keepDone(optimized); });

  // Compiled whole, the machine functions kept at the cut.
  bool seen = false;
  context->setDiagnosticHandler(std::make_unique<DiagnosticsNoted>(
      context->getDiagnosticHandler(), seen));
  CodegenCut::Whole whole = [&] {
    llvm::TimeTraceScope span("Whole code generation, kept at the cut");
    return CodegenCut::compileKeeping(tm, *module, kCutPass, kMaxKeptBytes);
  }();
  std::unique_ptr<llvm::DiagnosticHandler> noted =
      context->getDiagnosticHandler();
  // The caller's handler back, unless the context becomes a kept state's.
  llvm::scope_exit giveBack([&] {
    context->setDiagnosticHandler(
        std::move(static_cast<DiagnosticsNoted &>(*noted).inner));
  });
  if (!whole.assembly)
    return std::nullopt;
  RocdlSharedIsa result{std::move(*whole.assembly), /*continued=*/false};
  if (!whole.cut || seen) {
    if (!whole.cut)
      pool().refuse(sharing.optimized);
    return result;
  }
  const std::string &target = machine->getKey();
  std::optional<bool> faithful =
      pool().isTargetFaithful(checkKey(target, /*early=*/false));
  if (faithful && !*faithful) {
    pool().refuse(sharing.optimized);
    return result;
  }
  // A variant no kept state served for its pressure limits: where it made
  // the functions as they did, they serve its limits from now on too.
  if (!tried.empty())
    pool().widenIdle(sharing.optimized.get(), whole.cut->getTrace());
  // Kept only within the budget, the least recently used idle states out.
  size_t bytes = whole.cut->getBytes();
  if (!pool().reserve(bytes))
    return result;
  giveBack.release();
  auto state = std::make_shared<CutState>();
  state->optimized = sharing.optimized;
  state->unhinted = sharing.hints.empty();
  state->target = target;
  state->cut = std::move(whole.cut);
  // For the checks of its target still to be made (isFaithful).
  if (!faithful || !pool().isTargetFaithful(checkKey(target, /*early=*/true))) {
    state->keptHints = sharing.hints;
    state->keptIsa = result.isa;
  }
  state->machine.emplace(std::move(*machine));
  machine.reset();
  state->context = std::move(context);
  state->module = std::move(module);
  state->bytes = bytes;
  state->context->setDiagnosticHandler(
      std::make_unique<DiagnosticsSeen>(state->diagnosed));
  ++cuts;
  pool().give(std::move(state));
  return result;
}

} // namespace fly
