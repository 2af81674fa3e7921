//===- TargetChips.cpp - Is this chip one LLVM can compile for? -----------===//

#include "Hints/TargetChips.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Threading.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>

using namespace mlir;
using llvm::StringRef;

extern "C" void LLVMInitializeAMDGPUTargetInfo();
extern "C" void LLVMInitializeAMDGPUTargetMC();
extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTargetMC();

namespace fly {

/// The processor table of `family`, or null for families without one.
static const llvm::MCSubtargetInfo *getSubtargetInfo(TargetFamily family) {
  static llvm::once_flag once;
  static std::unique_ptr<llvm::MCSubtargetInfo> amdgpu, nvptx;
  llvm::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    auto create = [](StringRef tripleName) {
      llvm::Triple triple(tripleName);
      std::string error;
      const llvm::Target *target =
          llvm::TargetRegistry::lookupTarget(triple, error);
      // An empty CPU: a named one that is unknown would print a warning.
      return std::unique_ptr<llvm::MCSubtargetInfo>(
          target ? target->createMCSubtargetInfo(triple, "", "") : nullptr);
    };
    amdgpu = create("amdgcn-amd-amdhsa");
    nvptx = create("nvptx64-nvidia-cuda");
  });
  switch (family) {
  case TargetFamily::ROCDL:
    return amdgpu.get();
  case TargetFamily::NVVM:
    return nvptx.get();
  case TargetFamily::Other:
    return nullptr;
  }
  return nullptr;
}

bool isKnownChip(TargetFamily family, StringRef chip) {
  const llvm::MCSubtargetInfo *info = getSubtargetInfo(family);
  return !info || info->isCPUStringValid(chip);
}

std::string suggestChips(TargetFamily family, StringRef chip) {
  const llvm::MCSubtargetInfo *info = getSubtargetInfo(family);
  if (!info)
    return "";
  unsigned best = ~0u;
  SmallVector<StringRef> nearest;
  for (const llvm::SubtargetSubTypeKV &cpu :
       info->getAllProcessorDescriptions()) {
    StringRef name(cpu.Key);
    unsigned distance = chip.edit_distance(name, /*AllowReplacements=*/true);
    if (distance < best)
      best = distance, nearest.clear();
    if (distance == best)
      nearest.push_back(name);
  }
  std::string out;
  if (best <= 2 && !nearest.empty()) {
    out = "did you mean ";
    for (auto [i, name] : llvm::enumerate(nearest))
      out += (i ? " or '" : "'") + name.str() + "'";
    return out + "?";
  }
  return family == TargetFamily::ROCDL
             ? "known AMDGPU chips include gfx90a, gfx942, gfx950, gfx1100"
             : "known NVPTX chips include sm_80, sm_90, sm_90a, sm_100";
}

StringRef getTargetChip(Attribute target) {
  if (auto rocdl = dyn_cast<ROCDL::ROCDLTargetAttr>(target))
    return rocdl.getChip();
  if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target))
    return nvvm.getChip();
  return "";
}

std::string getTargetLabel(Attribute target) {
  TargetFamily family = getTargetFamily(target);
  if (family == TargetFamily::Other)
    return "";
  return (stringifyTargetFamily(family) + ":" + getTargetChip(target)).str();
}

std::vector<std::string> getTargetLabels(ModuleOp module) {
  std::vector<std::string> labels;
  module.walk([&](gpu::GPUModuleOp gpuModule) {
    if (ArrayAttr targets = gpuModule.getTargetsAttr())
      for (Attribute target : targets) {
        std::string label = getTargetLabel(target);
        if (!label.empty() && !llvm::is_contained(labels, label))
          labels.push_back(label);
      }
  });
  return labels;
}

std::vector<std::string> describeRepeatedTargets(ModuleOp module) {
  std::vector<std::string> lines;
  module.walk([&](gpu::GPUModuleOp gpuModule) {
    ArrayAttr targets = gpuModule.getTargetsAttr();
    if (!targets)
      return;
    for (size_t i = 0; i < targets.size(); ++i)
      for (size_t j = i + 1; j < targets.size(); ++j) {
        std::string label = getTargetLabel(targets[i]);
        if (label.empty() || label != getTargetLabel(targets[j]))
          continue;
        std::string line;
        llvm::raw_string_ostream os(line);
        os << "gpu.module @" << gpuModule.getName() << " has targets #" << i
           << " and #" << j;
        if (targets[i] == targets[j])
          os << " identical (" << targets[i]
             << "): upstream compiles both into identical objects";
        else
          os << " for the same chip (" << targets[i] << " and " << targets[j]
             << "): every variant compiles both";
        os << "; each is written to its own file (.t" << i << ", .t" << j
           << ")";
        lines.push_back(line);
      }
  });
  return lines;
}

LogicalResult verifyTargetChips(gpu::GPUModuleOp gpuModule) {
  ArrayAttr targets = gpuModule.getTargetsAttr();
  if (!targets)
    return success();
  for (Attribute target : targets) {
    TargetFamily family = getTargetFamily(target);
    StringRef chip = getTargetChip(target);
    if (family == TargetFamily::Other || isKnownChip(family, chip))
      continue;
    return emitError(gpuModule.getLoc())
           << "gpu.module @" << gpuModule.getName() << ": target " << target
           << " names chip '" << chip << "', which LLVM's "
           << (family == TargetFamily::ROCDL ? "AMDGPU" : "NVPTX")
           << " backend does not know; " << suggestChips(family, chip);
  }
  return success();
}

} // namespace fly
