//===- CacheKey.h - Keys of the two-level compile cache ---------*- C++ -*-===//
//
// Level 1 caches the pre-binary module under the base key: input module,
// prefix pipeline, chip, toolchain. Level 2 caches each variant's objects
// under the full key: base key + canonical hint set + binary pass options +
// toolkit. Hints are deliberately absent from the base key: changing only
// hints must reuse the prefix.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_CACHE_CACHEKEY_H
#define FLY_CACHE_CACHEKEY_H

#include "fly/Hints/HintSet.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <utility>
#include <vector>

namespace fly {

class CacheKey {
public:
  /// Adds a named part; its value is hashed (XXH3-128), not stored.
  CacheKey &add(llvm::StringRef name, llvm::StringRef value);

  /// SHA-256 over all parts, as 64 hex digits. Equal parts give equal digests
  /// in every process.
  std::string digest() const;
  /// name -> short hash of each part, to say which part changed on a miss.
  llvm::json::Object explain() const;

  const std::vector<std::pair<std::string, std::string>> &parts() const {
    return parts_;
  }

private:
  std::vector<std::pair<std::string, std::string>> parts_; // name, hash
};

/// LLVM version and this library's version and build.
std::string getToolchainFingerprint();

/// What the binary pass's output depends on beyond the IR: the toolkit it
/// names (tools' size and mtime) and toolkit-related environment variables.
std::string getToolkitFingerprint(llvm::StringRef binaryPass);

CacheKey makeBaseKey(llvm::StringRef source, llvm::StringRef prefixPipeline,
                     llvm::StringRef chip);
/// The level-2 key: base key, hints, binary pass, toolkit and the layout of
/// the payload stored under it (kVariantCodecVersion).
CacheKey makeBinaryKey(const CacheKey &baseKey, const HintSet &hints,
                       llvm::StringRef binaryPass);

} // namespace fly

#endif // FLY_CACHE_CACHEKEY_H
