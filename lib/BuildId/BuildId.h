//===- BuildId.h - The hash of the fly objects this build made --*- C++ -*-===//
//
// Part of the cache key's toolchain: entries made by other code are never
// trusted. Computed at build time from the bytes of every fly object
// (lib/BuildId), so it changes with any rebuild that changes code, with or
// without a CMake run.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BUILDID_BUILDID_H
#define FLY_BUILDID_BUILDID_H

namespace fly {

/// 16 hex digits.
const char *getBuildId();

} // namespace fly

#endif // FLY_BUILDID_BUILDID_H
