//===- VariantCodec.h - VariantResult <-> cache payload ---------*- C++ -*-===//

#ifndef FLY_CACHE_VARIANTCODEC_H
#define FLY_CACHE_VARIANTCODEC_H

#include "fly/Replay/VariantResult.h"

#include <optional>

namespace fly {

/// Serialises a variant's outcome (objects base64-encoded, or its error) as
/// JSON text; the plan says which hint set it belongs to.
std::string encodeVariant(const VariantResult &result);
/// Restores the fields encodeVariant wrote; nullopt if `payload` is not a
/// well-formed entry.
std::optional<VariantResult> decodeVariant(llvm::StringRef payload);

} // namespace fly

#endif // FLY_CACHE_VARIANTCODEC_H
