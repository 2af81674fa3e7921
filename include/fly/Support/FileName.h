//===- FileName.h - File names built from untrusted text --------*- C++ -*-===//
//
// Output file names embed text from the input (gpu.module symbols, hint
// labels). A symbol may be any string, `@"/../../x"` included, so each such
// component is sanitised before it becomes part of a name, and every name is
// checked to be one plain component before anything is written under it.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_FILENAME_H
#define FLY_SUPPORT_FILENAME_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace fly {

/// `text` as one file-name component: characters other than [A-Za-z0-9._-]
/// become '_', a leading '.' becomes '_', the result is at most 96
/// characters. Text that had to change gets "-<8 hex of its xxh3>" appended
/// so that distinct inputs keep distinct names ("a/b" vs "a_b"). Text that
/// is already safe is returned unchanged.
std::string sanitizeFileNameComponent(llvm::StringRef text);

/// Whether `name` is one non-empty path component that stays in the
/// directory it is appended to: no separator, not "." or "..", no NUL.
bool isPlainFileName(llvm::StringRef name);

} // namespace fly

#endif // FLY_SUPPORT_FILENAME_H
