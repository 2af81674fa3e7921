//===- Replay.cpp - Replay gpu-module-to-binary per hint set --------------===//

#include "fly/Replay/Replay.h"
#include "Replay/VariantDedupe.h"
#include "Support/LLVMCompat.h"
#include "fly/Replay/ReplayPlan.h"
#include "fly/Replay/SharedIsa.h"

#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/BackendOpts.h"
#include "fly/Snapshot/Snapshot.h"
#include "fly/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"

#include <chrono>
#include <map>

using namespace mlir;
using namespace llvm;

namespace fly {

std::string getVariantId(unsigned index, const HintSet &hints) {
  return "v" + std::to_string(index) + "_" + hints.label();
}

OpPassManager
buildReplayPipeline(const BinaryPassOptions &options, StringRef extraOpts,
                    std::shared_ptr<IntermediateCapture> capture) {
  OpPassManager container("builtin.module");
  BinaryPassOptions pass = withExtraOpts(options, extraOpts);
  // fly-module-to-binary even without a capture: it keeps the backend's
  // error diagnostics and fatal errors inside the variant.
  FlyModuleToBinaryOptions capturing;
  capturing.toolkitPath = pass.toolkitPath;
  capturing.linkFiles = pass.linkFiles;
  capturing.cmdOptions = pass.cmdOptions;
  capturing.compilationTarget = pass.compilationTarget;
  capturing.elfSection = pass.elfSection;
  container.nest("builtin.module")
      .addPass(createFlyModuleToBinary(capturing, std::move(capture),
                                       /*asUpstream=*/true));
  return container;
}

namespace {
/// One compile step over variant modules: the pipeline, what to do to a
/// hinted variant before it runs (null: nothing), and where its outcome goes
/// (with what the pipeline's fly-module-to-binary handed to `capture` for
/// it; null: no capture).
struct ReplayStage {
  OpPassManager *pipeline = nullptr;
  IntermediateCapture *capture = nullptr;
  std::function<LogicalResult(unsigned index, ModuleOp variant)> prepare;
  std::function<void(unsigned index, ModuleOp variant, double ms,
                     unsigned batch, CapturedReplay seen)>
      done;
  std::function<void(unsigned index, const std::string &error)> fail;
  /// The pipeline reads only the gpu.modules' attributes and their kernels'
  /// signatures and attributes (fly-assemble-isa, the ISA attached): the
  /// variant is built without the function bodies, not as a second copy of
  /// the whole module per variant in flight.
  bool kernelSignaturesOnly = false;
};

/// Compiles batches of variants for one stage.
class BatchCompiler {
public:
  /// Position k compiles plan entry entries[k] with hintSets[k] into
  /// results[k], handed to `finished` once final.
  BatchCompiler(ModuleOp source, const ReplayPlan &plan,
                ArrayRef<unsigned> entries, ArrayRef<HintSet> hintSets,
                std::vector<VariantResult> &results, bool nestInSource,
                PipelineRunner runPipeline, const VariantSink &finished)
      : source(source), gpuModules(getTargetedGpuModules(source)), plan(plan),
        entries(entries), hintSets(hintSets), results(results),
        nestInSource(nestInSource), runPipeline(runPipeline),
        finished(finished) {}

  /// Compiles `indices` together; on failure, once more one by one so that
  /// the failure is pinned on the variants that cause it.
  void compile(ArrayRef<unsigned> indices, const ReplayStage &stage);

  /// Compiles `indices` in batches of `batchSize`.
  void compileInBatches(ArrayRef<unsigned> indices, size_t batchSize,
                        const ReplayStage &stage) {
    for (size_t begin = 0; begin < indices.size(); begin += batchSize) {
      if (mayStart && !mayStart())
        return;
      compile(indices.slice(begin, std::min(batchSize, indices.size() - begin)),
              stage);
    }
  }

  /// Asked before each batch (ReplayOptions::mayStart).
  std::function<bool()> mayStart;

