//===- BoundedJSON.h - JSON parsing with bounded depth and size -*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level, so a few hundred KB of
// '[' overflow the stack of whichever process reads them. Every JSON reader
// of fly (files, environment variables, the C API, child results, cache
// records) parses through here: the nesting depth and the size are checked
// by a linear scan first, as are keys repeated in one object (llvm::json
// would keep the last silently), and an error names the source, the line
// and the column.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_BOUNDEDJSON_H
#define FLY_SUPPORT_BOUNDEDJSON_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>

namespace fly {

struct JSONLimits {
  /// The deepest nesting of arrays and objects accepted. fly's own documents
  /// nest fewer than 10 levels.
  unsigned maxDepth = 256;
  uint64_t maxBytes = 256ull << 20;
};

/// Parses `text` after checking it against `limits`. Errors start with
/// "<source>:" when `source` (a file name, "FLY_HINT_SETS", ...) is given.
llvm::Expected<llvm::json::Value> parseJSONBounded(llvm::StringRef text,
                                                   llvm::StringRef source,
                                                   JSONLimits limits = {});

/// parseJSONBounded, then `fromJSON` into a T; a mapping error names its
/// JSON path below `rootName`.
template <typename T>
llvm::Expected<T>
parseJSONBoundedAs(llvm::StringRef text, llvm::StringRef source,
                   llvm::StringRef rootName = "", JSONLimits limits = {}) {
  llvm::Expected<llvm::json::Value> value =
      parseJSONBounded(text, source, limits);
  if (!value)
    return value.takeError();
  T result;
  llvm::json::Path::Root root(rootName);
  if (!fromJSON(*value, result, root)) {
    llvm::Error err = root.getError();
    if (source.empty())
      return std::move(err);
    return llvm::createStringError(source + ": " +
                                   llvm::toString(std::move(err)));
  }
  return std::move(result);
}

} // namespace fly

#endif // FLY_SUPPORT_BOUNDEDJSON_H
