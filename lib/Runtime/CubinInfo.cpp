//===- CubinInfo.cpp - Kernel facts from a cubin's .nv.info ---------------===//

#include "fly/Runtime/CubinInfo.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>

namespace fly::rt {
namespace {

template <typename T> bool read(const std::string &data, size_t offset, T &out) {
  if (offset > data.size() || data.size() - offset < sizeof(T))
    return false;
  std::memcpy(&out, data.data() + offset, sizeof(T)); // little-endian host
  return true;
}

// .nv.info records: a format byte, an attribute byte, then a payload whose
// shape the format gives.
enum Format : uint8_t { NoValue = 1, ByteValue = 2, HalfValue = 3, SizedValue = 4 };
enum Attr : uint8_t {
  ParamCbank = 0x0a,     // (symbol, offset:16 | size:16)
  FrameSize = 0x11,      // (symbol, bytes)
  KparamInfo = 0x17,     // (index, ordinal:16, offset:16, flags; size = flags >> 18)
  CbankParamSize = 0x19, // half: parameter bank size
  RegCount = 0x2f,       // (symbol, registers)
};

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0, size = 0;
  uint32_t link = 0;
  uint64_t entsize = 0;
};

} // namespace

bool isElf(const std::string &image) {
  return image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
}

bool readCubinKernels(const std::string &image,
                      std::vector<CubinKernel> &kernels, std::string &error) {
  kernels.clear();
  if (!isElf(image) || image.size() < 64 || image[4] != 2 || image[5] != 1) {
    error = "not a 64-bit little-endian ELF image";
    return false;
  }
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!read(image, 0x28, shoff) || !read(image, 0x3a, shentsize) ||
      !read(image, 0x3c, shnum) || !read(image, 0x3e, shstrndx) ||
      shentsize < 64 || shstrndx >= shnum) {
    error = "malformed ELF header";
    return false;
  }
  std::vector<Section> sections(shnum);
  std::vector<uint32_t> nameOffsets(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    size_t at = shoff + static_cast<size_t>(i) * shentsize;
    Section &s = sections[i];
    if (!read(image, at, nameOffsets[i]) || !read(image, at + 4, s.type) ||
        !read(image, at + 0x18, s.offset) || !read(image, at + 0x20, s.size) ||
        !read(image, at + 0x28, s.link) || !read(image, at + 0x38, s.entsize) ||
        s.offset > image.size() || image.size() - s.offset < s.size) {
      error = "malformed ELF section header " + std::to_string(i);
      return false;
    }
  }
  auto cstring = [&](const Section &table, uint32_t offset) {
    std::string out;
    for (uint64_t p = table.offset + offset;
         p < table.offset + table.size && image[p]; ++p)
      out += image[p];
    return out;
  };
  for (uint16_t i = 0; i < shnum; ++i)
    sections[i].name = cstring(sections[shstrndx], nameOffsets[i]);

  // Symbol names, for records that name their kernel by symbol index.
  std::vector<std::string> symbols;
  for (const Section &s : sections) {
    if (s.type != 2 /*SHT_SYMTAB*/ || s.link >= shnum)
      continue;
    for (uint64_t at = s.offset; at + 24 <= s.offset + s.size; at += 24) {
      uint32_t nameOffset = 0;
      read(image, at, nameOffset);
      symbols.push_back(cstring(sections[s.link], nameOffset));
    }
  }

  std::map<std::string, CubinKernel> byName;
  for (const Section &s : sections)
    if (s.name.rfind(".text.", 0) == 0)
      byName[s.name.substr(6)].name = s.name.substr(6);

  for (const Section &s : sections) {
    if (s.name.rfind(".nv.info", 0) != 0)
      continue;
    // .nv.info.<kernel> holds that kernel's own records.
    CubinKernel *owner = nullptr;
    if (s.name.size() > 9 && byName.count(s.name.substr(9)))
      owner = &byName[s.name.substr(9)];
    size_t pos = s.offset, end = s.offset + s.size;
    while (pos + 2 <= end) {
      uint8_t format = static_cast<uint8_t>(image[pos]);
      uint8_t attr = static_cast<uint8_t>(image[pos + 1]);
      pos += 2;
      size_t size = 0;
      uint16_t half = 0;
      if (format == NoValue)
        size = 0;
      else if (format == ByteValue)
        size = 1;
      else if (format == HalfValue)
        size = 2;
      else if (format == SizedValue && read(image, pos, half))
        size = 2 + half;
      else
        break;
      if (pos + size > end)
        break;
      if (format == HalfValue && attr == CbankParamSize && owner) {
        read(image, pos, half);
        owner->paramBytes = half;
      } else if (format == SizedValue && attr == KparamInfo && size == 2 + 12 &&
                 owner) {
        uint16_t ordinal = 0, offset = 0;
        uint32_t flags = 0;
        read(image, pos + 6, ordinal);
        read(image, pos + 8, offset);
        read(image, pos + 10, flags);
        owner->params.push_back({ordinal, offset, static_cast<int>(flags >> 18)});
      } else if (format == SizedValue && size == 2 + 8) {
        uint32_t symbol = 0, value = 0;
        read(image, pos + 2, symbol);
        read(image, pos + 6, value);
        if (symbol < symbols.size() && byName.count(symbols[symbol])) {
          CubinKernel &k = byName[symbols[symbol]];
          if (attr == RegCount)
            k.registers = static_cast<int>(value);
          else if (attr == FrameSize)
            k.frameBytes = static_cast<int>(value);
          else if (attr == ParamCbank && k.paramBytes < 0)
            k.paramBytes = static_cast<int>(value >> 16);
        }
      }
      pos += size;
    }
  }
  for (auto &[name, kernel] : byName) {
    std::sort(kernel.params.begin(), kernel.params.end(),
              [](const CubinParam &a, const CubinParam &b) {
                return a.ordinal < b.ordinal;
              });
    kernels.push_back(std::move(kernel));
  }
  return true;
}

} // namespace fly::rt
