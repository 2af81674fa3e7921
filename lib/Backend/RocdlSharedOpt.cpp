//===- RocdlSharedOpt.cpp - One optimizeModule for ROCDL variants ---------===//

#include "fly/Backend/RocdlSharedOpt.h"
#include "CompileObserved.h"
#include "NewestEntries.h"
#include "Support/Environment.h"
#include "Support/FatalErrors.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/CallingConv.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace mlir;
using llvm::StringRef;

namespace fly {

/// The function attributes the register hints become (HintRegistry.cpp:
/// waves_per_eu, maxnreg and passthrough.<one of these>).
static constexpr StringRef kRegisterHints[] = {
    "amdgpu-waves-per-eu", "amdgpu-num-vgpr", "amdgpu-num-sgpr"};

llvm::ArrayRef<StringRef> getRocdlRegisterHintAttributes() {
  return kRegisterHints;
}

namespace {

using RegisterHints = std::vector<RocdlRegisterHint>;
using Optimized = RocdlOptimizedModule;

/// The optimised modules of this process, by target and unhinted bitcode.
/// A few only (a sweep compiles one kernel at a time): at most kMaxEntries,
/// and at most kMaxBytes of keys and modules, oldest out first.
class Table {
public:
  /// The entry of `key`; while another thread optimises it, waits for that
  /// (at most kWait, a backstop: a thread that a fatal error or a crash
  /// takes off its way abandons the entry as it unwinds). Null: no entry,
  /// and `claimed` says whether this thread is now the one to make it (and
  /// must insert() or abandon()).
  std::shared_ptr<const Optimized> lookup(const std::string &key,
                                          bool &claimed) {
    std::unique_lock<std::mutex> lock(mutex);
    claimed = false;
    auto deadline = std::chrono::steady_clock::now() + kWait;
    for (;;) {
      if (const auto *entry = entries.find(key))
        return *entry;
      if (!pending.count(key)) {
        pending.insert(key);
        claimed = true;
        return nullptr;
      }
      if (done.wait_until(lock, deadline) == std::cv_status::timeout) {
        pending.erase(key);
        return nullptr;
      }
    }
  }
  void abandon(const std::string &key) {
    std::lock_guard<std::mutex> lock(mutex);
    pending.erase(key);
    done.notify_all();
  }
  void insert(const std::string &key, std::shared_ptr<const Optimized> value) {
    std::lock_guard<std::mutex> lock(mutex);
    pending.erase(key);
    done.notify_all();
    size_t bytes = key.size() + value->bitcode.size();
    entries.insert(key, std::move(value), bytes);
  }

private:
  static constexpr std::chrono::seconds kWait{30};
  static constexpr size_t kMaxEntries = 8;
  static constexpr size_t kMaxBytes = size_t(64) << 20;
  std::mutex mutex;
  std::condition_variable done;
  std::set<std::string> pending;
  NewestEntries<std::string, std::shared_ptr<const Optimized>> entries{
      kMaxBytes, kMaxEntries};
};

Table &table() {
  static Table instance;
  return instance;
}

std::atomic<uint64_t> produced{0}, reused{0}, fallbacks{0};
} // namespace

RocdlSharedOptStats getRocdlSharedOptStats() {
  return {produced.load(), reused.load(), fallbacks.load()};
}

bool isRocdlSharedOptEnabled() {
  return getEnvFlag("FLY_ROCDL_SHARE_OPT").value_or(true);
}

static bool isKernel(const llvm::Function &f) {
  return f.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL;
}

static void writeBitcode(const llvm::Module &module,
                         llvm::SmallVectorImpl<char> &out) {
  llvm::raw_svector_ostream os(out);
  // The use-list order too: passes iterate users.
  llvm::WriteBitcodeToFile(module, os, /*ShouldPreserveUseListOrder=*/true);
}

static std::unique_ptr<llvm::Module> readBitcode(StringRef bitcode,
                                                 const llvm::Module &like) {
  llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, like.getModuleIdentifier()),
      like.getContext());
  if (!module) {
    llvm::consumeError(module.takeError());
    return nullptr;
  }
  return std::move(*module);
}

