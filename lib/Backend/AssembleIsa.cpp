//===- AssembleIsa.cpp - The fly-assemble-isa pass ------------------------===//
//
// Mirrors upstream's GpuModuleToBinaryPass (ModuleToBinary.cpp) with the
// serializer's ISA step replaced by the ISA the gpu.module carries.
//
//===----------------------------------------------------------------------===//

#include "Support/Environment.h"
#include "Support/LLVMCompat.h"
#include "fly/Transforms/Passes.h"

#include "Backend/NewestEntries.h"
#include "Backend/PtxAssembler.h"
#include "fly/Backend/AmdgpuLinker.h"
#include "fly/Backend/ModuleToBinary.h"
#include "fly/Support/AttrNames.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/TimeProfiler.h"

#include <chrono>
#include <mutex>

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

namespace {
/// ROCDL code objects this process assembled and linked, by a digest of all
/// they are made from (the ISA text, the target's triple, chip and
/// features, the toolkit, and whether links spawn the toolkit's ld.lld).
/// Register hints above what a kernel needs leave its ISA as it was (in the
/// config sweep of bench/, 36 of its 64 variants), and assembling and linking
/// are functions of those inputs alone, so such a variant takes the object
/// made before instead of assembling it and waiting for lld again
/// (FLY_ROCDL_REUSE_OBJECTS). Only objects made without an error are kept;
/// what the assembler printed for the ISA was printed once.
class AssembledRocdlObjects {
public:
  using Key = llvm::BLAKE3Result<>;

  static Key keyOf(StringRef isa, ROCDL::ROCDLTargetAttr target,
                   StringRef toolkit) {
    llvm::BLAKE3 hasher;
    bool toolkitLinks = fly::amdgpuLinksNeedToolkitLdLld();
    for (StringRef part :
         {target.getTriple(), target.getChip(), target.getFeatures(), toolkit,
          StringRef(toolkitLinks ? "toolkit ld.lld" : "fly's lld"), isa}) {
      uint64_t size = part.size();
      hasher.update(llvm::ArrayRef<uint8_t>(
          reinterpret_cast<const uint8_t *>(&size), sizeof(size)));
      hasher.update(part);
    }
    return hasher.final();
  }

  std::optional<SmallVector<char, 0>> lookup(const Key &key) {
    std::lock_guard<std::mutex> lock(mutex);
    if (const SmallVector<char, 0> *object = objects.find(key))
      return *object;
    return std::nullopt;
  }

  void insert(const Key &key, const SmallVector<char, 0> &object) {
    std::lock_guard<std::mutex> lock(mutex);
    if (object.size() <= kMaxBytes)
      objects.insert(key, object, object.size());
  }

private:
  /// Equal ISAs come from hint sets of one kernel, compiled close together;
  /// objects are a few to tens of kilobytes, and bench/MEMORY.md's peak has
  /// little room left.
  static constexpr size_t kMaxBytes = size_t(4) << 20;
  std::mutex mutex;
  fly::NewestEntries<Key, SmallVector<char, 0>> objects{kMaxBytes};
};

/// Never destroyed: a variant may still finish on a pool thread at exit.
AssembledRocdlObjects &assembledRocdlObjects() {
  static auto *objects = new AssembledRocdlObjects();
  return *objects;
}
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
    std::string toolkit = options.getToolkitPath().str();
    if (toolkit.empty())
      toolkit = ROCDL::getROCMPath().str();
    std::optional<AssembledRocdlObjects::Key> key;
    if (fly::getEnvFlag("FLY_ROCDL_REUSE_OBJECTS").value_or(true)) {
      key = AssembledRocdlObjects::keyOf(isa, rocdl, toolkit);
      if (std::optional<SmallVector<char, 0>> object =
              assembledRocdlObjects().lookup(*key)) {
        llvm::TimeTraceScope span("Object of an equal ISA");
        return std::move(*object);
      }
    }
    auto emit = [&] { return emitError(loc); };
    FailureOr<SmallVector<char, 0>> object = ROCDL::assembleIsa(
        isa, rocdl.getTriple(), rocdl.getChip(), rocdl.getFeatures(), emit);
    if (failed(object))
      return failure();
    FailureOr<SmallVector<char, 0>> linked =
        fly::linkAmdgpuObject(*object, toolkit, emit);
    if (succeeded(linked) && key)
      assembledRocdlObjects().insert(*key, *linked);
    return linked;
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
