//===- CacheKey.cpp - Keys of the two-level compile cache -----------------===//

#include "fly/Cache/CacheKey.h"
#include "fly/Cache/VariantCodec.h"
#include "fly/Support/LLVMCompat.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

using namespace llvm;

#ifndef FLY_VERSION
#define FLY_VERSION "0.0.0"
#endif
// The fuzzers compile this file alone, with a fixed id.
#ifdef FLY_BUILD_ID
static const char *buildId() { return FLY_BUILD_ID; }
#else
#include "fly/BuildId/BuildId.h"
static const char *buildId() { return fly::getBuildId(); }
#endif

namespace fly {

CacheKey &CacheKey::add(StringRef name, StringRef value) {
  // Parts can be megabytes of source: XXH3-128 hashes them ~80 times as fast
  // as SHA-256 (4 MiB: 0.2 ms vs 17-19 ms here; a local cache guards against
  // accidents, not adversaries, and entries are verified after loading).
  // The digest over the parts stays SHA-256.
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(
      ArrayRef(reinterpret_cast<const uint8_t *>(value.data()), value.size()));
  parts_.emplace_back(name.str(), utohexstr(hash.high64, /*LowerCase=*/true,
                                            /*Width=*/16) +
                                      utohexstr(hash.low64, /*LowerCase=*/true,
                                                /*Width=*/16));
  return *this;
}

std::string CacheKey::digest() const {
  SHA256 hash;
  for (const auto &[name, value] : parts_) {
    hash.update(name);
    hash.update("=");
    hash.update(value);
    hash.update("\n");
  }
  return toHex(hash.final(), /*LowerCase=*/true);
}

json::Object CacheKey::explain() const {
  json::Object obj;
  for (const auto &[name, value] : parts_)
    obj[name] = value.substr(0, 16);
  return obj;
}

std::string getToolchainFingerprint() {
  return std::string("llvm=" LLVM_VERSION_STRING " fly=" FLY_VERSION
                     " build=") +
         buildId();
}

/// Size and modification time of a file, or "-" if absent.
static std::string describeFile(const Twine &path) {
  sys::fs::file_status status;
  if (sys::fs::status(path, status) || !sys::fs::exists(status))
    return "-";
  return std::to_string(status.getSize()) + "@" +
         std::to_string(
             status.getLastModificationTime().time_since_epoch().count());
}

std::string getToolkitFingerprint(StringRef binaryPass) {
  std::string out;
  // The toolkit option, as the binary pass prints it: toolkit=<path>.
  StringRef toolkit;
  size_t at = binaryPass.find("toolkit=");
  if (at != StringRef::npos)
    toolkit = binaryPass.drop_front(at + 8).take_until(
        [](char c) { return c == ' ' || c == '}'; });
  out += "toolkit=" + toolkit.str();
  if (!toolkit.empty()) {
    for (const char *tool :
         {"bin/ptxas", "bin/fatbinary", "llvm/bin/ld.lld",
          "amdgcn/bitcode/ocml.bc", "amdgcn/bitcode/ockl.bc"}) {
      SmallString<256> path(toolkit);
      sys::path::append(path, tool);
      out += std::string(" ") + tool + "=" + describeFile(path);
    }
  }
  for (const char *var : {"CUDA_PATH", "CUDA_HOME", "ROCM_PATH", "HIP_PATH"})
    out +=
        std::string(" ") + var + "=" + sys::Process::GetEnv(var).value_or("");
  return out;
}

CacheKey makeBaseKey(StringRef source, StringRef prefixPipeline,
                     StringRef chip) {
  CacheKey key;
  key.add("source", source)
      .add("prefix", prefixPipeline)
      .add("chip", chip)
      .add("toolchain", getToolchainFingerprint());
  return key;
}

CacheKey makeBinaryKey(const CacheKey &baseKey, const HintSet &hints,
                       StringRef binaryPass) {
  CacheKey key;
  key.add("base", baseKey.digest())
      .add("hints", hints.canonical())
      .add("binary_pass", binaryPass)
      .add("toolkit", getToolkitFingerprint(binaryPass))
      .add("variant_codec", kVariantCodecVersion);
  return key;
}

} // namespace fly