  /// The plan entry that position `index` compiles.
  const PlanEntry &entryOf(unsigned index) const {
    return plan.entries[entries[index]];
  }
  /// The label (VariantResult::index) of hint set `index`.
  unsigned labelOf(unsigned index) const { return entryOf(index).index; }

  /// Hands the outcome at `index` over: it is final.
  void finish(unsigned index) {
    finished(entries[index], std::move(results[index]));
  }

  /// The stage that records each variant's gpu.binary ops in its result.
  ReplayStage recordingStage(OpPassManager &pipeline,
                             IntermediateCapture *capture = nullptr) {
    ReplayStage stage;
    stage.pipeline = &pipeline;
    stage.capture = capture;
    stage.done = [this, capture](unsigned index, ModuleOp variant, double ms,
                                 unsigned batch, CapturedReplay seen) {
      VariantResult &result = results[index];
      result.replayMs += ms;
      result.replayedWith = batch;
      recordBinaries(result, variant);
      if (capture) {
        result.intermediates = std::move(seen.intermediates);
        result.codegenContinued = seen.codegenContinued;
      }
      finish(index);
    };
    stage.fail = [this](unsigned index, const std::string &error) {
      results[index].error = error;
      finish(index);
    };
    return stage;
  }

private:
  ModuleOp buildVariant(OpBuilder &b, unsigned index, const ReplayStage &stage);

  ModuleOp source;
  SmallVector<gpu::GPUModuleOp> gpuModules;
  const ReplayPlan &plan;
  ArrayRef<unsigned> entries;
  ArrayRef<HintSet> hintSets;
  std::vector<VariantResult> &results;
  bool nestInSource;
  PipelineRunner runPipeline;
  const VariantSink &finished;
};
} // namespace

/// `file:line:col` as mlir-opt prints it, other locations as MLIR does.
static void printLocation(raw_ostream &os, Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue() << ':' << file.getLine() << ':'
       << file.getColumn();
    return;
  }
  os << loc;
}

static std::string formatDiagnostic(Diagnostic &diag) {
  std::string text;
  raw_string_ostream os(text);
  printLocation(os, diag.getLocation());
  os << ": error: " << diag;
  for (Diagnostic &note : diag.getNotes()) {
    // The op dump MLIR attaches to op diagnostics can be the whole module.
    std::string text = note.str();
    if (StringRef(text).starts_with("see current operation"))
      continue;
    os << "\n  ";
    printLocation(os, note.getLocation());
    os << ": note: " << text;
  }
  return text;
}

namespace {
/// Collects the errors that this thread emits (replays may run on several
/// threads at once, each with its own capture). Unlike
/// ScopedDiagnosticHandler it can be unregistered after a crash unwound its
/// frame: see releaseErrorCapturesAfterCrash.
class ErrorCapture {
public:
  /// Backend warnings, held back to be re-emitted with their variant.
  using WarningSink = std::vector<std::pair<Location, std::string>>;

  ErrorCapture(MLIRContext *ctx, std::string &sink,
               WarningSink *warnings = nullptr)
      : ctx(ctx) {
    uint64_t thread = llvm::get_threadid();
    id = ctx->getDiagEngine().registerHandler(
        [thread, &sink, warnings](Diagnostic &diag) -> LogicalResult {
          if (llvm::get_threadid() != thread)
            return failure();
          if (warnings &&
              diag.getSeverity() == mlir::DiagnosticSeverity::Warning) {
            warnings->emplace_back(diag.getLocation(), diag.str());
            return success();
          }
          if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
            return failure();
          sink += formatDiagnostic(diag) + "\n";
          return success();
        });
    live().emplace_back(ctx, id);
  }
  ~ErrorCapture() {
    ctx->getDiagEngine().eraseHandler(id);
    llvm::erase(live(), std::make_pair(ctx, id));
  }

