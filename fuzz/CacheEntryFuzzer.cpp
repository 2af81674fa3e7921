//===- CacheEntryFuzzer.cpp - libFuzzer target for cache entries ----------===//
//
// A disk cache entry is untrusted input: another build, a truncated write or
// plain garbage may sit under FLY_CACHE_DIR. This target feeds arbitrary
// bytes to
//   - unframeCacheEntry (magic, key, toolchain, checksum, length) and, when
//     the frame is intact, decodeVariant on its payload;
//   - decodeVariant directly (random bytes almost never pass the checksum,
//     so the decoder is fuzzed unframed as well);
// and checks, aborting on failure:
//   - unframeCacheEntry(frameCacheEntry(k, x)) gives back k, the toolchain
//     and x for every x;
//   - a variant that decodes re-encodes to a payload that decodes to the
//     same encoding (encode is a fixed point after one decode), unless it
//     holds a non-finite number (see hasNonFinite);
//   - a frame cut short never unframes to another payload.
//
//===----------------------------------------------------------------------===//

#include "fly/Cache/CacheKey.h"
#include "fly/Cache/CompileCache.h"
#include "fly/Cache/VariantCodec.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace llvm;

static void fail(const char *what) {
  std::fprintf(stderr, "CacheEntryFuzzer invariant violated: %s\n", what);
  std::abort();
}

/// llvm::json parses a number too large for a double (`1e999`) as infinity
/// and prints infinity and NaN as `inf` / `nan`, which is not JSON: such a
/// value does not survive encode -> decode. That is llvm::json's behaviour,
/// not fly's (fly writes only finite numbers), so variants holding one are
/// not round-tripped.
static bool hasNonFinite(const json::Value &value) {
  if (std::optional<double> d = value.getAsNumber())
    return !std::isfinite(*d);
  if (const json::Object *o = value.getAsObject())
    return llvm::any_of(*o,
                        [](const auto &kv) { return hasNonFinite(kv.second); });
  if (const json::Array *a = value.getAsArray())
    return llvm::any_of(*a,
                        [](const json::Value &v) { return hasNonFinite(v); });
  return false;
}

static bool hasNonFinite(const fly::VariantResult &variant) {
  if (!std::isfinite(variant.replayMs))
    return true;
  for (const fly::VariantObject &object : variant.objects) {
    if (hasNonFinite(json::Object(object.properties)))
      return true;
    for (const fly::KernelInfo &kernel : object.kernels)
      if (hasNonFinite(json::Object(kernel.metadata)))
        return true;
  }
  return false;
}

static void checkDecode(StringRef payload) {
  std::optional<fly::VariantResult> variant = fly::decodeVariant(payload);
  if (!variant || hasNonFinite(*variant))
    return;
  std::string encoded = fly::encodeVariant(*variant);
  std::optional<fly::VariantResult> again = fly::decodeVariant(encoded);
  if (!again)
    fail("an encoded variant does not decode");
  if (fly::encodeVariant(*again) != encoded)
    fail("encode(decode(encode(v))) != encode(v)");
  if (again->objects.size() != variant->objects.size() ||
      again->objectHash != variant->objectHash)
    fail("decoded variant lost objects or its hash");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef input(reinterpret_cast<const char *>(data), size);

  if (std::optional<fly::CacheEntryFrame> frame = fly::unframeCacheEntry(input))
    checkDecode(frame->payload);
  checkDecode(input);

  static constexpr StringLiteral kKey =
      "binary:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  std::string framed = fly::frameCacheEntry(kKey, input);
  std::optional<fly::CacheEntryFrame> back = fly::unframeCacheEntry(framed);
  if (!back || back->payload != input || back->key != kKey ||
      back->toolchain != fly::getToolchainFingerprint())
    fail("unframeCacheEntry(frameCacheEntry(k, x)) != (k, toolchain, x)");
  // A frame cut short (a truncated write) never yields another payload.
  // (Dropping the header's newline of an empty payload still yields "".)
  for (size_t cut : {size_t(1), framed.size() / 2, framed.size() - 1})
    if (std::optional<fly::CacheEntryFrame> part =
            fly::unframeCacheEntry(StringRef(framed).drop_back(cut)))
      if (part->payload != input || part->key != kKey)
        fail("a truncated frame was accepted with another payload or key");
  return 0;
}
