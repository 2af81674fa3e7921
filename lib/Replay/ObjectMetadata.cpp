//===- ObjectMetadata.cpp - Read what a #gpu.object reports ---------------===//

#include "Hints/TargetChips.h"
#include "Replay/AmdgpuMetadata.h"
#include "Replay/CudaFatbin.h"
#include "Support/LLVMCompat.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Object/CubinInfo.h"
#include "fly/Replay/VariantResult.h"
#include "fly/Support/FileName.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace llvm::json;
using llvm::consumeError;
using llvm::Expected;
using llvm::raw_string_ostream;
using llvm::StringRef;

namespace fly {

static llvm::json::Value attributeToJSON(Attribute attr) {
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getType().isInteger(1)
               ? llvm::json::Value(i.getValue().getBoolValue())
               : llvm::json::Value(i.getValue().getSExtValue());
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue().str();
  if (auto a = dyn_cast<DenseI32ArrayAttr>(attr))
    return llvm::json::Array(a.asArrayRef());
  std::string text;
  raw_string_ostream os(text);
  attr.print(os);
  return text;
}

static llvm::json::Object dictionaryToJSON(DictionaryAttr dict) {
  llvm::json::Object obj;
  if (dict)
    for (NamedAttribute entry : dict)
      obj[entry.getName().getValue().str()] = attributeToJSON(entry.getValue());
  return obj;
}

static StringRef getExtension(TargetFamily family,
                              gpu::CompilationTarget format) {
  switch (format) {
  case gpu::CompilationTarget::Offload:
    return ".bc";
  case gpu::CompilationTarget::Assembly:
    return family == TargetFamily::NVVM ? ".ptx" : ".s";
  case gpu::CompilationTarget::Binary:
    return family == TargetFamily::NVVM ? ".cubin" : ".hsaco";
  case gpu::CompilationTarget::Fatbin:
    return family == TargetFamily::NVVM ? ".fatbin" : ".hsaco";
  }
  return ".bin";
}

static StringRef getFormatName(gpu::CompilationTarget format) {
  switch (format) {
  case gpu::CompilationTarget::Offload:
    return "offload";
  case gpu::CompilationTarget::Assembly:
    return "isa";
  case gpu::CompilationTarget::Binary:
    return "bin";
  case gpu::CompilationTarget::Fatbin:
    return "fatbin";
  }
  return "unknown";
}

/// "90" of sm_90 / sm_90a, 0 when `chip` is not of that shape.
static unsigned getSmVersion(StringRef chip) {
  unsigned version = 0;
  if (!chip.consume_front("sm_"))
    return 0;
  chip = chip.take_while([](char c) { return llvm::isDigit(c); });
  return chip.getAsInteger(10, version) ? 0 : version;
}

static void readKernelInfoOnce(VariantObject &object);

void readObjectKernelInfo(VariantObject &object) {
  readKernelInfoOnce(object);
  // AMDGPU chips without AGPRs report agpr_count 0xFFFFFFFF: no count.
  if (object.family == "rocdl")
    for (KernelInfo &kernel : object.kernels)
      if (std::optional<int64_t> agpr =
              kernel.metadata.getInteger("agpr_count"))
        if (*agpr < 0 || *agpr > INT32_MAX)
          kernel.metadata.erase("agpr_count");
}

static void readKernelInfoOnce(VariantObject &object) {
  if (!object.kernels.empty()) {
    if (object.registerSource.empty())
      object.registerSource = "kernel table";
    return;
  }
  auto take = [&](Expected<std::vector<KernelInfo>> kernels, StringRef source) {
    if (!kernels) {
      object.registerNote = llvm::toString(kernels.takeError());
      return;
    }
    object.kernels = std::move(*kernels);
    object.registerSource = source.str();
  };
  if (object.family == "rocdl") {
    if (object.format == "isa")
      take(readAmdgpuAsmKernelInfo(object.bytes), "AMDGPU assembly metadata");
    else if (object.format == "bin" || object.format == "fatbin")
      take(readAmdgpuNoteKernelInfo(object.bytes), "AMDGPU metadata note");
    else
      object.registerNote = "LLVM bitcode: no register data before code "
                            "generation";
    return;
  }
  if (object.family != "nvvm")
    return;
  if (object.format == "isa") {
    object.registerNote = "no register data in PTX (ptxas assigns registers; "
                          "use format=bin or fatbin)";
  } else if (object.format == "bin") {
    object.kernels = readCubinKernelInfo(object.bytes);
    object.registerSource = "cubin .nv.info";
  } else if (object.format == "fatbin") {
    Expected<std::vector<FatbinEntry>> entries =
        readFatbinEntries(object.bytes);
    if (!entries) {
      object.registerNote = llvm::toString(entries.takeError());
      return;
    }
    unsigned sm = getSmVersion(object.chip);
    const FatbinEntry *cubin = nullptr;
    bool anyElf = false, compressed = false;
    for (const FatbinEntry &entry : *entries) {
      if (entry.kind != FatbinEntry::Kind::ELF)
        continue;
      anyElf = true;
      if (entry.compressed) {
        compressed = true;
        continue;
      }
      if (!cubin || entry.arch == sm)
        cubin = &entry;
    }
    if (cubin) {
      object.kernels = readCubinKernelInfo(cubin->payload);
      object.registerSource =
          llvm::formatv("cubin in fatbin (sm_{0})", cubin->arch).str();
    } else if (compressed) {
      object.registerNote = "the fatbin's cubin is compressed: no register "
                            "data read";
    } else if (!anyElf) {
      object.registerNote = "the fatbin holds only PTX (no cubin): no "
                            "register data";
    }
  } else {
    object.registerNote = "LLVM bitcode: no register data before code "
                          "generation";
  }
}

std::vector<VariantObject> collectObjects(ArrayRef<VariantBinary> binaries) {
  std::vector<VariantObject> objects;
  for (const VariantBinary &binary : binaries) {
    for (auto [index, attr] : llvm::enumerate(binary.objects)) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (!object)
        continue;
      VariantObject &out = objects.emplace_back();
      TargetFamily family = getTargetFamily(object.getTarget());
      out.gpuModule = binary.name;
      raw_string_ostream(out.target) << object.getTarget();
      out.family = stringifyTargetFamily(family).str();
      out.chip = getTargetChip(object.getTarget()).str();
      out.targetIndex = index;
      out.format = getFormatName(object.getFormat()).str();
      out.extension = getExtension(family, object.getFormat()).str();
      out.bytes = object.getObject().getValue().str();
      out.properties = dictionaryToJSON(object.getProperties());
      if (gpu::KernelTableAttr table = object.getKernels())
        for (gpu::KernelMetadataAttr kernel : table)
          out.kernels.push_back({kernel.getName().getValue().str(),
                                 dictionaryToJSON(kernel.getMetadata())});
      readObjectKernelInfo(out);
    }
  }
  return objects;
}