  /// The captures of this thread still registered.
  static std::vector<std::pair<MLIRContext *, DiagnosticEngine::HandlerID>> &
  live() {
    thread_local std::vector<
        std::pair<MLIRContext *, DiagnosticEngine::HandlerID>>
        ids;
    return ids;
  }

private:
  MLIRContext *ctx;
  DiagnosticEngine::HandlerID id;
};
} // namespace

void releaseErrorCapturesAfterCrash() {
  for (auto [ctx, id] : ErrorCapture::live())
    ctx->getDiagEngine().eraseHandler(id);
  ErrorCapture::live().clear();
}

/// `gpuModule` with its kernels alone, as declarations, at `b`'s insertion
/// point (ReplayStage::kernelSignaturesOnly).
static gpu::GPUModuleOp cloneKernelSignatures(OpBuilder &b,
                                              gpu::GPUModuleOp gpuModule) {
  auto clone =
      cast<gpu::GPUModuleOp>(b.insert(gpuModule->cloneWithoutRegions()));
  Block *body = &clone.getBodyRegion().emplaceBlock();
  for (LLVM::LLVMFuncOp kernel : getKernels(gpuModule)) {
    auto declaration = cast<LLVM::LLVMFuncOp>(kernel->cloneWithoutRegions());
    // A declaration must be external; the object's kernel table takes only
    // the name, type and argument attributes.
    declaration.setLinkage(LLVM::Linkage::External);
    body->push_back(declaration);
  }
  return clone;
}

