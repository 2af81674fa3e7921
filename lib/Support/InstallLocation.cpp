//===- InstallLocation.cpp - Where the running fly code lives -------------===//

#include "fly/Support/InstallLocation.h"

#include "Location/CodeFile.h"

#include "llvm/Support/Path.h"

using namespace llvm;

namespace fly {

std::string getProgramPath() { return location::getExecutablePath(); }

std::string getProgramDir() {
  return sys::path::parent_path(getProgramPath()).str();
}

std::string getCodeFilePath(const void *address) {
  std::string file = location::getCodeFilePath(address);
  return file.empty() ? getProgramPath() : file;
}

} // namespace fly
