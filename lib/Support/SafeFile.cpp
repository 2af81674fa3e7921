//===- SafeFile.cpp - Bounded reads and atomic writes of files ------------===//

#include "fly/Support/SafeFile.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Errno.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <unistd.h>

using namespace llvm;

namespace fly {

Expected<std::unique_ptr<MemoryBuffer>>
readRegularFile(const Twine &path, uint64_t maxBytes,
                sys::fs::file_status *statusOut, FinalSymlink symlink) {
  SmallString<256> name;
  path.toVector(name);
  // O_NONBLOCK: open() of a FIFO without a writer returns at once instead of
  // waiting for one; the type check below then refuses it.
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
  if (symlink == FinalSymlink::Refuse)
    flags |= O_NOFOLLOW;
  int fd =
      sys::RetryAfterSignal(-1, [&] { return ::open(name.c_str(), flags); });
  if (fd < 0) {
    std::error_code ec(errno, std::generic_category());
    return createStringError(ec, "cannot read '%s': %s", name.c_str(),
                             symlink == FinalSymlink::Refuse &&
                                     ec.value() == ELOOP
                                 ? "it is a symbolic link"
                                 : ec.message().c_str());
  }
  llvm::scope_exit closeFd([&] { ::close(fd); });
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(fd, status))
    return createStringError(ec, "cannot read '%s': %s", name.c_str(),
                             ec.message().c_str());
  if (status.type() != sys::fs::file_type::regular_file)
    return createStringError(std::errc::invalid_argument,
                             "cannot read '%s': not a regular file (a FIFO, "
                             "device or directory is not read)",
                             name.c_str());
  if (status.getSize() > maxBytes)
    return createStringError(
        std::errc::file_too_large,
        "cannot read '%s': it is %llu bytes, more than the %llu allowed",
        name.c_str(), (unsigned long long)status.getSize(),
        (unsigned long long)maxBytes);
  // Volatile: read, not mapped, so a file truncated meanwhile cannot fault.
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getOpenFileSlice(fd, name, status.getSize(), /*Offset=*/0,
                                     /*IsVolatile=*/true);
  if (!buffer)
    return createStringError(buffer.getError(), "cannot read '%s': %s",
                             name.c_str(), buffer.getError().message().c_str());
  if (statusOut)
    *statusOut = status;
  return std::move(*buffer);
}

Expected<std::string> readRegularFileText(const Twine &path, uint64_t maxBytes,
                                          FinalSymlink symlink) {
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      readRegularFile(path, maxBytes, nullptr, symlink);
  if (!buffer)
    return buffer.takeError();
  return (*buffer)->getBuffer().str();
}

bool existsAsNonRegularFile(const Twine &path, FinalSymlink symlink) {
  sys::fs::file_status status;
  if (sys::fs::status(path, status,
                      /*Follow=*/symlink == FinalSymlink::Follow))
    return false;
  return status.type() != sys::fs::file_type::regular_file;
}

Error writeFileAtomically(const Twine &path, StringRef contents,
                          unsigned mode) {
  SmallString<256> name;
  path.toVector(name);
  Expected<sys::fs::TempFile> temp =
      sys::fs::TempFile::create(name + ".tmp-%%%%%%%%", mode);
  if (!temp)
    return createStringError(inconvertibleErrorCode(), "cannot write '%s': %s",
                             name.c_str(), toString(temp.takeError()).c_str());
  std::error_code writeError;
  {
    raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    os << contents;
    os.flush();
    if (os.has_error()) {
      writeError = os.error();
      // Cleared: a stream destroyed with an error is a fatal error.
      os.clear_error();
    }
  }
  if (writeError) {
    consumeError(temp->discard());
    return createStringError(writeError, "cannot write '%s': %s", name.c_str(),
                             writeError.message().c_str());
  }
  if (Error err = temp->keep(name)) {
    std::string message = toString(std::move(err));
    consumeError(temp->discard());
    return createStringError(inconvertibleErrorCode(), "cannot write '%s': %s",
                             name.c_str(), message.c_str());
  }
  return Error::success();
}

} // namespace fly