ModuleOp BatchCompiler::buildVariant(OpBuilder &b, unsigned index,
                                     const ReplayStage &stage) {
  const PlanEntry &entry = entryOf(index);
  auto variant = compat::createOp<ModuleOp>(b, source.getLoc(), entry.id);
  variant->setAttr(kHintsAttrName, b.getStringAttr(entry.hints.canonical()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(variant.getBody());
  auto drop = [&](const Twine &why) {
    stage.fail(index, why.str());
    variant.erase();
    return nullptr;
  };
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    auto clone = stage.kernelSignaturesOnly
                     ? cloneKernelSignatures(b, gpuModule)
                     : cast<gpu::GPUModuleOp>(b.clone(*gpuModule));
    applyVerifiedHints(clone, hintSets[index]);
  }
  // Replays run on a verified copy: a hint such as func.<attr> can make
  // the IR invalid, and the backend must not be the one to find out.
  if (failed(verify(variant)))
    return drop("the hinted module fails verification");
  if (stage.prepare && failed(stage.prepare(index, variant)))
    return drop("cannot prepare the variant for " +
                (*stage.pipeline->begin()).getArgument());
  return variant;
}

void BatchCompiler::compile(ArrayRef<unsigned> indices,
                            const ReplayStage &stage) {
  MLIRContext *ctx = source.getContext();
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> owned;
  if (nestInSource)
    b.setInsertionPointToEnd(source.getBody());
  auto container = compat::createOp<ModuleOp>(b, source.getLoc(), "fly.replay");
  if (!nestInSource)
    owned = OwningOpRef<ModuleOp>(container);
  llvm::scope_exit eraseContainer([&] {
    if (nestInSource)
      container.erase();
  });

  std::string captured;
  ErrorCapture::WarningSink warnings;
  SmallVector<std::pair<unsigned, ModuleOp>> variants;
  LogicalResult status = success();
  double ms = 0;
  // Backend warnings (e.g. "failed to meet occupancy target") say which
  // variant they belong to: the ones compiled in this batch.
  llvm::scope_exit emitWarnings([&] {
    if (warnings.empty())
      return;
    std::string ids;
    for (auto [index, variant] : variants)
      ids += (ids.empty() ? "" : ", ") + entryOf(index).id;
    for (auto &[loc, message] : warnings)
      emitWarning(isa<UnknownLoc>(loc) ? source.getLoc() : loc)
          << (variants.size() == 1 ? "variant " : "variants ") << ids << ": "
          << message;
  });
  {
    // Diagnostics of a hint set that fails belong to that variant's result.
    ErrorCapture capture(ctx, captured, &warnings);
    b.setInsertionPointToEnd(container.getBody());
    for (unsigned index : indices) {
      captured.clear();
      ReplayStage capturing = stage;
      capturing.fail = [&](unsigned index, const std::string &error) {
        stage.fail(index, error + ": " + captured);
      };
      if (ModuleOp variant = buildVariant(b, index, capturing))
        variants.emplace_back(index, variant);
    }
    if (variants.empty())
      return;
    captured.clear();
    auto start = std::chrono::steady_clock::now();
    status = runPipeline(*stage.pipeline, container);
    ms = std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
             .count();
  }
  // A variant is finished once none of its gpu.modules is left: the pass
  // replaced each by its gpu.binary. In a failed batch the finished ones are
  // kept (never compiled twice); the others failed, or were not reached
  // because the pass manager stops scheduling after a failure.
  SmallVector<unsigned> unfinished;
  for (auto [index, variant] : variants) {
    // Taken from the capture either way: a variant compiled again starts
    // afresh.
    CapturedReplay seen;
    if (stage.capture)
      seen = stage.capture->take(variant);
    if (succeeded(status) || variant.getOps<gpu::GPUModuleOp>().empty())
      stage.done(index, variant, ms, variants.size(), std::move(seen));
    else
      unfinished.push_back(index);
  }
  if (unfinished.empty())
    return;
  // Only errors are captured, and finished variants emit none: with one
  // variant left the batch's errors are its own.
  if (unfinished.size() == 1) {
    stage.fail(unfinished.front(),
               captured.empty() ? "the binary pass failed" : captured);
    return;
  }
  eraseContainer.release();
  if (nestInSource)
    container.erase();
  owned = nullptr;
  for (unsigned index : unfinished)
    compile(ArrayRef<unsigned>(index), stage);
}

/// What a hint set makes of the gpu.modules, without copying their bodies.
/// applyHints writes attributes only (the gpu.module's targets and the kernel
/// llvm.funcs' attributes), and every variant starts from the same
/// gpu.modules, so two hint sets whose hinted gpu.module and llvm.func
/// attributes are equal yield identical variant modules (e.g. waves_per_eu=0
/// and no hint, or the same hint set listed twice). The hints are applied to
/// region-less copies (cloneWithoutRegions) and the resulting attributes,
/// uniqued by the context, compare exactly: no hash collisions. Returns
/// nothing if the hints fail to apply (the real build reports that).
std::optional<SmallVector<mlir::Attribute>>
fingerprintHinted(ArrayRef<gpu::GPUModuleOp> gpuModules, const HintSet &hints,
                  HintedFingerprint kind) {
  if (gpuModules.empty())
    return std::nullopt;
  // Silences this thread's diagnostics only: replays may run on others.
  uint64_t thread = llvm::get_threadid();
  ScopedDiagnosticHandler quiet(
      gpuModules.front()->getContext(), [thread](Diagnostic &) {
        return success(llvm::get_threadid() == thread);
      });
  SmallVector<mlir::Attribute> fingerprint;
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    OwningOpRef<gpu::GPUModuleOp> skeleton =
        cast<gpu::GPUModuleOp>(gpuModule->cloneWithoutRegions());
    Block *body = &skeleton->getBodyRegion().emplaceBlock();
    for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>())
      body->push_back(func->cloneWithoutRegions());
    applyVerifiedHints(*skeleton, hints);
    if (kind == HintedFingerprint::SameObjects)
      dropBackendDefaults(*skeleton);
    else if (kind == HintedFingerprint::SharedIsa)
      normalizeForSharedIsa(*skeleton);
    fingerprint.push_back(skeleton.get()->getAttrDictionary());
    for (Operation &op : *body)
      fingerprint.push_back(op.getAttrDictionary());
  }
  return fingerprint;
}

