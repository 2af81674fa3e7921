//===- CacheEntryFuzzer.cpp - libFuzzer target for cache entries ----------===//
//
// A disk cache entry is untrusted input: another build, a truncated write or
// plain garbage may sit under FLY_CACHE_DIR. This target feeds arbitrary
// bytes to
//   - unframeCacheEntry (magic, key, toolchain, checksum, length) and, when
//     the frame is intact, decodeVariant on its payload (its attributes are
//     parsed in a context with the GPU, LLVM, ROCDL and NVVM dialects);
//   - decodeVariant directly (random bytes almost never pass the checksum,
//     so the decoder is fuzzed unframed as well);
// and checks, aborting on failure:
//   - unframeCacheEntry(frameCacheEntry(k, x)) gives back k, the toolchain
//     and x for every x;
//   - a variant that decodes re-encodes to a payload that decodes to the
//     same encoding (encode is a fixed point after one decode), unless its
//     replay time is not a finite number (see hasNonFinite);
//   - a frame cut short never unframes to another payload.
//
//===----------------------------------------------------------------------===//

#include "fly/Cache/CacheKey.h"
#include "fly/Cache/CompileCache.h"
#include "fly/Cache/VariantCodec.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace llvm;

namespace {
/// One context, recreated now and then: attributes parsed from random input
/// are uniqued in it forever (as in SnapshotFuzzer).
struct FuzzContext {
  std::unique_ptr<mlir::MLIRContext> context;
  unsigned uses = 0;

  mlir::MLIRContext &get() {
    if (!context || ++uses > 20000) {
      mlir::DialectRegistry registry;
      registry.insert<mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                      mlir::ROCDL::ROCDLDialect, mlir::NVVM::NVVMDialect>();
      mlir::ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
      mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
      context = std::make_unique<mlir::MLIRContext>(
          registry, mlir::MLIRContext::Threading::DISABLED);
      context->loadAllAvailableDialects();
      uses = 0;
    }
    return *context;
  }
};
} // namespace

static void fail(const char *what) {
  std::fprintf(stderr, "CacheEntryFuzzer invariant violated: %s\n", what);
  std::abort();
}

/// llvm::json parses a number too large for a double (`1e999`) as infinity
/// and prints infinity and NaN as `inf` / `nan`, which is not JSON: such a
/// replay time does not survive encode -> decode. That is llvm::json's
/// behaviour, not fly's (fly writes only finite numbers; the objects'
/// properties and kernel tables are MLIR attributes, whose printer keeps
/// every float), so such variants are not round-tripped.
static bool hasNonFinite(const fly::VariantResult &variant) {
  return !std::isfinite(variant.replayMs);
}

static void checkDecode(StringRef payload, mlir::MLIRContext &context) {
  std::optional<fly::VariantResult> variant =
      fly::decodeVariant(payload, context);
  if (!variant || hasNonFinite(*variant))
    return;
  std::string encoded = fly::encodeVariant(*variant);
  std::optional<fly::VariantResult> again =
      fly::decodeVariant(encoded, context);
  if (!again)
    fail("an encoded variant does not decode");
  if (fly::encodeVariant(*again) != encoded)
    fail("encode(decode(encode(v))) != encode(v)");
  if (again->objects.size() != variant->objects.size() ||
      again->objectHash != variant->objectHash)
    fail("decoded variant lost objects or its hash");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FuzzContext fuzzContext;
  mlir::MLIRContext &context = fuzzContext.get();
  StringRef input(reinterpret_cast<const char *>(data), size);

  if (std::optional<fly::CacheEntryFrame> frame = fly::unframeCacheEntry(input))
    checkDecode(frame->payload, context);
  checkDecode(input, context);

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