std::string getObjectFileName(StringRef variantId, const VariantObject &object,
                              ArrayRef<VariantObject> siblings) {
  // Module names are any symbol ("/../x" included), chips any string.
  std::string name =
      (variantId + "." + sanitizeFileNameComponent(object.gpuModule)).str();
  if (!object.chip.empty())
    name += "." + sanitizeFileNameComponent(object.chip);
  bool shared = llvm::any_of(siblings, [&](const VariantObject &other) {
    return &other != &object && other.gpuModule == object.gpuModule &&
           other.chip == object.chip && other.targetIndex != object.targetIndex;
  });
  if (shared || object.chip.empty())
    name += ".t" + std::to_string(object.targetIndex);
  return name + object.extension;
}

llvm::json::Array kernelsToJSON(const std::vector<KernelInfo> &kernels) {
  llvm::json::Array array;
  for (const KernelInfo &kernel : kernels)
    array.push_back(
        llvm::json::Object{{"name", kernel.name},
                           {"metadata", llvm::json::Object(kernel.metadata)}});
  return array;
}

std::vector<KernelInfo> readCubinKernelInfo(StringRef cubin) {
  std::vector<KernelInfo> kernels;
  Expected<std::vector<CubinKernel>> read = readCubinKernels(cubin);
  if (!read) {
    consumeError(read.takeError());
    return kernels;
  }
  for (const CubinKernel &kernel : *read) {
    llvm::json::Object info;
    for (auto [key, value] :
         std::initializer_list<std::pair<const char *, int64_t>>{
             {"registers", kernel.registers},
             {"frame_bytes", kernel.frameBytes},
             {"max_stack_bytes", kernel.maxStackBytes},
             {"min_stack_bytes", kernel.minStackBytes},
             {"shared_bytes", kernel.sharedBytes}})
      if (value >= 0)
        info[key] = value;
    // The block size the kernel requires (.reqntid) or at most allows
    // (.maxntid), for occupancy.
    if (!kernel.reqntid.empty())
      info["reqntid"] = llvm::json::Array(kernel.reqntid);
    if (!kernel.maxntid.empty())
      info["maxntid"] = llvm::json::Array(kernel.maxntid);
    kernels.push_back({kernel.name, std::move(info)});
  }
  return kernels;
}

} // namespace fly