SmallVector<std::optional<unsigned>>
findDuplicateVariants(ModuleOp source, ArrayRef<HintSet> hintSets,
                      HintedFingerprint kind) {
  SmallVector<gpu::GPUModuleOp> gpuModules = getTargetedGpuModules(source);
  std::vector<
      std::pair<std::pair<std::string, SmallVector<mlir::Attribute>>, unsigned>>
      seen;
  SmallVector<std::optional<unsigned>> sameAs(hintSets.size());
  for (auto [index, hints] : enumerate(hintSets)) {
    std::optional<SmallVector<mlir::Attribute>> fingerprint =
        fingerprintHinted(gpuModules, hints, kind);
    if (!fingerprint)
      continue;
    std::pair<std::string, SmallVector<mlir::Attribute>> key{
        getBinaryOptsHint(hints, gpuModules), std::move(*fingerprint)};
    auto it = find_if(seen, [&](auto &entry) { return entry.first == key; });
    if (it != seen.end())
      sameAs[index] = it->second;
    else
      seen.push_back({std::move(key), static_cast<unsigned>(index)});
  }
  return sameAs;
}

void copyVariantOutcome(VariantResult &copy, const VariantResult &from) {
  copy.binaryPass = from.binaryPass;
  copy.binaries = from.binaries;
  copy.binaryIR = from.binaryIR;
  copy.objects = from.objects;
  copy.intermediates = from.intermediates;
  copy.objectHash = from.objectHash;
  copy.error = from.error;
  copy.replayMs = 0;
  copy.replayedWith = from.replayedWith;
  copy.duplicateOf = from.index;
  copy.isaFrom = from.isaFrom;
  copy.codegenContinued = from.codegenContinued;
  copy.skipped = from.skipped;
}

/// Stage 1 of a replay that reuses ISA: for each ISA group of `indices`
/// (positions) that `table` lacks, gpu-module-to-binary{format=isa} on the
/// hinted, normalised variant of its first position; the ISA (or the
/// failure) goes into `table`.
static LogicalResult compileSharedIsa(BatchCompiler &compiler,
                                      ArrayRef<unsigned> indices,
                                      ArrayRef<std::optional<unsigned>> groups,
                                      ArrayRef<gpu::GPUModuleOp> gpuModules,
                                      const BinaryPassOptions &binaryPass,
                                      StringRef extraOpts, size_t batchSize,
                                      SharedIsaTable &table,
                                      bool captureIntermediates) {
  SmallVector<unsigned> producers;
  llvm::DenseMap<unsigned, unsigned> groupOf;
  for (auto [index, group] : llvm::zip_equal(indices, groups)) {
    if (!group || table.lookup(*group) ||
        llvm::any_of(groupOf,
                     [&](auto &entry) { return entry.second == *group; }))
      continue;
    groupOf[index] = *group;
    producers.push_back(index);
  }
  if (producers.empty())
    return success();
  BinaryPassOptions isaPass = binaryPass;
  isaPass.compilationTarget = "isa";
  auto capture = std::make_shared<IntermediateCapture>(captureIntermediates);
  OpPassManager pipeline = buildReplayPipeline(isaPass, extraOpts, capture);
  llvm::StringMap<size_t> kernelCounts;
  for (gpu::GPUModuleOp gpuModule : gpuModules)
    kernelCounts[gpuModule.getName()] = getKernels(gpuModule).size();

  ReplayStage stage;
  stage.pipeline = &pipeline;
  stage.capture = capture.get();
  stage.prepare = [](unsigned, ModuleOp variant) {
    variant.setSymName(("isa_" + *variant.getSymName()).str());
    for (auto gpuModule : variant.getOps<gpu::GPUModuleOp>())
      normalizeForSharedIsa(gpuModule);
    return success();
  };
  stage.done = [&](unsigned index, ModuleOp variant, double ms, unsigned,
                   CapturedReplay seen) {
    SharedIsa isa;
    isa.producer = compiler.labelOf(index);
    isa.ms = ms;
    isa.intermediates = std::move(seen.intermediates);
    isa.codegenContinued = seen.codegenContinued;
    for (auto binary : variant.getOps<gpu::BinaryOp>()) {
      isa.objects[binary.getName()] = binary.getObjectsAttr();
      isa.shareable &= hasSentinelsOnce(binary.getObjectsAttr(),
                                        kernelCounts.lookup(binary.getName()));
    }
    table.insert(groupOf[index], std::move(isa));
  };
  stage.fail = [&](unsigned index, const std::string &error) {
    SharedIsa isa;
    isa.producer = compiler.labelOf(index);
    isa.error = error;
    table.insert(groupOf[index], std::move(isa));
  };
  compiler.compileInBatches(producers, batchSize, stage);
  return success();
}

