//===- ApplyHints.cpp - Write hints onto a gpu.module clone ---------------===//

#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/BackendOpts.h"
#include "fly/Hints/TargetChips.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/STLExtras.h"

#include <atomic>

using namespace mlir;
using llvm::StringRef;

namespace fly {

TargetFamily getTargetFamily(Attribute target) {
  if (isa<ROCDL::ROCDLTargetAttr>(target))
    return TargetFamily::ROCDL;
  if (isa<NVVM::NVVMTargetAttr>(target))
    return TargetFamily::NVVM;
  return TargetFamily::Other;
}

StringRef stringifyTargetFamily(TargetFamily family) {
  switch (family) {
  case TargetFamily::ROCDL:
    return "rocdl";
  case TargetFamily::NVVM:
    return "nvvm";
  case TargetFamily::Other:
    return "other";
  }
  llvm_unreachable("unknown target family");
}

namespace {
/// Which target families a named hint applies to.
struct HintRule {
  StringRef name;
  bool rocdl, nvvm;
  int64_t nvvmMax; // Tighter NVVM bound, 0 when none.
};
} // namespace

static constexpr HintRule kRules[] = {
    {"waves_per_eu", true, false, 0},
    {"maxnreg", true, true, 255},
    {"O", true, true, 0},
    {"fast_fp_math", true, true, 0},
    {"unsafe_fp_math", true, true, 0},
};

static const HintRule *findRule(StringRef key) {
  for (const HintRule &rule : kRules)
    if (rule.name == key)
      return &rule;
  return nullptr;
}

SmallVector<TargetFamily> getTargetFamilies(gpu::GPUModuleOp gpuModule) {
  SmallVector<TargetFamily> families;
  if (ArrayAttr targets = gpuModule.getTargetsAttr())
    for (Attribute target : targets)
      families.push_back(getTargetFamily(target));
  return families;
}

bool isNvvmOnly(ArrayRef<TargetFamily> families) {
  return !families.empty() && llvm::all_of(families, [](TargetFamily f) {
    return f == TargetFamily::NVVM;
  });
}

static std::atomic<uint64_t> hintChecks{0};

uint64_t getHintCheckCount() { return hintChecks.load(); }

bool targetMatchesSelector(Attribute target, StringRef selector) {
  if (selector.empty())
    return true;
  TargetFamily family = getTargetFamily(target);
  if (family == TargetFamily::Other)
    return false;
  return selector == stringifyTargetFamily(family) ||
         selector == getTargetChip(target);
}

/// The families of the targets of `gpuModule` that `selector` picks.
static SmallVector<TargetFamily> getSelectedFamilies(gpu::GPUModuleOp gpuModule,
                                                     StringRef selector) {
  SmallVector<TargetFamily> families;
  if (ArrayAttr targets = gpuModule.getTargetsAttr())
    for (Attribute target : targets)
      if (targetMatchesSelector(target, selector))
        families.push_back(getTargetFamily(target));
  return families;
}

/// Whether `selector` picks a target of any gpu.module beside (or in)
/// `gpuModule`: a selector for a chip that only another gpu.module targets
/// is fine, one that nothing targets is a typo.
static bool selectorMatchesAnywhere(gpu::GPUModuleOp gpuModule,
                                    StringRef selector) {
  Operation *parent = gpuModule->getParentOp();
  if (!parent)
    return !getSelectedFamilies(gpuModule, selector).empty();
  for (Region &region : parent->getRegions())
    for (auto sibling : region.getOps<gpu::GPUModuleOp>())
      if (!getSelectedFamilies(sibling, selector).empty())
        return true;
  return false;
}

static Attribute rewriteTarget(Attribute target, const HintSet &hints,
                               bool optsIntoTarget);
static bool optsGoIntoTarget(ArrayRef<TargetFamily> families, StringRef opts);

LogicalResult verifyHintsApply(gpu::GPUModuleOp gpuModule,
                               const HintSet &hints) {
  ++hintChecks;
  if (failed(verifyTargetChips(gpuModule)))
    return failure();
  auto hintError = [&](StringRef key) {
    return emitError(gpuModule.getLoc())
           << "hint '" << key << "' (hint set '" << hints.canonical() << "') ";
  };
  for (const auto &[fullKey, value] : hints.entries()) {
    std::optional<HintName> name = splitHintName(fullKey);
    if (!name)
      return hintError(fullKey) << "has a malformed target selector";
    StringRef key = name->base;
    if (!name->selector.empty() &&
        !selectorMatchesAnywhere(gpuModule, name->selector))
      return hintError(fullKey)
             << "selects '" << name->selector
             << "', which is neither a family (rocdl, nvvm) nor the chip of "
                "any target of this module";
    SmallVector<TargetFamily> families =
        getSelectedFamilies(gpuModule, name->selector);
    if (key == "target.chip")
      for (TargetFamily family : families)
        if (family != TargetFamily::Other && !isKnownChip(family, value))
          return hintError(fullKey)
                 << "names chip '" << value << "', which LLVM's "
                 << (family == TargetFamily::ROCDL ? "AMDGPU" : "NVPTX")
                 << " backend does not know; " << suggestChips(family, value);
    if (const HintRule *rule = findRule(key)) {
      for (TargetFamily family : families) {
        bool applies = (family == TargetFamily::ROCDL && rule->rocdl) ||
                       (family == TargetFamily::NVVM && rule->nvvm);
        if (!applies) {
          std::string accepted;
          if (rule->rocdl)
            accepted += "rocdl";
          if (rule->nvvm)
            accepted += accepted.empty() ? "nvvm" : ", nvvm";
          return hintError(fullKey)
                 << "does not apply to a " << stringifyTargetFamily(family)
                 << " target; it is accepted for: " << accepted;
        }
        int64_t n = 0;
        if (family == TargetFamily::NVVM && rule->nvvmMax &&
            !StringRef(value).getAsInteger(10, n) && n > rule->nvvmMax)
          return hintError(fullKey)
                 << "= " << n << " exceeds the NVVM limit of " << rule->nvvmMax;
      }
      continue;
    }
    StringRef keyRef(key);
    if (keyRef.starts_with("func.")) {
      // The parser's complaint goes into this hint's error: on its own it
      // would be a second error located in no file.
      std::string parseError;
      Attribute attr;
      {
        ScopedDiagnosticHandler quiet(gpuModule.getContext(),
                                      [&](Diagnostic &diag) {
                                        if (parseError.empty())
                                          parseError = diag.str();
                                        return success();
                                      });
        attr = parseAttribute(value, gpuModule.getContext());
      }
      if (!attr) {
        InFlightDiagnostic diag =
            hintError(fullKey)
            << "has a value that is not an MLIR attribute: '" << value << "'";
        if (!parseError.empty())
          diag << " (" << parseError << ")";
        return diag;
      }
      continue;
    }
    if (keyRef == "target.abi")
      for (TargetFamily family : families)
        if (family != TargetFamily::ROCDL)
          return hintError(fullKey) << "applies to rocdl targets only";
    if (keyRef.starts_with("target."))
      for (TargetFamily family : families)
        if (family == TargetFamily::Other)
          return hintError(fullKey)
                 << "cannot rewrite this target attribute; only #rocdl.target "
                    "and #nvvm.target are supported";
  }
  // Two targets one hint set makes identical would compile the same object
  // twice under two names: almost always an unqualified target.chip.
  if (ArrayAttr targets = gpuModule.getTargetsAttr()) {
    bool optsIntoTarget = optsGoIntoTarget(getTargetFamilies(gpuModule),
                                           hints.lookup("opts").value_or(""));
    SmallVector<Attribute> rewritten;
    for (Attribute target : targets)
      rewritten.push_back(rewriteTarget(target, hints, optsIntoTarget));
    for (size_t i = 0; i < rewritten.size(); ++i)
      for (size_t j = i + 1; j < rewritten.size(); ++j)
        if (rewritten[i] == rewritten[j] && targets[i] != targets[j])
          return emitError(gpuModule.getLoc())
                 << "hint set '" << hints.canonical() << "' makes targets #"
                 << i << " (" << targets[i] << ") and #" << j << " ("
                 << targets[j] << ") of gpu.module @" << gpuModule.getName()
                 << " identical (" << rewritten[i]
                 << "): both would compile the same object; limit the hint "
                    "to one target, e.g. target["
                 << getTargetChip(targets[i]) << "].chip=...";
  }
  return success();
}

SmallVector<LLVM::LLVMFuncOp> getKernels(gpu::GPUModuleOp gpuModule) {
  SmallVector<LLVM::LLVMFuncOp> kernels;
  for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>())
    if (func->hasAttr(gpu::GPUDialect::getKernelFuncAttrName()) ||
        func->hasAttr("rocdl.kernel") || func->hasAttr("nvvm.kernel"))
      kernels.push_back(func);
  return kernels;
}

