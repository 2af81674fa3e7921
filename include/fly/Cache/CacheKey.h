//===- CacheKey.h - Keys of the two-level compile cache ---------*- C++ -*-===//
//
// Level 1 caches the pre-binary module under the base key: input module,
// prefix pipeline, chip, toolchain, non-default llvm::cl options. Level 2
// caches each variant's objects under the full key: base key + canonical hint
// set + binary pass options + every file the binary pass reads (toolkit,
// libraries). Hints are deliberately absent from the base key: changing only
// hints must reuse the prefix.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_CACHE_CACHEKEY_H
#define FLY_CACHE_CACHEKEY_H

#include "fly/Hints/HintSet.h"
#include "fly/Replay/BinaryPass.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
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

/// What the binary pass reads besides the IR and its options.
struct BinaryPassInputs {
  /// The module has NVVM / ROCDL targets (ptxas and fatbinary / the device
  /// libraries are read).
  bool nvvm = false;
  bool rocdl = false;
  /// Files the targets link (`#rocdl.target<link = [...]>`, NVVM `link`).
  std::vector<std::string> targetLinkFiles;
};

/// What the targets of `module`'s gpu.modules make the binary pass read.
BinaryPassInputs getBinaryPassInputs(mlir::ModuleOp module);

/// What the binary pass's output depends on beyond the IR: the contents
/// (hashed) of every file it reads (the pass's `l=` and the targets' link
/// libraries, the device libraries, ptxas and fatbinary with path, version
/// and content) and toolkit-related environment variables. Each file is
/// hashed once per process while its size and mtime stay the same.
std::string getToolkitFingerprint(const BinaryPassOptions &pass,
                                  const BinaryPassInputs &inputs);

/// What `<tool> --version` prints (the last 4 KB, trimmed), bounded in time;
/// "?" if it cannot be run.
std::string getToolVersion(llvm::StringRef tool);

/// The LLVM and MLIR command-line options (llvm::cl) that differ from their
/// defaults: they change what the compiler makes (--stress-regalloc=8).
struct CommandLineFingerprint {
  /// "name=value" lines, sorted; "" when every option has its default.
  std::string text;
  /// Options given that cannot be compared with their default (lists,
  /// values that do not print): a run with them must not use the cache.
  std::vector<std::string> incomparable;
};
CommandLineFingerprint getCommandLineFingerprint();

/// Options of `category` (a tool's own: output paths, -j, its hint flags,
/// which reach the compile as typed inputs) stay out of
/// getCommandLineFingerprint.
void excludeFromCacheKey(const llvm::cl::OptionCategory &category);

/// `commandLine`: getCommandLineFingerprint().text.
CacheKey makeBaseKey(llvm::StringRef source, llvm::StringRef prefixPipeline,
                     llvm::StringRef chip, llvm::StringRef commandLine = "");
/// The level-2 key: base key, hints, binary pass (printBinaryPass of the
/// pass this variant runs), toolkit (getToolkitFingerprint) and the layout of
/// the payload stored under it (kVariantCodecVersion).
CacheKey makeBinaryKey(const CacheKey &baseKey, const HintSet &hints,
                       llvm::StringRef binaryPass,
                       llvm::StringRef toolkitFingerprint);

} // namespace fly

#endif // FLY_CACHE_CACHEKEY_H
