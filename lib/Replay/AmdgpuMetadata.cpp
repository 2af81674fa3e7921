//===- AmdgpuMetadata.cpp - Kernel resources from AMDGPU metadata ---------===//

#include "Replay/AmdgpuMetadata.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"

using namespace llvm;

namespace fly {

static Error metadataError(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

/// A scalar (or list of scalars) of the metadata map as JSON; nullopt for
/// maps and lists of maps (.args), which the manifest leaves out.
static std::optional<json::Value> nodeToJSON(msgpack::DocNode node) {
  switch (node.getKind()) {
  case msgpack::Type::Int:
    return json::Value(node.getInt());
  case msgpack::Type::UInt:
    return json::Value(static_cast<int64_t>(node.getUInt()));
  case msgpack::Type::Boolean:
    return json::Value(node.getBool());
  case msgpack::Type::Float:
    return json::Value(node.getFloat());
  case msgpack::Type::String: {
    // YAML documents keep numbers as strings.
    StringRef text = node.getString();
    int64_t value;
    if (!text.getAsInteger(10, value))
      return json::Value(value);
    if (text == "true" || text == "false")
      return json::Value(text == "true");
    return json::Value(text.str());
  }
  case msgpack::Type::Array: {
    json::Array array;
    for (msgpack::DocNode element : node.getArray()) {
      std::optional<json::Value> value = nodeToJSON(element);
      if (!value || value->getAsArray())
        return std::nullopt;
      array.push_back(std::move(*value));
    }
    return json::Value(std::move(array));
  }
  default:
    return std::nullopt;
  }
}

static Expected<std::vector<KernelInfo>>
kernelsFromDocument(msgpack::Document &doc) {
  msgpack::DocNode root = doc.getRoot();
  if (!root.isMap())
    return metadataError("AMDGPU metadata is not a map");
  msgpack::MapDocNode map = root.getMap();
  auto it = map.find("amdhsa.kernels");
  if (it == map.end() || !it->second.isArray())
    return metadataError("AMDGPU metadata lists no amdhsa.kernels");
  std::vector<KernelInfo> kernels;
  for (msgpack::DocNode kernel : it->second.getArray()) {
    if (!kernel.isMap())
      continue;
    KernelInfo info;
    for (auto &[key, value] : kernel.getMap()) {
      if (!key.isString())
        continue;
      StringRef name = key.getString();
      if (name == ".name" && value.isString()) {
        info.name = value.getString().str();
        continue;
      }
      if (std::optional<json::Value> json = nodeToJSON(value))
        info.metadata[name.ltrim('.').str()] = std::move(*json);
    }
    kernels.push_back(std::move(info));
  }
  return kernels;
}

Expected<std::vector<KernelInfo>> readAmdgpuNoteKernelInfo(StringRef hsaco) {
  Expected<object::ELF64LEObjectFile> elf =
      object::ELF64LEObjectFile::create(MemoryBufferRef(hsaco, "hsaco"));
  if (!elf)
    return elf.takeError();
  const object::ELF64LEFile &file = elf->getELFFile();
  auto sections = file.sections();
  if (!sections)
    return sections.takeError();
  for (const auto &section : *sections) {
    if (section.sh_type != ELF::SHT_NOTE)
      continue;
    Error err = Error::success();
    for (const auto &note : file.notes(section, err)) {
      if (note.getName() != "AMDGPU" ||
          note.getType() != ELF::NT_AMDGPU_METADATA)
        continue;
      ArrayRef<uint8_t> desc = note.getDesc(section.sh_addralign);
      msgpack::Document doc;
      if (!doc.readFromBlob(
              StringRef(reinterpret_cast<const char *>(desc.data()),
                        desc.size()),
              /*Multi=*/false)) {
        consumeError(std::move(err));
        return metadataError("unreadable NT_AMDGPU_METADATA note");
      }
      consumeError(std::move(err));
      return kernelsFromDocument(doc);
    }
    if (err)
      return std::move(err);
  }
  return metadataError("the object has no NT_AMDGPU_METADATA note");
}

Expected<std::vector<KernelInfo>> readAmdgpuAsmKernelInfo(StringRef assembly) {
  size_t begin = assembly.find(".amdgpu_metadata");
  size_t end = assembly.find(".end_amdgpu_metadata");
  if (begin == StringRef::npos || end == StringRef::npos || end < begin)
    return metadataError("the assembly has no .amdgpu_metadata block");
  StringRef yaml = assembly.slice(begin + strlen(".amdgpu_metadata"), end);
  msgpack::Document doc;
  if (!doc.fromYAML(yaml))
    return metadataError("unreadable .amdgpu_metadata block");
  return kernelsFromDocument(doc);
}

} // namespace fly
