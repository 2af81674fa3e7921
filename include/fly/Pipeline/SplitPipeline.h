//===- SplitPipeline.h - Split a pipeline at gpu-module-to-binary -*- C++
//-*-===//
//
// A compile is prefix + binary pass + host suffix. The prefix is identical
// for every hint set and runs once; the binary pass is replayed per hint set;
// the suffix (host-side passes that registered pipelines such as
// gpu-lower-to-nvvm-pipeline run after the binary pass) runs once on the main
// module. The split works on the parsed pass list, so registered pipelines
// are expanded before looking for the binary pass.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_PIPELINE_SPLITPIPELINE_H
#define FLY_PIPELINE_SPLITPIPELINE_H

#include "mlir/Support/LLVM.h"

#include "llvm/Support/Error.h"

#include <string>

namespace fly {

struct SplitPipeline {
  /// Textual pass lists (no builtin.module anchor); may be empty.
  std::string prefix;
  std::string binaryPass;
  std::string suffix;
};

/// Splits `pipeline` (with or without a `builtin.module(...)` anchor). Errors
/// name what was found when there is no gpu-module-to-binary, more than one,
/// or one nested under another op: never a silent fallback to the whole
/// pipeline.
llvm::Expected<SplitPipeline> splitAtBinaryPass(llvm::StringRef pipeline);

/// Strips one `builtin.module(...)` anchor, if present.
llvm::StringRef stripModuleAnchor(llvm::StringRef pipeline);

} // namespace fly

#endif // FLY_PIPELINE_SPLITPIPELINE_H
