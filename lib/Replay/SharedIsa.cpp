//===- SharedIsa.cpp - One ISA compile for variants that share it ---------===//

#include "fly/Replay/SharedIsa.h"
#include "Replay/VariantDedupe.h"

#include "fly/Hints/ApplyHints.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace llvm;

namespace fly {

/// Far above any register count, and distinct per kernel, so that the
/// directive line it produces cannot be mistaken for another.
static constexpr int32_t kMaxnregSentinelBase = 1000000000;

static bool isAllNvvm(gpu::GPUModuleOp gpuModule) {
  return isNvvmOnly(getTargetFamilies(gpuModule));
}

/// The directive line NVPTXAsmPrinter::emitKernelFunctionDirectives prints.
static std::string maxnregLine(int64_t value) {
  return "\n.maxnreg " + std::to_string(value) + "\n";
}

std::optional<SharedIsaKey>
getSharedIsaKey(ArrayRef<gpu::GPUModuleOp> gpuModules, const HintSet &hints,
                StringRef extraOpts) {
  // fly-assemble-isa finishes NVVM and ROCDL ISA only. On ROCDL the key is
  // the whole hinted variant (code generation reads every hint), so nothing
  // is shared; the split still pays: its link runs lld in this process
  // instead of starting ld.lld.
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    SmallVector<TargetFamily> families = getTargetFamilies(gpuModule);
    if (families.empty() || llvm::is_contained(families, TargetFamily::Other))
      return std::nullopt;
  }
  std::optional<SmallVector<mlir::Attribute>> fingerprint =
      fingerprintHinted(gpuModules, hints, HintedFingerprint::SharedIsa);
  if (!fingerprint)
    return std::nullopt;
  return SharedIsaKey{extraOpts.str(), std::move(*fingerprint)};
}

void normalizeForSharedIsa(gpu::GPUModuleOp gpuModule) {
  if (!isAllNvvm(gpuModule))
    return;
  Builder b(gpuModule.getContext());
  for (auto [k, kernel] : llvm::enumerate(getKernels(gpuModule)))
    kernel->setAttr("nvvm.maxnreg",
                    b.getI32IntegerAttr(kMaxnregSentinelBase + k));
  SmallVector<mlir::Attribute> targets;
  for (mlir::Attribute target : gpuModule.getTargetsAttr()) {
    auto nvvm = cast<NVVM::NVVMTargetAttr>(target);
    DictionaryAttr flags = nvvm.getFlags();
    if (flags && flags.contains("ptxas-cmd-options")) {
      NamedAttrList list(flags);
      list.erase("ptxas-cmd-options");
      flags = list.empty() ? nullptr : list.getDictionary(b.getContext());
      nvvm = NVVM::NVVMTargetAttr::get(
          b.getContext(), nvvm.getO(), nvvm.getTriple(), nvvm.getChip(),
          nvvm.getFeatures(), flags, nvvm.getLink(), nvvm.getVerifyTarget());
    }
    targets.push_back(nvvm);
  }
  gpuModule.setTargetsAttr(b.getArrayAttr(targets));
}

bool hasSentinelsOnce(ArrayAttr objects, size_t kernels) {
  for (mlir::Attribute attr : objects) {
    auto object = cast<gpu::ObjectAttr>(attr);
    if (getTargetFamily(object.getTarget()) != TargetFamily::NVVM)
      continue;
    StringRef ptx = object.getObject().getValue();
    for (size_t k = 0; k < kernels; ++k) {
      std::string line = maxnregLine(kMaxnregSentinelBase + k);
      size_t first = ptx.find(line);
      if (first == StringRef::npos ||
          ptx.find(line, first + 1) != StringRef::npos)
        return false;
    }
  }
  return true;
}

FailureOr<ArrayAttr> instantiateSharedIsa(ArrayAttr objects,
                                          gpu::GPUModuleOp gpuModule) {
  ArrayAttr targets = gpuModule.getTargetsAttr();
  if (!targets || targets.size() != objects.size())
    return failure();
  MLIRContext *ctx = gpuModule.getContext();
  bool nvvm = isAllNvvm(gpuModule);
  SmallVector<LLVM::LLVMFuncOp> kernels = getKernels(gpuModule);
  SmallVector<mlir::Attribute> instantiated;
  for (auto [attr, target] : llvm::zip_equal(objects, targets)) {
    auto object = cast<gpu::ObjectAttr>(attr);
    std::string isa = object.getObject().getValue().str();
    if (nvvm) {
      for (auto [k, kernel] : llvm::enumerate(kernels)) {
        std::string sentinel = maxnregLine(kMaxnregSentinelBase + k);
        size_t at = isa.find(sentinel);
        if (at == std::string::npos)
          return failure();
        auto maxnreg = kernel->getAttrOfType<IntegerAttr>("nvvm.maxnreg");
        isa.replace(at, sentinel.size(),
                    maxnreg ? maxnregLine(maxnreg.getInt()) : "\n");
      }
    }
    instantiated.push_back(gpu::ObjectAttr::get(
        ctx, target, object.getFormat(), StringAttr::get(ctx, isa),
        object.getProperties(), object.getKernels()));
  }
  return ArrayAttr::get(ctx, instantiated);
}

std::optional<SharedIsa> SharedIsaTable::lookup(unsigned group) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(group);
  if (it == entries.end())
    return std::nullopt;
  return it->second;
}

void SharedIsaTable::insert(unsigned group, SharedIsa isa) {
  std::lock_guard<std::mutex> lock(mutex);
  entries[group] = std::move(isa);
}

} // namespace fly
