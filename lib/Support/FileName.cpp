//===- FileName.cpp - File names built from untrusted text ----------------===//

#include "fly/Support/FileName.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

using namespace llvm;

namespace fly {

static bool isSafeChar(char c) {
  return isAlnum(c) || c == '_' || c == '-' || c == '.';
}

std::string sanitizeFileNameComponent(StringRef text) {
  constexpr size_t kMaxLength = 96;
  std::string out;
  for (char c : text.take_front(kMaxLength))
    out += isSafeChar(c) ? c : '_';
  if (!out.empty() && out.front() == '.')
    out.front() = '_';
  if (out == text && !out.empty())
    return out;
  return out + "-" +
         utohexstr(xxh3_64bits(text) & 0xffffffffu, /*LowerCase=*/true,
                   /*Width=*/8);
}

bool isPlainFileName(StringRef name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(StringRef("/\\\0", 3)) == StringRef::npos;
}

} // namespace fly
