//===- CodeFile.h - The files the running code was loaded from --*- C++ -*-===//
//
// The one lookup of where fly's running code lives on disk: the program's
// file, or the shared library that holds a given address. Plain C++ over
// libc and libdl, no LLVM, so that libFlyRuntimeCAPI.so (which links none)
// uses it as fly-run, the tools and libFlySnapshotCAPI.so do
// (fly/Support/InstallLocation.h builds on it).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_LOCATION_CODEFILE_H
#define FLY_LOCATION_CODEFILE_H

#include <string>

namespace fly::location {

/// The running program's file (/proc/self/exe, symlinks resolved), however
/// it was started; "" if unknown.
std::string getExecutablePath();

/// The absolute path of the file that holds the code or data at `address`:
/// the program (getExecutablePath()) or the shared library it lies in. A
/// library loaded by a relative name ("lib/libFlySnapshotCAPI.so") is
/// resolved as it was when loaded, whatever the working directory is now.
/// "" if `address` lies in no file (the heap, the stack, null).
std::string getCodeFilePath(const void *address);

/// The directory of `path` with its trailing '/' ("/a/lib/x.so" -> "/a/lib/");
/// "" if `path` has no '/'.
std::string getDirectoryOf(const std::string &path);

} // namespace fly::location

#endif // FLY_LOCATION_CODEFILE_H
