//===- SplitCompiler.h - Prefix once, binary pass per hint set --*- C++ -*-===//
//
// The embedding API for DSL compilers: one call turns a module, a full
// pipeline and N hint sets into N variants. Phase 1 (everything before
// gpu-module-to-binary) runs once, or comes from the cache; phase 2 replays
// the binary pass per hint set, in parallel, each variant's objects cached
// under the full key. Results come back in hint-set order; a failing variant
// never loses the others.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_COMPILER_SPLITCOMPILER_H
#define FLY_COMPILER_SPLITCOMPILER_H

#include "fly/Cache/CompileCache.h"
#include "fly/Executor/Executor.h"
#include "fly/Hints/HintSet.h"
#include "fly/Replay/VariantResult.h"
#include "fly/Support/ToolOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <memory>
#include <mutex>

namespace fly {

class StageDumper;

struct CompileJob {
  /// MLIR text or bytecode.
  std::string source;
  /// A name for diagnostics and for --explain-cache (e.g. the file path).
  std::string sourceName = "<input>";
  /// The full pipeline, gpu-module-to-binary included.
  std::string pipeline;
  /// One variant per hint set; the first also builds the main module.
  std::vector<HintSet> hintSets;
  /// The chip, part of both cache keys.
  std::string chip;
  /// The toolkit for a binary pass that names none (`toolkit=`): fly-tune's
  /// --toolkit or the one it finds ($FLY_ROCM_TOOLKIT, ...); "" leaves the
  /// pass as written.
  std::string defaultToolkit;
};

struct SplitCompilerOptions {
  /// Variants replayed at once; 0 = hardware threads.
  unsigned jobs = 0;
  /// Seconds one variant may compile (ReplayPlan::variantTimeoutSeconds
  /// says what each executor enforces); 0 = no limit. Defaults from
  /// FLY_VARIANT_TIMEOUT, else kDefaultVariantTimeoutSeconds
  /// (ToolOptions.h).
  unsigned variantTimeoutSeconds = getDefaultVariantTimeout();
  /// Seconds of phase 2 after which no new variant starts; those left are
  /// skipped. 0 = no budget.
  double timeBudgetSeconds = 0;
  CacheConfig cache = CacheConfig::fromEnvironment();
  /// Numbered per-stage dumps; "" = off. Defaults from FLY_DUMP_IR.
  std::string dumpDir;
  /// Where a failing variant leaves its reproducer; "" = dumpDir or none.
  std::string reproducerDir;
  /// Applied to every PassManager the compiler creates (IR printing,
  /// timing, crash reproducer: mlir::applyPassManagerCLOptions).
  std::function<mlir::LogicalResult(mlir::PassManager &)> configurePassManager;
  /// configurePassManager instruments the pass runs (IR printing, timing,
  /// statistics): ReplayPlanOptions::replaysInstrumented.
  bool replaysInstrumented = false;
  /// Where variants compile (Executor.h): batch (fastest, in process),
  /// isolated (in process, a crash or LLVM fatal error fails only its
  /// variant; installs LLVM's crash-recovery signal handlers process-wide)
  /// or process (child fly-tune processes: nothing the backend does can
  /// take this process down).
  ExecutorKind executor = ExecutorKind::Batch;
  /// Process executor: the child tool, work directory parent, time limit
  /// (ExecutorOptions::jobs comes from `jobs`).
  ExecutorOptions executorOptions;
  /// When set, makes the executor instead of `executor` (e.g.
  /// createSlurmExecutor, SlurmExecutor.h).
  std::function<std::unique_ptr<ReplayExecutor>()> makeExecutor;
  /// Compile the ISA once for variants that share it (NVVM hint sets that
  /// differ only in maxnreg or ptxas options) and run only ptxas per
  /// variant (ReplayPlan::reuseIsa); the objects are byte-identical.
  bool reuseIsa = true;
  /// Also write the snapshot and the replay plan here (WorkDir.h), so that
  /// another process or machine can replay any entries of it:
  /// `fly-tune --run-plan=<dir> --entries=...`. "" = off.
  std::string planDir;
  /// Progress lines ("phase 1 ...", "variant 3/8 ...").
  std::function<void(llvm::StringRef)> progress;
  /// Each variant the moment it is final (compiled and stored, from the
  /// cache, or copied from an identical one): its kernel (the position of
  /// its job in compileMany, 0 for compile), its plan entry, the result
  /// (labelled; duplicates are marked only in CompileResult), whether it
  /// came from the cache. One call at a time, from any thread.
  std::function<void(unsigned kernel, unsigned entry,
                     const VariantResult &variant, bool fromCache)>
      variantFinished;
  /// Asked before each kernel's phase 1 and each variant starts; true:
  /// nothing more starts (a kernel not begun fails without a diagnostic,
  /// variants not begun have no objects). Null = never.
  std::function<bool()> cancelled;

