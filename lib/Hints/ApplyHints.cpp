//===- ApplyHints.cpp - Write hints onto a gpu.module clone ---------------===//

#include "fly/Hints/ApplyHints.h"
#include "Hints/TargetChips.h"
#include "fly/Hints/BackendOpts.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

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

SmallVector<TargetFamily> getTargetFamilies(gpu::GPUModuleOp gpuModule) {
  SmallVector<TargetFamily> families;
  if (ArrayAttr targets = gpuModule.getTargetsAttr())
    for (Attribute target : targets)
      families.push_back(getTargetFamily(target));
  return families;
}

bool anyTargetOf(ArrayRef<gpu::GPUModuleOp> gpuModules, TargetFamily family) {
  return llvm::any_of(gpuModules, [&](gpu::GPUModuleOp gpuModule) {
    return llvm::is_contained(getTargetFamilies(gpuModule), family);
  });
}

bool isNvvmOnly(ArrayRef<TargetFamily> families) {
  return !families.empty() && llvm::all_of(families, [](TargetFamily f) {
    return f == TargetFamily::NVVM;
  });
}

bool isRocdlOnly(ArrayRef<TargetFamily> families) {
  return !families.empty() && llvm::all_of(families, [](TargetFamily f) {
    return f == TargetFamily::ROCDL;
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

/// Parses the literal of an attribute hint. With `error`, the parser's
/// complaint goes there instead of to the context's handlers (only when
/// checking: a handler would also take other threads' diagnostics).
static Attribute parseHintAttribute(MLIRContext *ctx, StringRef literal,
                                    std::string *error = nullptr) {
  if (!error)
    return parseAttribute(literal, ctx);
  ScopedDiagnosticHandler quiet(ctx, [&](Diagnostic &diag) {
    if (error->empty())
      *error = diag.str();
    return success();
  });
  return parseAttribute(literal, ctx);
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
  for (const TypedHint &hint : hints.hints()) {
    const HintSpec &spec = *hint.spec;
    if (!hint.selector.empty() &&
        !selectorMatchesAnywhere(gpuModule, hint.selector))
      return hintError(hint.key)
             << "selects '" << hint.selector
             << "', which is neither a family (rocdl, nvvm) nor the chip of "
                "any target of this module";
    for (TargetFamily family : getSelectedFamilies(gpuModule, hint.selector)) {
      HintFamilyUse use = spec.getUse(family);
      if (!use.applies)
        return hintError(hint.key)
               << "does not apply to a " << stringifyTargetFamily(family)
               << " target; it is accepted for: " << spec.listFamilies();
      if (use.max && spec.type == HintType::Int &&
          hint.value.getInt() > use.max)
        return hintError(hint.key)
               << "= " << hint.value.getInt() << " exceeds the "
               << stringifyTargetFamily(family).upper() << " limit of "
               << use.max;
      if (spec.checkForFamily) {
        std::string problem = spec.checkForFamily(family, hint);
        if (!problem.empty())
          return hintError(hint.key) << problem;
      }
    }
    if (spec.type == HintType::Attribute) {
      // The parser's complaint goes into this hint's error: on its own it
      // would be a second error located in no file.
      std::string parseError;
      if (!parseHintAttribute(gpuModule.getContext(), hint.value.getText(),
                              &parseError)) {
        InFlightDiagnostic diag = hintError(hint.key)
                                  << "has a value that is not an MLIR "
                                     "attribute: '"
                                  << hint.value.getText() << "'";
        if (!parseError.empty())
          diag << " (" << parseError << ")";
        return diag;
      }
    }
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

/// The key of a passthrough entry: "key" or ["key", "value"] (null if
/// neither).
static StringAttr getPassthroughKey(Attribute entry) {
  if (auto pair = dyn_cast<ArrayAttr>(entry); pair && !pair.empty())
    return dyn_cast<StringAttr>(pair[0]);
  return dyn_cast<StringAttr>(entry);
}

SmallVector<LLVM::LLVMFuncOp> getKernels(gpu::GPUModuleOp gpuModule) {
  SmallVector<LLVM::LLVMFuncOp> kernels;
  for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>())
    if (func->hasAttr(gpu::GPUDialect::getKernelFuncAttrName()) ||
        func->hasAttr("rocdl.kernel") || func->hasAttr("nvvm.kernel"))
      kernels.push_back(func);
  return kernels;
}

/// The chips on which "amdgpu-num-vgpr" of 256 or more gives a kernel the
/// VGPR budget it has without the attribute: their most is 256 (512 with
/// the unified register file of gfx90a and later CDNA, where
/// GCNSubtarget::getBaseMaxNumVGPRs doubles the request) and the request is
/// clamped to it. Not gfx1250, whose kernels address 1024. Each is in
/// test/Bench/num-vgpr-default.test.
static bool isVgprBudgetAtMost256(StringRef chip) {
  return llvm::is_contained({"gfx906", "gfx908", "gfx90a", "gfx942", "gfx950",
                             "gfx1030", "gfx1100", "gfx1101", "gfx1102",
                             "gfx1151", "gfx1200", "gfx1201"},
                            chip);
}

/// Whether a passthrough "amdgpu-num-vgpr" entry asks for at least 256
/// VGPRs, read as getFnAttributeAsParsedInteger does (radix 0, untrimmed);
/// values far above any budget are left alone (the backend narrows them to
/// unsigned and doubles them).
static bool requestsAtLeast256Vgprs(Attribute entry) {
  StringAttr key = getPassthroughKey(entry);
  auto pair = dyn_cast<ArrayAttr>(entry);
  if (!key || key.getValue() != "amdgpu-num-vgpr" || !pair || pair.size() != 2)
    return false;
  auto value = dyn_cast<StringAttr>(pair[1]);
  uint64_t vgprs;
  return value && !value.getValue().getAsInteger(0, vgprs) && vgprs >= 256 &&
         vgprs <= 65536;
}

void dropBackendDefaults(gpu::GPUModuleOp gpuModule) {
  if (!isRocdlOnly(getTargetFamilies(gpuModule)))
    return;
  bool vgprBudgetAtMost256 =
      llvm::all_of(gpuModule.getTargetsAttr(), [](Attribute target) {
        return isVgprBudgetAtMost256(getTargetChip(target));
      });
  ROCDL::ROCDLDialect::WavesPerEuAttrHelper wavesPerEu(gpuModule.getContext());
  for (LLVM::LLVMFuncOp kernel : getKernels(gpuModule)) {
    ArrayAttr passthrough = kernel.getPassthroughAttr();
    if (vgprBudgetAtMost256 && passthrough &&
        llvm::any_of(passthrough, requestsAtLeast256Vgprs)) {
      SmallVector<Attribute> kept;
      llvm::copy_if(passthrough, std::back_inserter(kept),
                    [](Attribute e) { return !requestsAtLeast256Vgprs(e); });
      if (kept.empty())
        kernel.setPassthroughAttr(nullptr);
      else
        kernel.setPassthroughAttr(ArrayAttr::get(kernel.getContext(), kept));
      passthrough = kernel.getPassthroughAttr();
    }
    // Translated as std::to_string(getInt()): i1 `true` would read -1.
    IntegerAttr value = wavesPerEu.getAttr(kernel);
    if (!value || !value.getType().isSignlessInteger() || value.getInt() != 1)
      continue;
    // The translation writes it over a passthrough "amdgpu-waves-per-eu",
    // which without it would reach LLVM.
    if (passthrough && llvm::any_of(passthrough, [](Attribute entry) {
          StringAttr key = getPassthroughKey(entry);
          return key && key.getValue() == "amdgpu-waves-per-eu";
        }))
      continue;
    wavesPerEu.removeAttr(kernel);
  }
}

void KernelHintSite::setAttr(StringRef name, Attribute value) const {
  for (LLVM::LLVMFuncOp kernel : kernels)
    kernel->setAttr(name, value);
}

void KernelHintSite::setI32(StringRef name, int64_t value) const {
  if (kernels.empty())
    return;
  LLVM::LLVMFuncOp first = kernels.front();
  setAttr(name, Builder(first.getContext()).getI32IntegerAttr(value));
}

void KernelHintSite::removeAttr(StringRef name) const {
  for (LLVM::LLVMFuncOp kernel : kernels)
    kernel->removeAttr(name);
}

void KernelHintSite::setPassthrough(StringRef key, StringRef value) const {
  for (LLVM::LLVMFuncOp func : kernels) {
    Builder b(func.getContext());
    SmallVector<Attribute> entries;
    if (ArrayAttr old = func.getPassthroughAttr())
      for (Attribute entry : old) {
        StringAttr entryKey = getPassthroughKey(entry);
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
}

void TargetFields::setFlag(StringRef name, bool on) {
  NamedAttrList list(flags);
  if (on)
    list.set(name, UnitAttr::get(context));
  else
    list.erase(name);
  flags = list.getDictionary(context);
}

void TargetFields::appendPtxasOptions(StringRef opts) {
  NamedAttrList list(flags);
  SmallVector<Attribute> options;
  if (auto old = dyn_cast_or_null<ArrayAttr>(list.get("ptxas-cmd-options")))
    llvm::append_range(options, old);
  for (const std::string &token : tokenizeBinaryOpts(opts))
    options.push_back(StringAttr::get(context, token));
  list.set("ptxas-cmd-options", ArrayAttr::get(context, options));
  flags = list.getDictionary(context);
}

/// Upstream appends an NVVM target's flags["ptxas-cmd-options"] to ptxas's
/// command line right after the pass's `opts`, so on NVVM-only modules the
/// `opts` hint can live in the IR: variants that differ only in ptxas
/// options then share one binary pass instance (and one batch). `-32` is
/// the exception: upstream routes it to fatbinary, from `opts` only.
static bool optsGoIntoTarget(ArrayRef<TargetFamily> families, StringRef opts) {
  return isNvvmOnly(families) &&
         !llvm::is_contained(tokenizeBinaryOpts(opts), "-32");
}

static Attribute rewriteTarget(Attribute target, const HintSet &hints,
                               bool optsIntoTarget) {
  MLIRContext *ctx = target.getContext();
  TargetFamily family = getTargetFamily(target);
  // The fields both target attributes have.
  auto fieldsOf = [&](auto attr, StringRef abi) {
    return TargetFields{ctx,
                        family,
                        attr.getO(),
                        attr.getTriple().str(),
                        attr.getChip().str(),
                        attr.getFeatures().str(),
                        abi.str(),
                        attr.getFlags(),
                        optsIntoTarget};
  };
  std::optional<TargetFields> f;
  ArrayAttr link;
  bool verifyTarget = true;
  if (auto rocdl = dyn_cast<ROCDL::ROCDLTargetAttr>(target)) {
    f = fieldsOf(rocdl, rocdl.getAbi());
    link = rocdl.getLink();
  } else if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target)) {
    f = fieldsOf(nvvm, "");
    link = nvvm.getLink();
    verifyTarget = nvvm.getVerifyTarget();
  } else {
    return target;
  }
  for (const TypedHint &hint : hints.hints())
    if (hint.spec->applyToTarget &&
        targetMatchesSelector(target, hint.selector))
      hint.spec->applyToTarget(*f, hint);
  if (f->flags && f->flags.empty())
    f->flags = nullptr;
  if (family == TargetFamily::ROCDL)
    return ROCDL::ROCDLTargetAttr::get(ctx, f->optLevel, f->triple, f->chip,
                                       f->features, f->abi, f->flags, link);
  return NVVM::NVVMTargetAttr::get(ctx, f->optLevel, f->triple, f->chip,
                                   f->features, f->flags, link, verifyTarget);
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
  // The hints that write into a ROCDL module's kernels instead.
  SmallVector<std::string> kernelHints;
  for (const HintSpec &spec : getHintSpecs())
    if (spec.applyToKernels && spec.rocdl.applies)
      kernelHints.push_back(spec.getDisplayName() + "=");
  return ("hint 'opts=" + rocdlOpts.trim() +
          "' has no effect on a #rocdl.target: upstream ROCDL serialization "
          "ignores gpu-module-to-binary's opts; use hints that go into the "
          "IR instead (" +
          llvm::join(kernelHints, ", ") + ")")
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
  SmallVector<LLVM::LLVMFuncOp> kernels = getKernels(gpuModule);
  KernelHintSite site;
  site.kernels = kernels;
  site.rocdl = llvm::is_contained(families, TargetFamily::ROCDL);
  site.nvvm = llvm::is_contained(families, TargetFamily::NVVM);

  for (const TypedHint &hint : hints.hints()) {
    if (!hint.spec->applyToKernels)
      continue;
    site.attribute = hint.spec->type == HintType::Attribute
                         ? parseHintAttribute(ctx, hint.value.getText())
                         : Attribute();
    hint.spec->applyToKernels(site, hint);
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
