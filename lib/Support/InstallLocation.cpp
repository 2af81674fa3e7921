//===- InstallLocation.cpp - Where the running fly code lives -------------===//

#include "fly/Support/InstallLocation.h"

#include "Location/CodeFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
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

std::string findChildTool(StringRef name) {
  std::string holder = getCodeFilePath(reinterpret_cast<const void *>(
      static_cast<std::string (*)(StringRef)>(&findChildTool)));
  SmallString<256> real;
  if (holder.empty() || sys::fs::real_path(holder, real))
    return "";
  SmallString<256> tool(sys::path::parent_path(sys::path::parent_path(real)));
  sys::path::append(tool, "bin", name);
  return sys::fs::can_execute(tool) ? std::string(tool) : "";
}

} // namespace fly
