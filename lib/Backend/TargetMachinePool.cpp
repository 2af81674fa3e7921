//===- TargetMachinePool.cpp - TargetMachines kept between variants -------===//

#include "fly/Backend/TargetMachinePool.h"
#include "Support/Environment.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <atomic>
#include <list>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

using llvm::StringRef;

namespace fly {

struct LentTargetMachine::Pristine {
  llvm::TargetOptions options;
  llvm::CodeGenOptLevel optLevel;
  bool o0WantsFastISel;

  explicit Pristine(llvm::TargetMachine &machine)
      : options(machine.Options), optLevel(machine.getOptLevel()),
        o0WantsFastISel(machine.getO0WantsFastISel()) {}
  void restore(llvm::TargetMachine &machine) const {
    machine.Options = options;
    machine.setOptLevel(optLevel);
    machine.setO0WantsFastISel(o0WantsFastISel);
  }
};

namespace {
struct Kept {
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<LentTargetMachine::Pristine> pristine;
};

/// Idle machines by target, the target last given one back first. Bounded:
/// a sweep compiles for one or two targets on at most a few dozen threads.
class Pool {
public:
  std::optional<Kept> take(const std::string &key) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = findKey(key);
    if (it == targets.end() || it->second.empty())
      return std::nullopt;
    Kept kept = std::move(it->second.back());
    it->second.pop_back();
    return kept;
  }
  void give(const std::string &key, Kept kept) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = findKey(key);
    if (it == targets.end()) {
      targets.emplace_front(key, std::vector<Kept>());
    } else {
      targets.splice(targets.begin(), targets, it);
    }
    std::vector<Kept> &idle = targets.front().second;
    if (idle.size() < maxIdlePerTarget())
      idle.push_back(std::move(kept));
    while (targets.size() > kMaxTargets)
      targets.pop_back();
  }

private:
  using Entry = std::pair<std::string, std::vector<Kept>>;
  std::list<Entry>::iterator findKey(const std::string &key) {
    return std::find_if(targets.begin(), targets.end(),
                        [&](const Entry &entry) { return entry.first == key; });
  }
  static size_t maxIdlePerTarget() {
    return std::max<size_t>(16, 2 * std::thread::hardware_concurrency());
  }
  static constexpr size_t kMaxTargets = 4;
  std::mutex mutex;
  std::list<Entry> targets;
};

/// Never destroyed: machines outlive any static destructor that could still
/// run LLVM code at exit.
Pool &pool() {
  static Pool *instance = new Pool();
  return *instance;
}

std::atomic<uint64_t> created{0}, reused{0}, discarded{0};

/// The function attributes TargetMachine::resetTargetOptions reads (LLVM 22
/// and the releases around it).
constexpr StringRef kResetAttributes[] = {
    "unsafe-fp-math", "no-infs-fp-math", "no-nans-fp-math",
    "no-signed-zeros-fp-math", "approx-func-fp-math"};
} // namespace

TargetMachinePoolStats getTargetMachinePoolStats() {
  return {created.load(), reused.load(), discarded.load()};
}

bool isTargetMachineReuseEnabled() {
  return getEnvFlag("FLY_ROCDL_REUSE_TM").value_or(true);
}

bool canKeptTargetMachineServe(const llvm::Module &module) {
  // A kept machine's subtarget was built under new TargetOptions; the
  // options resetTargetOptions derives from any of these functions are the
  // new ones only while none of them says "true" (Attribute::getValueAsBool).
  return llvm::all_of(module, [](const llvm::Function &function) {
    return llvm::none_of(kResetAttributes, [&](StringRef name) {
      return function.getFnAttribute(name).getValueAsString() == "true";
    });
  });
}

LentTargetMachine::LentTargetMachine(LentTargetMachine &&other) noexcept =
    default;

LentTargetMachine::~LentTargetMachine() {
  if (!machine)
    return;
  if (!keepIt) {
    ++discarded;
    return;
  }
  pool().give(key, Kept{std::move(machine), std::move(pristine)});
}

LentTargetMachine lendTargetMachine(StringRef triple, StringRef chip,
                                    StringRef features, bool onlyNew) {
  LentTargetMachine lent;
  lent.key =
      (triple + StringRef("\0", 1) + chip + StringRef("\0", 1) + features)
          .str();
  if (!onlyNew) {
    if (std::optional<Kept> kept = pool().take(lent.key)) {
      kept->pristine->restore(*kept->machine);
      lent.machine = std::move(kept->machine);
      lent.pristine = std::move(kept->pristine);
      ++reused;
      return lent;
    }
  }
  // As ModuleToObject::getOrCreateTargetMachine (LLVM 22).
  std::string error;
  llvm::Triple parsedTriple(triple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(parsedTriple, error);
  if (!target)
    return LentTargetMachine();
  lent.machine.reset(
      target->createTargetMachine(parsedTriple, chip, features, {}, {}));
  if (!lent.machine)
    return LentTargetMachine();
  lent.pristine = std::make_unique<LentTargetMachine::Pristine>(*lent.machine);
  lent.fresh = true;
  ++created;
  return lent;
}

} // namespace fly