/// Stage 2: fly-assemble-isa with the binary pass's format, toolkit, opts
/// and section, nested one level (container -> variant).
static OpPassManager buildAssemblePipeline(const BinaryPassOptions &binaryPass,
                                           unsigned toolTimeout) {
  OpPassManager container("builtin.module");
  FlyAssembleIsaOptions options;
  options.compilationTarget = binaryPass.compilationTarget;
  options.toolkitPath = binaryPass.toolkitPath;
  options.cmdOptions = binaryPass.cmdOptions;
  options.elfSection = binaryPass.elfSection;
  options.toolTimeout = toolTimeout;
  container.nest("builtin.module").addPass(createFlyAssembleIsa(options));
  return container;
}

/// Gives each gpu.module of `variant` its ISA, instantiated from `isa`.
static LogicalResult attachSharedIsa(ModuleOp variant, const SharedIsa &isa) {
  for (auto gpuModule : variant.getOps<gpu::GPUModuleOp>()) {
    ArrayAttr objects = isa.objects.lookup(gpuModule.getName());
    if (!objects)
      return gpuModule.emitError("no shared ISA for this gpu.module");
    FailureOr<ArrayAttr> own = instantiateSharedIsa(objects, gpuModule);
    if (failed(own))
      return gpuModule.emitError("the shared ISA does not fit this variant");
    gpuModule->setAttr(kIsaAttrName, *own);
  }
  return success();
}

