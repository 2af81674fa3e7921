//===- FreeMemoryReleaser.cpp - Free heap pages back ----------------------===//

#include "Executor/FreeMemoryReleaser.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace fly {

void releaseFreeHeapPages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

#if defined(__GLIBC__)
static bool userTunedTheAllocator() {
  const char *tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc."))
    return true;
  for (const char *name : {"MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_",
                           "MALLOC_TRIM_THRESHOLD_", "MALLOC_ARENA_MAX"})
    if (std::getenv(name))
      return true;
  return false;
}
#endif

void growHeapsInLargeSteps() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    if (userTunedTheAllocator())
      return;
    // 4 MiB of padding per growth: a few mprotects per thread instead of
    // thousands (4 MiB and 64 MiB gained alike on the H200, and a trim
    // leaves up to the padding in each arena). Setting it turns off glibc's
    // adaptive mmap threshold, which would otherwise rise to 32 MiB as large
    // blocks are freed; so it is set there at once, and blocks up to it come
    // from the arenas, which releaseFreeHeapPages trims, rather than from mmap
    // and munmap.
    mallopt(M_TOP_PAD, 4 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
  });
#endif
}

} // namespace fly