/// Sets (or with an empty value, sets as a bare key) one passthrough entry,
/// replacing an earlier entry of the same key.
static void setPassthrough(LLVM::LLVMFuncOp func, StringRef key,
                           StringRef value) {
  Builder b(func.getContext());
  SmallVector<Attribute> entries;
  if (ArrayAttr old = func.getPassthroughAttr())
    for (Attribute entry : old) {
      StringAttr entryKey = dyn_cast<StringAttr>(entry);
      if (auto pair = dyn_cast<ArrayAttr>(entry); pair && !pair.empty())
        entryKey = dyn_cast<StringAttr>(pair[0]);
      if (!entryKey || entryKey.getValue() != key)
        entries.push_back(entry);
    }
  if (value.empty())
    entries.push_back(b.getStringAttr(key));
  else
    entries.push_back(
        b.getArrayAttr({b.getStringAttr(key), b.getStringAttr(value)}));
  func.setPassthroughAttr(b.getArrayAttr(entries));
}

static DictionaryAttr setFlag(MLIRContext *ctx, DictionaryAttr flags,
                              StringRef name, bool on) {
  NamedAttrList list(flags);
  if (on)
    list.set(name, UnitAttr::get(ctx));
  else
    list.erase(name);
  return list.getDictionary(ctx);
}

