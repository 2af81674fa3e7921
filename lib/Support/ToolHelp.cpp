//===- ToolHelp.cpp - How fly's tools present their options ---------------===//

#include "fly/Support/ToolHelp.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#ifndef FLY_VERSION
#define FLY_VERSION "0.0.0"
#endif
// Captured when CMake configures the build (lib/CMakeLists.txt).
#ifndef FLY_GIT_REVISION
#define FLY_GIT_REVISION "unknown"
#endif

using namespace llvm;

namespace fly {

StringRef getVersionString() {
  return "fly-snapshot " FLY_VERSION " (git " FLY_GIT_REVISION ")";
}

void addVersionPrinter() {
  // Printed after LLVM's own "LLVM version" lines.
  cl::AddExtraVersionPrinter(
      [](raw_ostream &os) { os << getVersionString() << "\n"; });
}

void hideUnrelatedOptions(ArrayRef<const cl::OptionCategory *> keep) {
  for (auto &[name, option] : cl::getRegisteredOptions()) {
    if (option->getOptionHiddenFlag() != cl::NotHidden)
      continue;
    bool related = llvm::any_of(option->Categories, [&](const auto *category) {
      return llvm::is_contained(keep, category) ||
             category->getName() == "Generic Options";
    });
    if (!related)
      option->setHiddenFlag(cl::Hidden);
  }
}

} // namespace fly