static void addHints(llvm::Module &module, const RegisterHints &hints) {
  for (const RocdlRegisterHint &hint : hints)
    module.getFunction(hint.function)->addFnAttr(hint.attribute, hint.value);
}

LogicalResult
optimizeSharingRocdl(std::unique_ptr<llvm::Module> &module, StringRef targetKey,
                     llvm::function_ref<LogicalResult(llvm::Module &)> optimize,
                     RocdlSharing *sharing) {
  if (!isRocdlSharedOptEnabled() || isLlvmCompileObserved(module->getContext()))
    return optimize(*module);
  auto alone = [&] {
    ++fallbacks;
    return optimize(*module);
  };
  // The conditions on the linked module: register hints on kernels only, and
  // no alloca (promoting one to vector registers reads the hints).
  RegisterHints hints;
  for (llvm::Function &f : *module) {
    for (StringRef name : kRegisterHints) {
      if (!f.hasFnAttribute(name))
        continue;
      if (!isKernel(f))
        return alone();
      hints.push_back({f.getName().str(), name,
                       f.getFnAttribute(name).getValueAsString().str()});
    }
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (llvm::isa<llvm::AllocaInst>(inst))
        return alone();
  }
  for (const RocdlRegisterHint &hint : hints)
    module->getFunction(hint.function)->removeFnAttr(hint.attribute);
  std::string key = (targetKey + StringRef("\0", 1)).str();
  size_t unhintedAt = key.size();
  {
    llvm::TimeTraceScope span("Key the shared optimisation");
    llvm::SmallVector<char, 0> bitcode;
    writeBitcode(*module, bitcode);
    key.append(bitcode.begin(), bitcode.end());
  }

  bool claimed = false;
  std::shared_ptr<const Optimized> found = [&] {
    llvm::TimeTraceScope span("Wait for the shared optimisation");
    return table().lookup(key, claimed);
  }();
  if (!found && !claimed) {
    addHints(*module, hints);
    return alone();
  }
  if (found) {
    llvm::TimeTraceScope span("Read the shared optimisation");
    std::unique_ptr<llvm::Module> copy =
        found->eligible ? readBitcode(StringRef(found->bitcode.data(),
                                                found->bitcode.size()),
                                      *module)
                        : nullptr;
    addHints(copy ? *copy : *module, hints);
    if (!copy)
      return alone();
    module = std::move(copy);
    ++reused;
    if (sharing)
      *sharing = {found, std::move(hints)};
    return success();
  }

  // A fatal error in `optimize`, or in writing what it made, abandons this
  // frame: the variants waiting for this entry go on at once.
  ReleaseOnUnwind abandoned([key] { table().abandon(key); });
  if (failed(optimize(*module))) {
    abandoned.unregister();
    table().abandon(key);
    return failure();
  }
  // AMDGPUAttributor gives a kernel's register hints to its callees and may
  // infer them: only kernels left, none with a hint, is what the hinted
  // modules' optimisation would have made of them too.
  auto result = std::make_shared<Optimized>();
  result->eligible = llvm::all_of(*module, [](const llvm::Function &f) {
    return f.isDeclaration() ||
           (isKernel(f) && llvm::none_of(kRegisterHints, [&](StringRef name) {
              return f.hasFnAttribute(name);
            }));
  });
  if (result->eligible)
    writeBitcode(*module, result->bitcode);
  abandoned.unregister();
  table().insert(key, result);
  if (result->eligible) {
    addHints(*module, hints);
    ++produced;
    if (sharing)
      *sharing = {result, std::move(hints)};
    return success();
  }
  // Optimised without this variant's hints: optimise the variant itself.
  std::unique_ptr<llvm::Module> unhinted =
      readBitcode(StringRef(key).drop_front(unhintedAt), *module);
  if (!unhinted)
    return failure();
  module = std::move(unhinted);
  addHints(*module, hints);
  return alone();
}

} // namespace fly