/// The fields of a target attribute fly may rewrite.
namespace {
struct TargetFields {
  int optLevel;
  std::string triple, chip, features, abi;
  DictionaryAttr flags;
};
} // namespace

/// Upstream appends an NVVM target's flags["ptxas-cmd-options"] to ptxas's
/// command line right after the pass's `opts`, so on NVVM-only modules the
/// `opts` hint can live in the IR: variants that differ only in ptxas
/// options then share one binary pass instance (and one batch). `-32` is
/// the exception: upstream routes it to fatbinary, from `opts` only.
static bool optsGoIntoTarget(ArrayRef<TargetFamily> families, StringRef opts) {
  return isNvvmOnly(families) &&
         !llvm::is_contained(tokenizeBinaryOpts(opts), "-32");
}

static DictionaryAttr appendPtxasOptions(MLIRContext *ctx, DictionaryAttr flags,
                                         StringRef opts) {
  NamedAttrList list(flags);
  SmallVector<Attribute> options;
  if (auto old = dyn_cast_or_null<ArrayAttr>(list.get("ptxas-cmd-options")))
    llvm::append_range(options, old);
  for (const std::string &token : tokenizeBinaryOpts(opts))
    options.push_back(StringAttr::get(ctx, token));
  list.set("ptxas-cmd-options", ArrayAttr::get(ctx, options));
  return list.getDictionary(ctx);
}

static Attribute rewriteTarget(Attribute target, const HintSet &hints,
                               bool optsIntoTarget) {
  MLIRContext *ctx = target.getContext();
  TargetFamily family = getTargetFamily(target);
  TargetFields f;
  ArrayAttr link;
  bool verifyTarget = true;
  if (auto rocdl = dyn_cast<ROCDL::ROCDLTargetAttr>(target)) {
    f = {rocdl.getO(),          rocdl.getTriple().str(),
         rocdl.getChip().str(), rocdl.getFeatures().str(),
         rocdl.getAbi().str(),  rocdl.getFlags()};
    link = rocdl.getLink();
  } else if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target)) {
    f = {nvvm.getO(),
         nvvm.getTriple().str(),
         nvvm.getChip().str(),
         nvvm.getFeatures().str(),
         "",
         nvvm.getFlags()};
    link = nvvm.getLink();
    verifyTarget = nvvm.getVerifyTarget();
  } else {
    return target;
  }
  for (const auto &[key, value] : hints.entries()) {
    std::optional<HintName> name = splitHintName(key);
    if (!name || !targetMatchesSelector(target, name->selector))
      continue;
    StringRef k(name->base);
    if (k == "O" || k == "target.O")
      f.optLevel = std::stoi(value);
    else if (k == "fast_fp_math")
      f.flags = setFlag(ctx, f.flags, "fast", value == "1");
    else if (k == "unsafe_fp_math")
      f.flags = setFlag(ctx, f.flags,
                        family == TargetFamily::ROCDL ? "unsafe-math" : "ftz",
                        value == "1");
    else if (k == "target.triple")
      f.triple = value;
    else if (k == "target.chip")
      f.chip = value;
    else if (k == "target.features")
      f.features = value;
    else if (k == "target.abi")
      f.abi = value;
    else if (k == "opts" && optsIntoTarget)
      f.flags = appendPtxasOptions(ctx, f.flags, value);
  }
  if (f.flags && f.flags.empty())
    f.flags = nullptr;
  if (family == TargetFamily::ROCDL)
    return ROCDL::ROCDLTargetAttr::get(ctx, f.optLevel, f.triple, f.chip,
                                       f.features, f.abi, f.flags, link);
  return NVVM::NVVMTargetAttr::get(ctx, f.optLevel, f.triple, f.chip,
                                   f.features, f.flags, link, verifyTarget);
}

