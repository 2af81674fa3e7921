//===- RegularFile.cpp - Bounded reads of regular files -------------------===//

#include "fly/Runtime/RegularFile.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Errno.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace fly::rt {

Expected<std::string> readRegularFile(StringRef path, uint64_t maxBytes) {
  auto fail = [&](std::error_code ec, const Twine &why) {
    return createStringError(ec, "cannot read '%s': %s", path.str().c_str(),
                             why.str().c_str());
  };
  int fd = sys::RetryAfterSignal(-1, [&] {
    return ::open(path.str().c_str(),
                  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  });
  if (fd < 0) {
    std::error_code ec(errno, std::generic_category());
    return fail(ec, errno == ELOOP ? "it is a symbolic link" : ec.message());
  }
  scope_exit closer([&] { ::close(fd); });
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return fail(std::error_code(errno, std::generic_category()),
                "fstat failed");
  if (!S_ISREG(st.st_mode))
    return fail(std::make_error_code(std::errc::invalid_argument),
                "not a regular file");
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    return fail(std::make_error_code(std::errc::file_too_large),
                Twine(st.st_size) + " bytes, more than the " + Twine(maxBytes) +
                    " expected");
  std::string data(static_cast<size_t>(st.st_size), '\0');
  for (size_t done = 0; done < data.size();) {
    ssize_t n =
        sys::RetryAfterSignal(-1, ::read, fd, &data[done], data.size() - done);
    if (n <= 0)
      return fail(std::error_code(n < 0 ? errno : EIO, std::generic_category()),
                  "short read");
    done += static_cast<size_t>(n);
  }
  return data;
}

bool isPlainFileName(StringRef name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(StringRef("/\0", 2)) == StringRef::npos;
}

} // namespace fly::rt
