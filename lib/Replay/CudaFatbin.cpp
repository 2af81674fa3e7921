//===- CudaFatbin.cpp - The entries of a CUDA fatbin container ------------===//

#include "Replay/CudaFatbin.h"

#include "llvm/Support/Endian.h"

using namespace llvm;
namespace endian = llvm::support::endian;

namespace fly {

namespace {
constexpr uint32_t kFatbinMagic = 0xBA55ED50;
constexpr size_t kFatbinHeaderSize = 16;
// Offsets into an entry header (64 bytes in current toolkits).
constexpr size_t kEntryKind = 0, kEntryHeaderSize = 4, kEntryPayloadSize = 8,
                 kEntryArch = 28, kEntryFlags = 40, kEntryMinHeader = 48;
constexpr uint64_t kFlagCompressed = 0x2000;
} // namespace

static Error fatbinError(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), "fatbin: " + msg);
}

Expected<std::vector<FatbinEntry>> readFatbinEntries(StringRef fatbin) {
  const uint8_t *data = reinterpret_cast<const uint8_t *>(fatbin.data());
  if (fatbin.size() < kFatbinHeaderSize ||
      endian::read32le(data) != kFatbinMagic)
    return fatbinError("not a fatbin container (no 0xBA55ED50 header)");
  uint16_t headerSize = endian::read16le(data + 6);
  uint64_t payloadSize = endian::read64le(data + 8);
  if (headerSize < kFatbinHeaderSize ||
      headerSize + payloadSize > fatbin.size())
    return fatbinError("the header's sizes run past the end");
  std::vector<FatbinEntry> entries;
  uint64_t pos = headerSize, end = headerSize + payloadSize;
  while (pos < end) {
    if (end - pos < kEntryMinHeader)
      return fatbinError("truncated entry header at offset " + Twine(pos));
    const uint8_t *entry = data + pos;
    uint32_t entryHeader = endian::read32le(entry + kEntryHeaderSize);
    uint64_t size = endian::read64le(entry + kEntryPayloadSize);
    if (entryHeader < kEntryMinHeader || entryHeader > end - pos ||
        size > end - pos - entryHeader)
      return fatbinError("entry at offset " + Twine(pos) +
                         " runs past the end");
    FatbinEntry out;
    uint16_t kind = endian::read16le(entry + kEntryKind);
    out.kind = kind == 1   ? FatbinEntry::Kind::PTX
               : kind == 2 ? FatbinEntry::Kind::ELF
                           : FatbinEntry::Kind::Other;
    out.arch = endian::read32le(entry + kEntryArch);
    out.compressed = endian::read64le(entry + kEntryFlags) & kFlagCompressed;
    out.payload = fatbin.substr(pos + entryHeader, size);
    entries.push_back(out);
    pos += entryHeader + size;
  }
  return entries;
}

} // namespace fly
