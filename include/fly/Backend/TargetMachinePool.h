//===- TargetMachinePool.h - Kept TargetMachines --------------*- C++ -*-===//
//
// A new llvm::TargetMachine builds its subtarget (for AMDGPU: instruction,
// register and lowering tables, the GlobalISel legalizer) on its first
// function, and its register info fills an alias cache lazily as code
// generation asks; upstream's ModuleToObject pays that once per
// serialization, so once per variant. The pool lends a machine for one
// serialization and takes it back only when that serialization returned
// normally, so a later variant of the same target (triple, chip, features)
// on any thread starts from the filled caches.
//
// Kept machines compile as new ones do because the state a compilation leaves
// on a machine is restored before the next: its TargetOptions (which code
// generation rewrites per function: resetTargetOptions, the instruction
// selector's choice), its opt level and O0 fast-ISel wish. What cannot be
// restored is the subtarget, built once under the TargetOptions that
// resetTargetOptions derived from the first function it served; so a kept
// machine only serves modules on which that derivation changes nothing (no
// function asks for unsafe, no-infs, no-nans, no-signed-zeros or approx-func
// FP math), and a machine that served any other module is not kept. The
// objects are byte-identical to upstream's (test/Tools/rocdl-target-machine-
// reuse.test compares them in several orders). Off with FLY_ROCDL_REUSE_TM=0.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_TARGETMACHINEPOOL_H
#define FLY_BACKEND_TARGETMACHINEPOOL_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace fly {

/// What the pool did in this process.
struct TargetMachinePoolStats {
  /// Machines created (for a lend that found none kept, or for a module a
  /// kept one may not serve).
  uint64_t created = 0;
  /// Lends served by a kept machine.
  uint64_t reused = 0;
  /// Machines not taken back: their serialization failed or ended early, or
  /// they served a module a kept machine may not serve.
  uint64_t discarded = 0;
};
TargetMachinePoolStats getTargetMachinePoolStats();

/// Whether machines are kept at all (FLY_ROCDL_REUSE_TM, default on).
bool isTargetMachineReuseEnabled();

/// Whether a machine that compiled other modules compiles `module` as a new
/// one would (see the header comment).
bool canKeptTargetMachineServe(const llvm::Module &module);

/// A machine lent for one serialization; back to the pool on keep(), else
/// destroyed with it.
class LentTargetMachine {
public:
  LentTargetMachine() = default;
  LentTargetMachine(LentTargetMachine &&other) noexcept;
  LentTargetMachine &operator=(LentTargetMachine &&other) = delete;
  ~LentTargetMachine();

  llvm::TargetMachine *get() const { return machine.get(); }
  explicit operator bool() const { return machine != nullptr; }
  /// Whether it compiled nothing before this lend.
  bool isNew() const { return fresh; }
  /// The triple, chip and features it was made for (what the pool keys by).
  const std::string &getKey() const { return key; }

  /// The serialization returned normally: the machine may serve another.
  void keep() { keepIt = true; }

  /// The state a compilation changes on the machine, as it was when new.
  struct Pristine;

private:
  friend LentTargetMachine lendTargetMachine(llvm::StringRef, llvm::StringRef,
                                             llvm::StringRef, bool);
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<Pristine> pristine;
  std::string key;
  bool fresh = false;
  bool keepIt = false;
};

/// A machine for `triple`, `chip`, `features` as ModuleToObject's
/// getOrCreateTargetMachine creates one (default options, relocation and code
/// model), kept or new (`onlyNew`: new); empty if the target is unknown or
/// refuses (upstream's call then says why).
LentTargetMachine lendTargetMachine(llvm::StringRef triple,
                                    llvm::StringRef chip,
                                    llvm::StringRef features,
                                    bool onlyNew = false);

} // namespace fly

#endif // FLY_BACKEND_TARGETMACHINEPOOL_H
