//===- SafeFile.h - Bounded reads and atomic writes of files ----*- C++ -*-===//
//
// Reads that cannot hang or exhaust memory: a FIFO, a device (/dev/zero) or a
// directory under a name that should hold a file is refused without
// blocking, and a file larger than the caller's bound is refused before it is
// read. Writes that never leave a partial file under the final name: the
// bytes go to a unique temporary that is renamed into place only when every
// byte reached the disk; a full disk is an Error, not a fatal
// "IO failure on output stream".
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_SAFEFILE_H
#define FLY_SUPPORT_SAFEFILE_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace fly {

/// Whether a symbolic link as the last component of a path is followed.
/// Readers of files that another tool's output names (fly-run's manifest,
/// spec, buffers) refuse it: such a name must not lead out of its directory.
enum class FinalSymlink { Follow, Refuse };

/// The contents of `path` if it is a regular file of at most `maxBytes`
/// bytes. Opened non-blocking so that a FIFO without a writer is reported,
/// not waited on. `status`, if given, receives the opened file's status
/// (owner, permissions) for callers that check who wrote it.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readRegularFile(const llvm::Twine &path, uint64_t maxBytes,
                llvm::sys::fs::file_status *status = nullptr,
                FinalSymlink symlink = FinalSymlink::Follow);

/// readRegularFile's bytes as a string.
llvm::Expected<std::string>
readRegularFileText(const llvm::Twine &path, uint64_t maxBytes,
                    FinalSymlink symlink = FinalSymlink::Follow);

/// Whether `path` names something that is not a regular file (a FIFO, a
/// device, a directory; with FinalSymlink::Refuse a symbolic link too),
/// without opening it. False when nothing is there (or a followed link
/// dangles).
bool existsAsNonRegularFile(const llvm::Twine &path,
                            FinalSymlink symlink = FinalSymlink::Refuse);

/// Writes `contents` to `path` through a unique temporary beside it (created
/// exclusively, removed on signals) renamed into place once complete.
/// `mode` is the new file's permission bits (before the umask).
llvm::Error writeFileAtomically(const llvm::Twine &path,
                                llvm::StringRef contents,
                                unsigned mode = llvm::sys::fs::all_read |
                                                llvm::sys::fs::owner_write);

} // namespace fly

#endif // FLY_SUPPORT_SAFEFILE_H
