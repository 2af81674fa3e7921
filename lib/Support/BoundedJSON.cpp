//===- BoundedJSON.cpp - JSON parsing with bounded depth and size ---------===//

#include "fly/Support/BoundedJSON.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>
#include <vector>

using namespace llvm;

namespace fly {

static Error limitError(StringRef source, const Twine &what) {
  if (source.empty())
    return createStringError(std::make_error_code(std::errc::invalid_argument),
                             what);
  return createStringError(std::make_error_code(std::errc::invalid_argument),
                           source + ": " + what);
}

Expected<json::Value> parseJSONBounded(StringRef text, StringRef source,
                                       JSONLimits limits) {
  if (text.size() > limits.maxBytes)
    return limitError(source, formatv("the JSON text is {0} bytes, more than "
                                      "the {1} accepted",
                                      text.size(), limits.maxBytes));
  // Brackets inside strings do not nest; a backslash escapes the next
  // character of a string. One set of keys per open object (arrays push
  // none): llvm::json keeps the last of a repeated key silently
  // ({"maxnreg":64,"maxnreg":32} would read as 32).
  std::vector<std::optional<StringSet<>>> open;
  unsigned line = 1;
  size_t lineStart = 0;
  for (size_t i = 0, e = text.size(); i != e; ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    } else if (c == '[' || c == '{') {
      if (open.size() + 1 > limits.maxDepth)
        return limitError(source,
                          formatv("{0}:{1}: JSON nested deeper than the {2} "
                                  "levels accepted",
                                  line, i - lineStart + 1, limits.maxDepth));
      open.emplace_back(c == '{' ? std::optional<StringSet<>>(StringSet<>())
                                 : std::nullopt);
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    } else if (c == '"') {
      size_t start = i;
      std::string str;
      for (++i; i != e && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 != e)
          ++i; // Compared as written, which is exact for keys.
        str += text[i];
      }
      if (i == e)
        break; // Unterminated: json::parse says where.
      // A key is a string followed by ':'.
      size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      if (next == StringRef::npos || text[next] != ':' || open.empty() ||
          !open.back())
        continue;
      if (!open.back()->insert(str).second)
        return limitError(source,
                          formatv("line {0}, column {1}: key \"{2}\" appears "
                                  "twice in one object",
                                  line, start - lineStart + 1, str));
    }
  }
  Expected<json::Value> value = json::parse(text);
  if (!value && !source.empty())
    return createStringError(source + ":" + toString(value.takeError()));
  return value;
}

} // namespace fly
