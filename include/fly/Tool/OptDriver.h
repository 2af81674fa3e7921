//===- OptDriver.h - fly-opt's steps around MlirOptMain ---------*- C++ -*-===//
//
// fly-opt is mlir-opt's main plus a sweep: --fly-hints / --fly-hints-file /
// --fly-out-dir (or FLY_HINT_SETS / FLY_OUT_DIR, for a front end that runs
// fly-opt as its mlir-opt with a fixed command line) install the replay
// instrumentation on the pass manager, so a normal full pipeline run yields
// one variant per hint set, with every mlir-opt flag (IR printing, timing,
// reproducers) applying to the replays too.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_TOOL_OPTDRIVER_H
#define FLY_TOOL_OPTDRIVER_H

#include "fly/Hints/HintSet.h"
#include "fly/Pipeline/StageDumper.h"
#include "fly/Replay/Replay.h"

#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace fly {

/// fly-opt's own flags.
struct OptSweepOptions {
  std::string hints;     ///< --fly-hints
  std::string hintsFile; ///< --fly-hints-file
  std::string outDir;    ///< --fly-out-dir
  unsigned jobs = 0;     ///< --jobs
  bool reuseIsa = true;  ///< --fly-reuse-isa
};

/// The sweep of one fly-opt run: the hint sets, the instrumentation it adds
/// to mlir-opt's pass manager, and what it reports once MlirOptMain is done.
/// Without hint sets it only turns opts= flags that ROCDL ignores into IR
/// hints, and fly-opt is plain mlir-opt.
class OptSweep {
public:
  /// Reads the hint sets (flags, then FLY_HINT_SETS) and checks the out-dir;
  /// an error names the flag or variable at fault.
  static llvm::Expected<std::unique_ptr<OptSweep>>
  create(OptSweepOptions options);

  /// Makes `config` set up its pass managers as before plus this sweep's
  /// instrumentation. The sweep must outlive MlirOptMain.
  void install(mlir::MlirOptMainConfig &config);

  /// After MlirOptMain returned `status`: writes the variants' dumps and
  /// out-dir, reports failed variants, and returns the run's status.
  mlir::LogicalResult finish(mlir::LogicalResult status,
                             llvm::StringRef inputFile);

private:
  OptSweep() = default;
  mlir::LogicalResult setupPassManager(mlir::PassManager &pm);

  OptSweepOptions options;
  std::vector<HintSet> hintSets;
  /// From FLY_HINT_SETS: the sweep rides along a front end's compile, whose
  /// output (variant 0) alone decides the exit status.
  bool environmentSweep = false;
  /// FLY_DUMP_IR: every top-level stage, then each variant's gpu.binary.
  std::optional<StageDumper> dumper;
  /// The config's own pass manager setup, which the sweep extends.
  mlir::MlirOptMainConfig baseConfig;
  std::mutex variantsMutex;
  std::vector<VariantResult> variants;
};

/// Where ROCM_PATH is unset, points it at the toolkit fly finds beside the
/// executable: run as a prefix's bin/mlir-opt, fly-opt gets pipelines
/// without toolkit=, and upstream ROCDL serialisation reads ROCM_PATH.
void setRocmPathFromToolkit();

/// MlirOptMain on `inputFile`, writing `outputFile` ("-": stdout) only when
/// it succeeds; a file that cannot be opened is reported as `tool`'s error.
mlir::LogicalResult runMlirOptMain(llvm::StringRef tool,
                                   llvm::StringRef inputFile,
                                   llvm::StringRef outputFile,
                                   mlir::DialectRegistry &registry,
                                   const mlir::MlirOptMainConfig &config);

} // namespace fly

#endif // FLY_TOOL_OPTDRIVER_H
