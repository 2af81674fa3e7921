//===- FreeMemoryReleaser.cpp - Free heap pages back ----------------------===//

#include "Executor/FreeMemoryReleaser.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace fly {

void releaseFreeHeapPages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

} // namespace fly
