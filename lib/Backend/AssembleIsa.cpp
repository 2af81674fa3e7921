//===- AssembleIsa.cpp - The fly-assemble-isa pass ------------------------===//
//
// Mirrors upstream's GpuModuleToBinaryPass (ModuleToBinary.cpp) with the
// serializer's ISA step replaced by the ISA the gpu.module carries.
//
//===----------------------------------------------------------------------===//

#include "Support/LLVMCompat.h"
#include "fly/Transforms/Passes.h"

#include "Backend/PtxAssembler.h"
#include "fly/Backend/AmdgpuLinker.h"
#include "fly/Backend/ModuleToBinary.h"
#include "fly/Support/AttrNames.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include <chrono>

namespace fly {
#define GEN_PASS_DEF_FLYASSEMBLEISA
#include "fly/Transforms/Passes.h.inc"
} // namespace fly

using namespace mlir;
using llvm::SmallVector;
using llvm::StringRef;

namespace {
struct AssembleIsaPass : fly::impl::FlyAssembleIsaBase<AssembleIsaPass> {
  using FlyAssembleIsaBase::FlyAssembleIsaBase;

  void runOnOperation() override;

private:
  LogicalResult assemble(gpu::GPUModuleOp gpuModule,
                         const gpu::TargetOptions &options);
};
} // namespace

/// Upstream's serializer does the same with the ISA it generated itself.
static FailureOr<SmallVector<char, 0>>
finishIsa(gpu::GPUModuleOp gpuModule, Attribute target, StringRef isa,
          const gpu::TargetOptions &options, unsigned toolTimeout) {
  Location loc = gpuModule.getLoc();
  if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target))
    return fly::assemblePtx(isa, nvvm, options, gpuModule.getName(), loc,
                            toolTimeout);
  if (auto rocdl = dyn_cast<ROCDL::ROCDLTargetAttr>(target)) {
    auto emit = [&] { return emitError(loc); };
    FailureOr<SmallVector<char, 0>> object = ROCDL::assembleIsa(
        isa, rocdl.getTriple(), rocdl.getChip(), rocdl.getFeatures(), emit);
    if (failed(object))
      return failure();
    std::string toolkit = options.getToolkitPath().str();
    if (toolkit.empty())
      toolkit = ROCDL::getROCMPath().str();
    return fly::linkAmdgpuObject(*object, toolkit, emit);
  }
  return emitError(loc) << "fly-assemble-isa: cannot finish ISA for target "
                        << target;
}

/// The object of `target` made from its precompiled ISA `attr`, as
/// upstream's serializeToObject + createObject make it; null after an error.
static Attribute assembleObject(gpu::GPUModuleOp gpuModule,
                                gpu::TargetAttrInterface target, Attribute attr,
                                const gpu::TargetOptions &options,
                                unsigned toolTimeout) {
  auto object = dyn_cast<gpu::ObjectAttr>(attr);
  if (!object || object.getFormat() != gpu::CompilationTarget::Assembly) {
    gpuModule.emitError() << "fly-assemble-isa: '" << fly::kIsaAttrName
                          << "' must hold #gpu.object<..., assembly> "
                             "attributes, got "
                          << attr;
    return nullptr;
  }
  auto start = std::chrono::steady_clock::now();
  FailureOr<SmallVector<char, 0>> binary = finishIsa(
      gpuModule, target, object.getObject().getValue(), options, toolTimeout);
  if (failed(binary)) {
    gpuModule.emitError("An error happened while serializing the module.");
    return nullptr;
  }
  // NVVM's createObject copies these timings from the module, as upstream's
  // serializeToObject leaves them there.
  if (llvm::isa<NVVM::NVVMTargetAttr>(target)) {
    Builder builder(gpuModule.getContext());
    if (DictionaryAttr properties = object.getProperties())
      if (Attribute ms = properties.get("LLVMIRToISATimeInMs"))
        gpuModule->setAttr("LLVMIRToISATimeInMs", ms);
    int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count();
    gpuModule->setAttr("ISAToBinaryTimeInMs", builder.getI64IntegerAttr(ms));
  }
  Attribute created = target.createObject(gpuModule, *binary, options);
  if (!created)
    gpuModule.emitError("An error happened while creating the object.");
  return created;
}

LogicalResult AssembleIsaPass::assemble(gpu::GPUModuleOp gpuModule,
                                        const gpu::TargetOptions &options) {
  auto isaObjects = gpuModule->getAttrOfType<ArrayAttr>(fly::kIsaAttrName);
  if (!isaObjects)
    return gpuModule.emitError()
           << "fly-assemble-isa: this gpu.module has no precompiled ISA "
              "(attribute '"
           << fly::kIsaAttrName
           << "'); compile it with gpu-module-to-binary instead";
  ArrayAttr targets = gpuModule.getTargetsAttr();
  if (!targets || targets.size() != isaObjects.size())
    return gpuModule.emitError()
           << "fly-assemble-isa: '" << fly::kIsaAttrName << "' holds "
           << isaObjects.size() << " object(s) for "
           << (targets ? targets.size() : 0) << " target(s)";
  return fly::replaceWithBinary(
      gpuModule, [&](unsigned index, gpu::TargetAttrInterface target) {
        return assembleObject(gpuModule, target, isaObjects[index], options,
                              toolTimeout);
      });
}

void AssembleIsaPass::runOnOperation() {
  std::optional<gpu::CompilationTarget> format =
      fly::parseBinaryFormat(compilationTarget);
  if (format != gpu::CompilationTarget::Binary &&
      format != gpu::CompilationTarget::Fatbin) {
    getOperation()->emitError()
        << "fly-assemble-isa: format must be bin or fatbin, got '"
        << compilationTarget << "'";
    return signalPassFailure();
  }
  gpu::TargetOptions options(toolkitPath, {}, cmdOptions, elfSection, *format);
  for (Region &region : getOperation()->getRegions())
    for (Block &block : region)
      for (auto gpuModule :
           llvm::make_early_inc_range(block.getOps<gpu::GPUModuleOp>()))
        if (failed(assemble(gpuModule, options)))
          return signalPassFailure();
}
