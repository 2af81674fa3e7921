//===- InstallLocation.cpp - Where the running fly code lives -------------===//

#include "fly/Support/InstallLocation.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>

using namespace llvm;

namespace fly {

std::string getProgramPath() {
  static int anchor;
  return sys::fs::getMainExecutable(nullptr, &anchor);
}

std::string getProgramDir() {
  return sys::path::parent_path(getProgramPath()).str();
}

std::string getCodeFilePath(const void *address) {
  // dladdr gives the name the code was loaded by: relative to the working
  // directory for a library dlopen'ed as "lib/libFlySnapshotCAPI.so"; for
  // code in the main program, the name it was started by, which may be a
  // bare name found on PATH: the program's own path then.
  Dl_info info;
  if (dladdr(address, &info) && info.dli_fname && *info.dli_fname) {
    SmallString<256> loaded(info.dli_fname);
    if (!sys::path::is_absolute(loaded) && sys::path::has_parent_path(loaded))
      sys::fs::make_absolute(loaded);
    if (sys::path::is_absolute(loaded) && sys::fs::is_regular_file(loaded))
      return std::string(loaded);
  }
  return getProgramPath();
}

} // namespace fly