  static SplitCompilerOptions fromEnvironment();
};

struct CompileResult {
  std::string prefix, binaryPass, suffix;
  /// What each hint set compiled with (ids, duplicates, cache keys).
  ReplayPlan plan;
  bool prefixFromCache = false;
  std::string baseKey;
  /// Why phase 1 missed the cache (--explain-cache).
  std::string cacheExplanation;
  double prefixMs = 0, replayMs = 0, totalMs = 0;
  std::vector<VariantResult> variants;
  std::vector<bool> variantFromCache;
  /// The main module after the binary pass (first hint set) and the host
  /// suffix; null if the first variant failed.
  mlir::OwningOpRef<mlir::ModuleOp> mainModule;
  std::vector<std::string> warnings;
  std::vector<std::string> reproducers;
  /// What the pre-binary module's gpu.modules target ("rocdl:gfx942", ...),
  /// distinct, in order: the real targets, whatever attached them.
  std::vector<std::string> targets;

  unsigned numFailed() const;
};

class SplitCompiler {
public:
  SplitCompiler(mlir::MLIRContext &context, SplitCompilerOptions options);
  ~SplitCompiler();

  /// Fails (with diagnostics on the context) only for errors that concern
  /// every variant: bad input, bad pipeline, bad hints, prefix failure.
  mlir::FailureOr<CompileResult> compile(const CompileJob &job);
  /// Several kernels as one sweep: their phase 1 side by side (at most
  /// `jobs` kernels at once), every replay of every kernel on one executor,
  /// whose workers they share (no kernel waits for another's variants).
  /// One result per job, in order; a kernel that fails as a whole (its
  /// diagnostics on the context) does not stop the others. Progress lines
  /// start with the kernel's source name. Warnings of the sweep as a whole
  /// (the cache's) are in the first result that compiled, not repeated.
  std::vector<mlir::FailureOr<CompileResult>>
  compileMany(llvm::ArrayRef<CompileJob> jobs);

  CompileCache &getCache() { return cache; }

private:
  /// What every kernel of a compile shares: the cache's view of the command
  /// line (warnings for each result go to `warnings`).
  void prepareCache(std::vector<std::string> &warnings);
  /// One kernel, its replays on `executor`; `kernel` is its position.
  mlir::FailureOr<CompileResult> compileKernel(const CompileJob &job,
                                               ReplayExecutor &executor,
                                               unsigned kernel);
  std::unique_ptr<ReplayExecutor> makeExecutor();

  // The stages of compile(), each in its own file.
  /// Phase 1 (PrefixStage.cpp): the prefix pipeline once, or its result from
  /// the cache.
  mlir::OwningOpRef<mlir::ModuleOp> runOrLoadPrefix(const CompileJob &job,
                                                    CompileResult &result,
                                                    CacheKey &baseKey);
  /// The replay plan, with each entry's cache key (VariantStage.cpp).
  mlir::FailureOr<ReplayPlan> planVariants(mlir::ModuleOp preBinary,
                                           const CompileJob &job,
                                           const BinaryPassOptions &binaryPass,
                                           const CacheKey &baseKey,
                                           std::vector<CacheKey> &keys);
  /// Phase 2 (VariantStage.cpp): every distinct entry from the cache or the
  /// executor (under per-key locks shared with other processes), the
  /// duplicates copied.
  mlir::LogicalResult
  runVariants(mlir::ModuleOp preBinary, const ReplayPlan &plan,
              llvm::ArrayRef<CacheKey> keys, const CompileJob &job,
              unsigned kernel, ReplayExecutor &executor, CompileResult &result);
  /// Whether variants keep their LLVM IR and ISA for the dumps: FLY_DUMP_IR
  /// on for this compile. Their replays then run fly-module-to-binary, each
  /// variant compiled whole (no reuse-isa, no cached variant), once.
  bool capturesIntermediates() const;
  /// Per variant: final stage, LLVM IR and ISA (Dumps.cpp).
  void dumpVariants(const CompileResult &result);
  /// Per failing variant: what reproduces it with fly-opt (Reproducers.cpp).
  void writeReproducers(mlir::ModuleOp preBinary, CompileResult &result);
  /// The first variant's binaries in place of the gpu.modules, then the host
  /// suffix (SplitCompiler.cpp).
  void buildMainModule(mlir::OwningOpRef<mlir::ModuleOp> preBinary,
                       CompileResult &result);

  mlir::LogicalResult runPipeline(mlir::OpPassManager &pipeline,
                                  mlir::ModuleOp op, bool dump);
  /// A progress line, after the kernel's name when compiling several.
  void say(const CompileJob &job, const llvm::Twine &line);

  mlir::MLIRContext &context;
  SplitCompilerOptions options;
  CompileCache cache;
  /// This compile's non-default llvm::cl options, part of the base key.
  std::string commandLineKey;
  std::unique_ptr<StageDumper> dumper;
  /// Whether compileMany runs more than one kernel (progress names them).
  bool severalKernels = false;
  /// One progress line or variantFinished call at a time.
  std::mutex reportMutex;
};

} // namespace fly

#endif // FLY_COMPILER_SPLITCOMPILER_H