/// replayPlanned, or with `sharedIsaOnly` only its stage 1 (see
/// prepareSharedIsa).
static LogicalResult replay(ModuleOp source, const ReplayPlan &plan,
                            ArrayRef<unsigned> entries,
                            const ReplayOptions &options, bool nestInSource,
                            PipelineRunner runPipeline, bool sharedIsaOnly,
                            const VariantSink &finished) {
  SmallVector<gpu::GPUModuleOp> gpuModules = getTargetedGpuModules(source);
  // Everything per hint set was decided by the plan: positions below index
  // `entries` (and `results`), plan entries are named by their position in
  // the plan.
  std::vector<VariantResult> results(entries.size());
  std::vector<HintSet> userHintSets;
  for (unsigned e : entries)
    userHintSets.push_back(plan.entries[e].hints);
  // What is written onto each variant: its hints over the opts= flags.
  std::vector<HintSet> hintSets =
      getCompiledHintSets(userHintSets, plan.binaryPass.cmdOptions, gpuModules);
  // Variants whose `opts` differ need their own binary pass instance.
  // Groups keep the order of their first variant.
  std::vector<std::pair<std::string, SmallVector<unsigned>>> groups;
  for (auto [k, e] : llvm::enumerate(entries)) {
    const PlanEntry &entry = plan.entries[e];
    auto group =
        find_if(groups, [&](auto &g) { return g.first == entry.extraOpts; });
    if (group == groups.end())
      group = groups.insert(groups.end(), {entry.extraOpts, {}});
    group->second.push_back(k);
  }

  MLIRContext *ctx = source.getContext();
  unsigned batchSize = options.maxParallel;
  if (batchSize == 0)
    batchSize = ctx->isMultithreadingEnabled() ? ctx->getNumThreads() : 1;
  BatchCompiler compiler(source, plan, entries, hintSets, results, nestInSource,
                         runPipeline, finished);
  compiler.mayStart = options.mayStart;
  std::shared_ptr<SharedIsaTable> table =
      options.sharedIsa ? options.sharedIsa
                        : std::make_shared<SharedIsaTable>();
  for (auto &[extraOpts, indices] : groups) {
    auto capture =
        std::make_shared<IntermediateCapture>(plan.captureIntermediates);
    OpPassManager pipeline =
        buildReplayPipeline(plan.binaryPass, extraOpts, capture);
    ReplayStage plain = compiler.recordingStage(pipeline, capture.get());
    if (!plan.reuseIsa) {
      if (!sharedIsaOnly)
        compiler.compileInBatches(indices, batchSize, plain);
      continue;
    }

    // Stage 1: the ISA of each group not in the table, from its first
    // variant here.
    SmallVector<std::optional<unsigned>> isaGroups;
    for (unsigned k : indices)
      isaGroups.push_back(plan.entries[entries[k]].isaGroup);
    if (failed(compileSharedIsa(compiler, indices, isaGroups, gpuModules,
                                plan.binaryPass, extraOpts, batchSize, *table,
                                plan.captureIntermediates)))
      return failure();
    if (sharedIsaOnly)
      continue;

    // Stage 2: each variant from its shared ISA; the whole binary pass where
    // there is none to use.
    SmallVector<unsigned> assembled, whole;
    std::map<unsigned, SharedIsa> isaOf;
    for (auto [k, group] : llvm::zip_equal(indices, isaGroups)) {
      std::optional<SharedIsa> isa =
          group ? table->lookup(*group) : std::nullopt;
      if (!isa || !isa->shareable) {
        whole.push_back(k);
        continue;
      }
      results[k].isaFrom = isa->producer;
      if (!isa->error.empty()) {
        results[k].error = isa->error;
        compiler.finish(k);
        continue;
      }
      results[k].replayMs = isa->ms;
      results[k].codegenContinued = isa->codegenContinued;
      // The plan lets a capturing entry share only its own ISA compile.
      results[k].intermediates = isa->intermediates;
      isaOf[k] = std::move(*isa);
      assembled.push_back(k);
    }
    OpPassManager assembler = buildAssemblePipeline(
        withExtraOpts(plan.binaryPass, extraOpts), plan.variantTimeoutSeconds);
    ReplayStage finish = compiler.recordingStage(assembler);
    finish.kernelSignaturesOnly = true;
    finish.prepare = [&](unsigned k, ModuleOp variant) {
      return attachSharedIsa(variant, isaOf[k]);
    };
    compiler.compileInBatches(assembled, batchSize, finish);
    compiler.compileInBatches(whole, batchSize, plain);
  }
  return success();
}

LogicalResult replayPlanned(ModuleOp source, const ReplayPlan &plan,
                            ArrayRef<unsigned> entries,
                            const ReplayOptions &options, bool nestInSource,
                            PipelineRunner runPipeline,
                            const VariantSink &finished) {
  return replay(source, plan, entries, options, nestInSource, runPipeline,
                /*sharedIsaOnly=*/false, finished);
}

LogicalResult prepareSharedIsa(ModuleOp source, const ReplayPlan &plan,
                               ArrayRef<unsigned> entries,
                               const ReplayOptions &options, bool nestInSource,
                               PipelineRunner runPipeline) {
  assert(plan.reuseIsa && options.sharedIsa && "nowhere to keep the ISA");
  VariantSink none = [](unsigned, VariantResult) {};
  return replay(source, plan, entries, options, nestInSource, runPipeline,
                /*sharedIsaOnly=*/true, none);
}

void markDuplicates(std::vector<VariantResult> &results) {
  llvm::DenseMap<uint64_t, unsigned> firstWithHash;
  for (VariantResult &result : results) {
    result.duplicateOf.reset();
    if (!result.succeeded() || result.objects.empty())
      continue;
    auto [it, inserted] =
        firstWithHash.try_emplace(result.objectHash, result.index);
    if (!inserted)
      result.duplicateOf = it->second;
  }
}

} // namespace fly
