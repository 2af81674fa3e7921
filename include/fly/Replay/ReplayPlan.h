//===- ReplayPlan.h - What each hint set compiles to, decided once -*- C++
//-*-===//
//
// A replay plan is built once from the pre-binary module, the binary pass and
// the hint sets, before anything compiles: every hint set is checked against
// every gpu.module exactly once, and what each one needs is recorded as plain
// data (its id, the extra `opts` of its binary pass instance, the effective
// pass, the earlier hint set it duplicates, the shared-ISA group it belongs
// to, its cache key). Executors, front ends and other processes read the plan
// instead of recomputing any of it; it serialises to JSON so that another
// process (or another machine) can replay any subset of it from the snapshot
// bytes plus the plan.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_REPLAY_REPLAYPLAN_H
#define FLY_REPLAY_REPLAYPLAN_H

#include "fly/Hints/HintSet.h"
#include "fly/Replay/BinaryPass.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace fly {

/// What one hint set compiles with.
struct PlanEntry {
  /// Position in the sweep; the variant's label (`v<index>_...`).
  unsigned index = 0;
  std::string id;
  HintSet hints;
  /// What the hint set appends to the binary pass's `opts` ("" for none):
  /// variants with different extraOpts need their own pass instance.
  std::string extraOpts;
  /// The binary pass exactly as this variant runs it, printed (what
  /// manifests and cache keys record).
  std::string binaryPass;
  /// The earlier entry whose variant module is identical (exact, on
  /// context-uniqued attributes): this one copies its outcome.
  std::optional<unsigned> sameAs;
  /// Entries with the same group share one ISA compile (reuse-isa); the
  /// group is named by its first entry. None: the whole binary pass runs.
  std::optional<unsigned> isaGroup;
  /// The level-2 cache key's digest; "" when the cache is off.
  std::string cacheKey;
};

struct ReplayPlan {
  /// The binary pass as the pipeline gives it (before hint opts).
  BinaryPassOptions binaryPass;
  /// Compile shared ISA once per isaGroup, then assemble per variant.
  bool reuseIsa = false;
  /// Replay with fly-module-to-binary, keeping each target's LLVM IR and ISA
  /// in VariantResult::intermediates (FLY_DUMP_IR). Entries then share an
  /// ISA compile only where it is their own (isaGroup).
  bool captureIntermediates = false;
  /// Seconds one variant may compile before it fails naming the limit; 0 =
  /// no limit. What each executor enforces: process and slurm, every
  /// variant (its child and everything that child started are killed);
  /// batch and isolated, the programs a replay runs itself (ptxas and
  /// fatbinary of reuse-isa's assembly), not the in-process backend (use
  /// the process executor for a backend that can hang).
  unsigned variantTimeoutSeconds = 0;
  std::vector<PlanEntry> entries;

  /// The entries that compile (no sameAs) among `indices`, in order.
  std::vector<unsigned> distinct(llvm::ArrayRef<unsigned> indices) const;
  /// 0, 1, ..., entries.size() - 1.
  std::vector<unsigned> all() const;
};

struct ReplayPlanOptions {
  bool reuseIsa = false;
  /// ReplayPlan::captureIntermediates.
  bool captureIntermediates = false;
  /// ReplayPlan::variantTimeoutSeconds.
  unsigned variantTimeoutSeconds = 0;
  /// The replays run under pass instrumentation (IR printing, timing, ...
  /// of a PassManager, however enabled): every hint set whose objects would
  /// copy another's for a backend default compiles, so the instrumentation
  /// sees each variant's binary pass. Set by whoever configures the
  /// replays' pass managers: the fly-snapshot pass from its pass manager's
  /// instrumentor, the tools from their flags (isPassInstrumentationRequested).
  bool replaysInstrumented = false;
  /// Labels of the hint sets (VariantResult::index); empty = 0, 1, 2, ...
  std::vector<unsigned> labels;
};

/// Checks every hint set against every targeted gpu.module of `preBinary`
/// (once each), the binary pass and the toolkit it names, and records what
/// each hint set needs. Emits located errors and fails if any check fails;
/// nothing has compiled then.
mlir::FailureOr<ReplayPlan> buildReplayPlan(mlir::ModuleOp preBinary,
                                            const BinaryPassOptions &binaryPass,
                                            llvm::ArrayRef<HintSet> hintSets,
                                            const ReplayPlanOptions &options);

llvm::json::Value toJSON(const PlanEntry &entry);
bool fromJSON(const llvm::json::Value &value, PlanEntry &entry,
              llvm::json::Path path);
llvm::json::Value toJSON(const ReplayPlan &plan);
bool fromJSON(const llvm::json::Value &value, ReplayPlan &plan,
              llvm::json::Path path);

/// Parses a plan printed by toJSON; the error names the JSON path at fault.
llvm::Expected<ReplayPlan> parseReplayPlan(llvm::StringRef text);

/// Parses an entry list such as `0-7,12` against a plan of `size` entries.
llvm::Expected<std::vector<unsigned>> parseEntryList(llvm::StringRef spec,
                                                     size_t size);
/// The shortest entry list for `indices` (ranges where consecutive).
std::string formatEntryList(llvm::ArrayRef<unsigned> indices);

} // namespace fly

#endif // FLY_REPLAY_REPLAYPLAN_H
