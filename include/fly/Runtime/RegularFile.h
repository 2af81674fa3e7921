//===- RegularFile.h - Bounded reads of regular files -----------*- C++ -*-===//
//
// Everything fly-run reads comes through here: a regular file only, not
// through a final symlink, opened without blocking (no FIFO hangs it), at
// most `maxBytes` (neither /dev/zero nor a sparse giant exhausts memory).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_REGULARFILE_H
#define FLY_RUNTIME_REGULARFILE_H

#include "llvm/Support/Error.h"

#include <string>

namespace fly::rt {

llvm::Expected<std::string> readRegularFile(llvm::StringRef path,
                                            uint64_t maxBytes);

/// Whether `name` is one plain file name: no '/', not "." or "..", no NUL.
bool isPlainFileName(llvm::StringRef name);

} // namespace fly::rt

#endif // FLY_RUNTIME_REGULARFILE_H
