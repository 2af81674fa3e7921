//===- Manifest.h - Write a sweep's objects and manifest.json ---*- C++ -*-===//

#ifndef FLY_REPLAY_MANIFEST_H
#define FLY_REPLAY_MANIFEST_H

#include "fly/Replay/VariantResult.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fly {

/// Bumped when a manifest key changes meaning or goes away (docs/manifest.md).
constexpr int64_t kManifestSchemaVersion = 1;

/// The manifest's top-level fields besides `variants`: every tool writes the
/// same keys (docs/manifest.schema.json); what a tool does not know is null.
struct SweepHeader {
  /// fly-tune, fly-opt, fly-snapshot (the pass), fly-capi.
  std::string tool;
  /// The input file (or a name for it).
  std::string input;
  /// family:chip, e.g. rocdl:gfx942 (comma-separated with several targets).
  std::optional<std::string> target;
  /// Every target of the pre-binary module (family:chip), where known.
  std::optional<std::vector<std::string>> targets;
  /// The --target= preset that chose the pipeline (null with --pipeline).
  std::optional<std::string> preset;
  /// The host module's file in the out-dir, when there is host code.
  std::optional<std::string> mainModule;
  /// The full pipeline and its split at the binary pass (fly-tune).
  std::optional<std::string> pipeline, prefix, suffix;
  /// The binary pass as replayed (with its options).
  std::string binaryPass;
  /// Whether phase 1 came from the compile cache (tools with a cache).
  std::optional<bool> prefixFromCache;
  std::optional<std::string> baseKey, cacheExplanation;
  std::optional<double> prefixMs, replayMs, totalMs;
  std::vector<std::string> warnings, reproducers;
  /// Per variant, in hint-set order: whether it came from the cache (empty:
  /// all were compiled).
  std::vector<bool> variantFromCache;
  /// Whether best_per_kernel may pick hint sets that change numerics.
  bool bestAllowsNumericsChanges = false;
};

llvm::json::Object toJSON(const SweepHeader &header, size_t variantCount);

/// The manifest entry of one variant. `files` are the names written for it.
llvm::json::Object variantToJSON(const VariantResult &result,
                                 llvm::ArrayRef<std::string> files);

/// A sweep's out-dir, written as writeSweepOutputs describes, whose variants'
/// files are staged while the sweep compiles: each the moment its variant is
/// final, on threads of their own, as separate compiles write theirs. Only
/// manifest.json and the swap are left for the end. Destroyed unfinished,
/// it leaves the previous out-dir as it was.
class SweepOutputWriter {
public:
  /// Starts the next version of `outDir` (OutputDirectory::create).
  static llvm::Expected<std::unique_ptr<SweepOutputWriter>>
  create(llvm::StringRef outDir);
  ~SweepOutputWriter();

  /// Stages the files of a final result (none for a failed or skipped one),
  /// once per result index, from any thread. Its MLIR context must outlive
  /// finish().
  void add(const VariantResult &result);

  /// Stages the successful `results` add() did not, then `extraFiles` and
  /// manifest.json, and replaces the out-dir. Fails with the first variant,
  /// in order, whose files could not be written, replacing nothing.
  llvm::Error
  finish(llvm::ArrayRef<VariantResult> results, const SweepHeader &header,
         llvm::ArrayRef<std::pair<std::string, std::string>> extraFiles = {});

private:
  class Impl;
  explicit SweepOutputWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// Writes, per successful variant, `<id>.mlir` (its gpu.binary ops) and one
/// raw object per gpu.module (`<id>.<module><ext>`, the module name
/// sanitised), then `manifest.json` describing every variant, failed ones
/// included. The out-dir is replaced as a whole (OutputDirectory): on an
/// error the previous one is left as it was. `header` gives the manifest's
/// top-level fields besides `variants`.
/// `extraFiles` (name, contents) are written with them, e.g. fly-tune's
/// main.mlir.
llvm::Error writeSweepOutputs(
    llvm::StringRef outDir, llvm::ArrayRef<VariantResult> results,
    const SweepHeader &header,
    llvm::ArrayRef<std::pair<std::string, std::string>> extraFiles = {});

} // namespace fly

#endif // FLY_REPLAY_MANIFEST_H