std::string getBinaryOptsHint(const HintSet &hints,
                              ArrayRef<gpu::GPUModuleOp> gpuModules) {
  StringRef opts = hints.lookup("opts").value_or("");
  if (opts.empty())
    return "";
  SmallVector<TargetFamily> families;
  for (gpu::GPUModuleOp gpuModule : gpuModules)
    llvm::append_range(families, getTargetFamilies(gpuModule));
  return optsGoIntoTarget(families, opts) ? "" : opts.str();
}

std::string getIgnoredRocdlOptsWarning(StringRef rocdlOpts) {
  if (rocdlOpts.trim().empty())
    return "";
  return ("hint 'opts=" + rocdlOpts.trim() +
          "' has no effect on a #rocdl.target: upstream ROCDL serialization "
          "ignores gpu-module-to-binary's opts; use hints that go into the "
          "IR instead (waves_per_eu=, maxnreg=, passthrough.<fn-attr>=, "
          "func.<attr>=)")
      .str();
}

LogicalResult applyHints(gpu::GPUModuleOp gpuModule, const HintSet &hints) {
  if (failed(verifyHintsApply(gpuModule, hints)))
    return failure();
  applyVerifiedHints(gpuModule, hints);
  return success();
}

void applyVerifiedHints(gpu::GPUModuleOp gpuModule, const HintSet &hints) {
  MLIRContext *ctx = gpuModule.getContext();
  Builder b(ctx);
  SmallVector<TargetFamily> families = getTargetFamilies(gpuModule);
  bool isROCDL = llvm::is_contained(families, TargetFamily::ROCDL);
  bool isNVVM = llvm::is_contained(families, TargetFamily::NVVM);
  SmallVector<LLVM::LLVMFuncOp> kernels = getKernels(gpuModule);

  for (const auto &[key, value] : hints.entries()) {
    StringRef k(key);
    if (k == "waves_per_eu") {
      for (LLVM::LLVMFuncOp kernel : kernels) {
        if (value == "0")
          kernel->removeAttr("rocdl.waves_per_eu");
        else
          kernel->setAttr("rocdl.waves_per_eu",
                          b.getI32IntegerAttr(std::stoi(value)));
      }
    } else if (k == "maxnreg") {
      for (LLVM::LLVMFuncOp kernel : kernels) {
        if (isROCDL)
          setPassthrough(kernel, "amdgpu-num-vgpr", value);
        if (isNVVM)
          kernel->setAttr("nvvm.maxnreg",
                          b.getI32IntegerAttr(std::stoi(value)));
      }
    } else if (k.consume_front("func.")) {
      Attribute attr = parseAttribute(value, ctx);
      for (LLVM::LLVMFuncOp kernel : kernels)
        kernel->setAttr(k, attr);
    } else if (k.consume_front("passthrough.")) {
      for (LLVM::LLVMFuncOp kernel : kernels)
        setPassthrough(kernel, k, value);
    }
  }

  if (ArrayAttr targets = gpuModule.getTargetsAttr()) {
    SmallVector<Attribute> rewritten;
    bool optsIntoTarget =
        optsGoIntoTarget(families, hints.lookup("opts").value_or(""));
    for (Attribute target : targets)
      rewritten.push_back(rewriteTarget(target, hints, optsIntoTarget));
    gpuModule.setTargetsAttr(b.getArrayAttr(rewritten));
  }
}

} // namespace fly
