//===- CubinInfo.cpp - Kernel facts from a cubin's .nv.info ---------------===//

#include "fly/Object/CubinInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <map>

using namespace llvm;
namespace endian = llvm::support::endian;

namespace fly {

// .nv.info records: a format byte, an attribute byte, then a payload whose
// shape the format gives.
namespace {
enum Format : uint8_t {
  NoValue = 1,
  ByteValue = 2,
  HalfValue = 3,
  SizedValue = 4
};
enum Attr : uint8_t {
  MaxThreads = 0x05,   // x, y, z (.maxntid)
  ParamCbank = 0x0a,   // (symbol, offset:16 | size:16)
  ReqNtid = 0x10,      // x, y, z (.reqntid)
  FrameSize = 0x11,    // (symbol, bytes)
  MinStackSize = 0x12, // (symbol, bytes)
  KparamInfo =
      0x17, // (index, ordinal:16, offset:16, flags; size = flags >> 18)
  CbankParamSize = 0x19, // half: parameter bank size
  MaxStackSize = 0x23,   // (symbol, bytes)
  RegCount = 0x2f,       // (symbol, registers)
};
} // namespace

Expected<std::vector<CubinKernel>> readCubinKernels(StringRef image) {
  auto file = object::ELF64LEFile::create(image);
  if (!file)
    return file.takeError();
  auto sections = file->sections();
  if (!sections)
    return sections.takeError();
  // Symbol index -> name, for records that name their kernel by index.
  std::vector<std::string> symbols;
  for (const auto &section : *sections) {
    if (section.sh_type != ELF::SHT_SYMTAB)
      continue;
    auto syms = file->symbols(&section);
    if (!syms)
      return syms.takeError();
    auto strtab = file->getStringTableForSymtab(section);
    if (!strtab)
      return strtab.takeError();
    for (const auto &symbol : *syms) {
      Expected<StringRef> name = symbol.getName(*strtab);
      symbols.push_back(name ? name->str() : "");
      consumeError(name.takeError());
    }
  }
  std::map<std::string, CubinKernel> byName;
  auto named = [&](const auto &section) {
    Expected<StringRef> name = file->getSectionName(section);
    if (name)
      return *name;
    consumeError(name.takeError());
    return StringRef();
  };
  for (const auto &section : *sections) {
    StringRef name = named(section);
    if (name.consume_front(".text."))
      byName[name.str()].name = name.str();
  }
  // From sm_90 on, ptxas lays the block's system-reserved shared memory
  // (1 KiB, the driver's reservedSharedMemoryPerBlock) at the start of each
  // kernel's .nv.shared.<kernel> and marks the object with
  // .nv.shared.reserved.<n> sections; ptxas -v and the driver count only the
  // kernel's own bytes.
  constexpr int64_t kReservedSharedBytes = 1024;
  bool reservedInShared = llvm::any_of(*sections, [&](const auto &section) {
    return named(section).starts_with(".nv.shared.reserved.");
  });
  for (const auto &section : *sections) {
    StringRef name = named(section);
    if (name.consume_front(".nv.shared.") && byName.count(name.str())) {
      int64_t bytes = static_cast<int64_t>(section.sh_size);
      if (reservedInShared)
        bytes = std::max<int64_t>(bytes - kReservedSharedBytes, 0);
      byName[name.str()].sharedBytes = bytes;
    }
    if (!named(section).starts_with(".nv.info"))
      continue;
    // .nv.info.<kernel> holds that kernel's own records.
    auto owner = byName.find(named(section).substr(9).str());
    CubinKernel *own = owner == byName.end() ? nullptr : &owner->second;
    auto contents = file->getSectionContents(section);
    if (!contents) {
      consumeError(contents.takeError());
      continue;
    }
    ArrayRef<uint8_t> data = *contents;
    // Every record starts with four bytes: format, attribute and a 16-bit
    // field that holds the value (BVAL in its low byte, HVAL whole, NVAL
    // unused) or, for SVAL, the size of the payload that follows.
    for (size_t pos = 0; pos + 4 <= data.size();) {
      uint8_t format = data[pos], attr = data[pos + 1];
      if (format < NoValue || format > SizedValue)
        break;
      size_t size =
          format == SizedValue ? 2 + endian::read16le(&data[pos + 2]) : 2;
      pos += 2;
      if (pos + size > data.size())
        break;
      const uint8_t *p = &data[pos];
      pos += size;
      if (format == SizedValue && size == 14 && own &&
          (attr == ReqNtid || attr == MaxThreads)) {
        (attr == ReqNtid ? own->reqntid : own->maxntid) = {
            endian::read32le(p + 2), endian::read32le(p + 6),
            endian::read32le(p + 10)};
      } else if (format == HalfValue && attr == CbankParamSize && own) {
        own->paramBytes = endian::read16le(p);
      } else if (format == SizedValue && attr == KparamInfo && size == 14 &&
                 own) {
        own->params.push_back({endian::read16le(p + 6), endian::read16le(p + 8),
                               endian::read32le(p + 10) >> 18});
      } else if (format == SizedValue && size == 10) {
        uint32_t symbol = endian::read32le(p + 2);
        int64_t value = endian::read32le(p + 6);
        auto k = symbol < symbols.size() ? byName.find(symbols[symbol])
                                         : byName.end();
        if (k == byName.end())
          continue;
        if (attr == RegCount)
          k->second.registers = value;
        else if (attr == FrameSize)
          k->second.frameBytes = value;
        else if (attr == MinStackSize)
          k->second.minStackBytes = value;
        else if (attr == MaxStackSize)
          k->second.maxStackBytes = value;
        else if (attr == ParamCbank && k->second.paramBytes < 0)
          k->second.paramBytes = value >> 16;
      }
    }
  }
  std::vector<CubinKernel> kernels;
  for (auto &[name, kernel] : byName) {
    llvm::sort(kernel.params, [](const CubinParam &a, const CubinParam &b) {
      return a.ordinal < b.ordinal;
    });
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

} // namespace fly
