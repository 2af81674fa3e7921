//===- RegularFile.h - Bounded reads of regular files -----------*- C++ -*-===//
//
// Everything fly-run reads (manifest, objects, spec, data files, the
// best-config store) comes through here: only a regular file, not through a
// final symlink, opened without blocking (a FIFO cannot hang it) and never
// more than `maxBytes` (/dev/zero or a huge sparse file cannot exhaust
// memory).
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
