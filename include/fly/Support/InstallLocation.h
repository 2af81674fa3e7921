//===- InstallLocation.h - Where the running fly code lives -----*- C++ -*-===//
//
// fly finds what it ships beside itself (fly-run beside fly-tune, the
// rocm-toolkit folder, ../bin/fly-tune for child processes) from where its
// code was loaded: the program, or the shared library (libFlySnapshotCAPI.so,
// the plugin) that holds it. Every such lookup of the compile side starts
// here; it asks lib/Location, which the runtime (no LLVM) uses directly.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_INSTALLLOCATION_H
#define FLY_SUPPORT_INSTALLLOCATION_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace fly {

/// The running program's file (/proc/self/exe), however it was started
/// (a bare name on PATH, a symlink, the wheel's launcher); "" if unknown.
std::string getProgramPath();

/// The directory of getProgramPath(); "" if unknown.
std::string getProgramDir();

/// The absolute path of the file that holds the code at `address`: a shared
/// library it was linked into, else the program (also when `address` lies
/// in no file). "" if unknown.
std::string getCodeFilePath(const void *address);

/// The fly tool `name` installed beside this code: <prefix>/bin/<name> for
/// code in <prefix>/bin/fly-tune or <prefix>/lib/libFlySnapshotCAPI.so (or
/// the plugin). "" if it is not there or cannot run. Child processes
/// (executors, reproducers, child links) run what this finds.
std::string findChildTool(llvm::StringRef name = "fly-tune");

} // namespace fly

#endif // FLY_SUPPORT_INSTALLLOCATION_H
