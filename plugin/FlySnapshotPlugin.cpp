//===- FlySnapshotPlugin.cpp - mlir-opt pass plugin -----------------------===//
//
// Loaded with `mlir-opt --load-pass-plugin=FlySnapshotPlugin.so`. The plugin
// links libMLIR.so so that it registers into mlir-opt's own pass registry.
//
//===----------------------------------------------------------------------===//

#include "fly/Transforms/Passes.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FlySnapshot", LLVM_VERSION_STRING,
          []() { fly::registerFlySnapshotPasses(); }};
}
