//===- PollyPluginStub.cpp - getPollyPluginInfo for static LLVM links -----===//
//
// Debian's static LLVM was configured with Polly linked into the tools, so
// libLLVMLTO, libLLVMExtensions and libLLVMOptDriver call
// getPollyPluginInfo() (llvm/Support/Extension.def) - but no static Polly is
// shipped, and the libLLVM dylib resolves it internally. fly never runs
// Polly; this plugin registers nothing, which is what a build without Polly
// would do.
//
//===----------------------------------------------------------------------===//

#include "llvm/Config/llvm-config.h"
#include "llvm/Plugins/PassPlugin.h"

llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly (not linked)", LLVM_VERSION_STRING,
          [](llvm::PassBuilder &) {}};
}
