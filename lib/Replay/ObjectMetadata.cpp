//===- ObjectMetadata.cpp - Read what a #gpu.object reports ---------------===//

#include "fly/Hints/ApplyHints.h"
#include "fly/Object/CubinInfo.h"
#include "fly/Replay/VariantResult.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace llvm::json;
using llvm::Expected;
using llvm::StringRef;
using llvm::consumeError;
using llvm::raw_string_ostream;

namespace fly {

static llvm::json::Value attributeToJSON(Attribute attr) {
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getType().isInteger(1) ? llvm::json::Value(i.getValue().getBoolValue())
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

std::vector<VariantObject> collectObjects(ModuleOp variant) {
  std::vector<VariantObject> objects;
  for (auto binary : variant.getOps<gpu::BinaryOp>()) {
    for (Attribute attr : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (!object)
        continue;
      VariantObject &out = objects.emplace_back();
      TargetFamily family = getTargetFamily(object.getTarget());
      out.gpuModule = binary.getName().str();
      raw_string_ostream(out.target) << object.getTarget();
      out.format = getFormatName(object.getFormat()).str();
      out.extension = getExtension(family, object.getFormat()).str();
      out.bytes = object.getObject().getValue().str();
      out.properties = dictionaryToJSON(object.getProperties());
      if (gpu::KernelTableAttr table = object.getKernels()) {
        for (gpu::KernelMetadataAttr kernel : table)
          out.kernels.push_back({kernel.getName().getValue().str(),
                                 dictionaryToJSON(kernel.getMetadata())});
      } else if (family == TargetFamily::NVVM &&
                 object.getFormat() == gpu::CompilationTarget::Binary) {
        out.kernels = readCubinKernelInfo(out.bytes);
      }
    }
  }
  return objects;
}

llvm::json::Array kernelsToJSON(const std::vector<KernelInfo> &kernels) {
  llvm::json::Array array;
  for (const KernelInfo &kernel : kernels)
    array.push_back(
        llvm::json::Object{{"name", kernel.name},
                           {"metadata", llvm::json::Object(kernel.metadata)}});
  return array;
}

void recordBinaries(VariantResult &result, ModuleOp module) {
  result.objects = collectObjects(module);
  result.binaryIR.clear();
  raw_string_ostream os(result.binaryIR);
  for (auto binary : module.getOps<gpu::BinaryOp>())
    binary->print(os), os << '\n';
  uint64_t hash = 0;
  for (const VariantObject &object : result.objects)
    hash = llvm::xxh3_64bits(object.gpuModule + '\0' + object.bytes) ^
           (hash * 0x9E3779B97F4A7C15ull);
  result.objectHash = hash;
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
    kernels.push_back({kernel.name, std::move(info)});
  }
  return kernels;
}

} // namespace fly
