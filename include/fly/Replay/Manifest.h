//===- Manifest.h - Write a sweep's objects and manifest.json ---*- C++ -*-===//

#ifndef FLY_REPLAY_MANIFEST_H
#define FLY_REPLAY_MANIFEST_H

#include "fly/Replay/VariantResult.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace fly {

/// The manifest entry of one variant. `files` are the names written for it.
llvm::json::Object variantToJSON(const VariantResult &result,
                                 llvm::ArrayRef<std::string> files);

/// Writes, per successful variant, `<id>.mlir` (its gpu.binary ops) and one
/// raw object per gpu.module (`<id>.<module><ext>`, the module name
/// sanitised), then `manifest.json` describing every variant, failed ones
/// included. The out-dir is replaced as a whole (OutputDirectory): on an
/// error the previous one is left as it was. `sweep` holds the manifest's
/// top-level fields besides `variants`.
/// `extraFiles` (name, contents) are written with them, e.g. fly-tune's
/// main.mlir.
llvm::Error writeSweepOutputs(
    llvm::StringRef outDir, llvm::ArrayRef<VariantResult> results,
    llvm::json::Object sweep,
    llvm::ArrayRef<std::pair<std::string, std::string>> extraFiles = {});

} // namespace fly

#endif // FLY_REPLAY_MANIFEST_H
