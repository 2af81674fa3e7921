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
  // For code in the main program dladdr gives the name it was started by,
  // which may be a bare name: the program's own path then.
  Dl_info info;
  if (dladdr(address, &info) && info.dli_fname &&
      sys::path::is_absolute(info.dli_fname))
    return info.dli_fname;
  return getProgramPath();
}

} // namespace fly
