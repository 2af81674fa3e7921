//===- VariantCodec.h - VariantResult <-> cache payload ---------*- C++ -*-===//
//
// The payload of a level-2 cache entry and of a work directory's
// results/<entry>.json: JSON holding the variant's gpu.binary ops typed
// (per object its target, format, properties and kernel table as MLIR
// attributes, printed one by one, and its bytes once, base64) and the
// replay's bookkeeping. Decoding parses each attribute once, builds the
// #gpu.object attributes and reads the objects' metadata from them as after
// a replay; the object hash stored must match. The printed gpu.binary ops
// (the `.mlir` files) are not stored: MLIR prints object bytes escaped, a
// second copy several times their size.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_CACHE_VARIANTCODEC_H
#define FLY_CACHE_VARIANTCODEC_H

#include "fly/Replay/VariantResult.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace fly {

/// The payload layout, part of every level-2 cache key (makeBinaryKey): an
/// entry written in another layout is never looked up (a miss, not a
/// discarded entry). 2: typed binaries, each object stored once (1: objects
/// base64 plus the printed gpu.binary ops).
inline constexpr llvm::StringLiteral kVariantCodecVersion = "2";

/// Serialises a variant's outcome (its gpu.binary ops, or its error) as JSON
/// text; the plan says which hint set it belongs to. `withIntermediates`
/// adds its LLVM IR and ISA (results files; never cache entries).
std::string encodeVariant(const VariantResult &result,
                          bool withIntermediates = false);
/// Restores what encodeVariant wrote, its attributes in `context`; nullopt
/// if `payload` is not a well-formed entry (or its objects do not hash to
/// its object hash). Diagnostics of a bad payload are not emitted.
std::optional<VariantResult> decodeVariant(llvm::StringRef payload,
                                           mlir::MLIRContext &context);

} // namespace fly

#endif // FLY_CACHE_VARIANTCODEC_H
