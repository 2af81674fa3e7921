//===- ObjectMetadata.cpp - Read what a #gpu.object reports ---------------===//

#include "fly/Hints/ApplyHints.h"
#include "fly/Replay/VariantResult.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace llvm::json;
namespace object = llvm::object;
namespace support = llvm::support;
namespace ELF = llvm::ELF;
using llvm::ArrayRef;
using llvm::Expected;
using llvm::MemoryBufferRef;
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

// NVIDIA's .nv.info records: a format byte, an attribute byte, then a payload
// whose shape the format gives. The ones read here carry (symbol, value).
namespace nvinfo {
enum Format : uint8_t { NoValue = 1, ByteValue = 2, HalfValue = 3, SizedValue = 4 };
enum Attr : uint8_t {
  FrameSize = 0x11,
  MinStackSize = 0x12,
  MaxStackSize = 0x23,
  RegCount = 0x2f,
};
} // namespace nvinfo

std::vector<KernelInfo> readCubinKernelInfo(StringRef cubin) {
  std::vector<KernelInfo> kernels;
  Expected<object::ELF64LEObjectFile> elf =
      object::ELF64LEObjectFile::create(MemoryBufferRef(cubin, "cubin"));
  if (!elf) {
    consumeError(elf.takeError());
    return kernels;
  }
  const object::ELF64LEFile &file = elf->getELFFile();
  auto sections = file.sections();
  if (!sections) {
    consumeError(sections.takeError());
    return kernels;
  }
  // Symbol index -> name, for records that name their kernel by index.
  std::vector<std::string> symbolNames;
  for (const auto &section : *sections) {
    if (section.sh_type != ELF::SHT_SYMTAB)
      continue;
    auto symbols = file.symbols(&section);
    auto strtab = file.getStringTableForSymtab(section);
    if (!symbols || !strtab) {
      consumeError(symbols.takeError());
      consumeError(strtab.takeError());
      return kernels;
    }
    for (const auto &symbol : *symbols) {
      Expected<StringRef> name = symbol.getName(*strtab);
      symbolNames.push_back(name ? name->str() : "");
      if (!name)
        consumeError(name.takeError());
    }
  }
  // Kernels are the functions with a .text.<name> section.
  std::map<std::string, llvm::json::Object> byKernel;
  for (const auto &section : *sections) {
    Expected<StringRef> name = file.getSectionName(section);
    if (!name) {
      consumeError(name.takeError());
      continue;
    }
    if (name->starts_with(".text."))
      byKernel[name->drop_front(6).str()];
    if (name->starts_with(".nv.shared.") && byKernel.count(name->drop_front(11).str()))
      byKernel[name->drop_front(11).str()]["shared_bytes"] =
          static_cast<int64_t>(section.sh_size);
  }
  for (const auto &section : *sections) {
    Expected<StringRef> name = file.getSectionName(section);
    if (!name || !name->starts_with(".nv.info")) {
      if (!name)
        consumeError(name.takeError());
      continue;
    }
    auto contents = file.getSectionContents(section);
    if (!contents) {
      consumeError(contents.takeError());
      continue;
    }
    ArrayRef<uint8_t> data = *contents;
    size_t pos = 0;
    while (pos + 2 <= data.size()) {
      uint8_t format = data[pos], attr = data[pos + 1];
      pos += 2;
      size_t size = 0;
      if (format == nvinfo::NoValue)
        size = 0;
      else if (format == nvinfo::ByteValue)
        size = 1;
      else if (format == nvinfo::HalfValue)
        size = 2;
      else if (format == nvinfo::SizedValue && pos + 2 <= data.size())
        size = 2 + support::endian::read16le(&data[pos]);
      else
        break;
      if (pos + size > data.size())
        break;
      if (format == nvinfo::SizedValue && size == 2 + 8) {
        uint32_t sym = support::endian::read32le(&data[pos + 2]);
        int64_t value = support::endian::read32le(&data[pos + 6]);
        if (sym < symbolNames.size() && byKernel.count(symbolNames[sym])) {
          llvm::json::Object &info = byKernel[symbolNames[sym]];
          if (attr == nvinfo::RegCount)
            info["registers"] = value;
          else if (attr == nvinfo::FrameSize)
            info["frame_bytes"] = value;
          else if (attr == nvinfo::MaxStackSize)
            info["max_stack_bytes"] = value;
          else if (attr == nvinfo::MinStackSize)
            info["min_stack_bytes"] = value;
        }
      }
      pos += size;
    }
  }
  for (auto &[name, info] : byKernel)
    kernels.push_back({name, std::move(info)});
  return kernels;
}

} // namespace fly
