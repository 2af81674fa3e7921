//===- BoundedJSON.cpp - JSON parsing with bounded depth and size ---------===//

#include "fly/Support/BoundedJSON.h"

#include "llvm/Support/FormatVariadic.h"

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
  // character of a string.
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0, e = text.size(); i != e; ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    }
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limits.maxDepth)
        return limitError(source,
                          formatv("{0}:{1}: JSON nested deeper than the {2} "
                                  "levels accepted",
                                  line, i - lineStart + 1, limits.maxDepth));
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  Expected<json::Value> value = json::parse(text);
  if (!value && !source.empty())
    return createStringError(source + ":" + toString(value.takeError()));
  return value;
}

} // namespace fly
