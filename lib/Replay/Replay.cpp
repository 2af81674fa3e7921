//===- Replay.cpp - Replay gpu-module-to-binary per hint set --------------===//

#include "fly/Replay/Replay.h"
#include "fly/Replay/VariantDedupe.h"

#include "fly/Hints/ApplyHints.h"
#include "fly/Snapshot/Snapshot.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;
using namespace llvm;

namespace fly {

std::string getVariantId(unsigned index, const HintSet &hints) {
  return "v" + std::to_string(index) + "_" + hints.label();
}

/// Returns the value of option `name` in a printed pass such as
/// `gpu-module-to-binary{format=fatbin opts={-v -O3} toolkit=}`.
std::string getPassOption(StringRef printed, StringRef name) {
  size_t open = printed.find('{');
  if (open == StringRef::npos)
    return "";
  StringRef body = printed.drop_front(open + 1).drop_back();
  while (!body.empty()) {
    body = body.ltrim();
    auto [key, rest] = body.split('=');
    // The value runs to the next space outside braces and quotes.
    size_t end = 0;
    int depth = 0;
    char quote = 0;
    for (; end < rest.size(); ++end) {
      char c = rest[end];
      if (quote) {
        if (c == quote)
          quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      } else if (c == ' ' && depth == 0) {
        break;
      }
    }
    StringRef value = rest.take_front(end);
    if (key.trim() == name) {
      if (value.size() >= 2 && (value.front() == '{' || value.front() == '"' ||
                                value.front() == '\''))
        value = value.drop_front().drop_back();
      return value.str();
    }
    body = rest.drop_front(end);
  }
  return "";
}

static std::string printPass(Pass &pass) {
  std::string text;
  raw_string_ostream os(text);
  pass.printAsTextualPipeline(os);
  return text;
}

/// Parses the binary pass into `pm` and checks it is exactly one
/// gpu-module-to-binary.
static FailureOr<Pass *> parseBinaryPass(StringRef binaryPass, Location loc,
                                         OpPassManager &pm) {
  StringRef text = binaryPass.trim();
  // Accept the anchored spelling too; the container adds the anchor.
  if (text.consume_front("builtin.module(") && !text.consume_back(")"))
    return emitError(loc) << "unbalanced binary pass '" << binaryPass << "'";
  std::string parseError;
  raw_string_ostream errStream(parseError);
  if (failed(parsePassPipeline(text, pm, errStream)))
    return emitError(loc) << "cannot parse binary pass '" << binaryPass
                          << "': " << parseError;
  if (pm.size() != 1 || pm.begin()->getArgument() != "gpu-module-to-binary")
    return emitError(loc) << "binary pass must be exactly one "
                             "gpu-module-to-binary (with its options), got '"
                          << binaryPass << "'";
  return &*pm.begin();
}

static LogicalResult setOptions(Pass &pass, StringRef options, Location loc) {
  std::string optionError;
  if (succeeded(pass.initializeOptions(options, [&](const Twine &msg) {
        optionError = msg.str();
        return failure();
      })))
    return success();
  return emitError(loc) << "cannot set '" << options
                        << "' on the binary pass: " << optionError;
}

FailureOr<OpPassManager> buildReplayPipeline(StringRef binaryPass,
                                             StringRef extraOpts, Location loc,
                                             std::string *effective) {
  OpPassManager container("builtin.module");
  FailureOr<Pass *> pass =
      parseBinaryPass(binaryPass, loc, container.nest("builtin.module"));
  if (failed(pass))
    return failure();
  if (!extraOpts.empty()) {
    std::string opts = getPassOption(printPass(**pass), "opts");
    if (!opts.empty())
      opts += ' ';
    opts += extraOpts;
    if (failed(setOptions(**pass, "opts={" + opts + "}", loc)))
      return failure();
  }
  if (effective)
    *effective = printPass(**pass);
  return container;
}

FailureOr<std::string> setBinaryPassOptions(StringRef binaryPass,
                                            StringRef options, Location loc) {
  OpPassManager pm("builtin.module");
  FailureOr<Pass *> pass = parseBinaryPass(binaryPass, loc, pm);
  if (failed(pass) || failed(setOptions(**pass, options, loc)))
    return failure();
  return printPass(**pass);
}

namespace {
/// Compiles batches of variants for one binary pipeline.
class BatchCompiler {
public:
  BatchCompiler(ModuleOp source, ArrayRef<HintSet> hintSets,
                std::vector<VariantResult> &results, bool nestInSource,
                PipelineRunner runPipeline)
      : source(source), gpuModules(getTargetedGpuModules(source)),
        hintSets(hintSets), results(results), nestInSource(nestInSource),
        runPipeline(runPipeline) {}

  /// Compiles `indices` together; on failure, once more one by one so that
  /// the failure is pinned on the variants that cause it.
  void compile(ArrayRef<unsigned> indices, OpPassManager &pipeline);

private:
  ModuleOp buildVariant(OpBuilder &b, unsigned index);

  ModuleOp source;
  SmallVector<gpu::GPUModuleOp> gpuModules;
  ArrayRef<HintSet> hintSets;
  std::vector<VariantResult> &results;
  bool nestInSource;
  PipelineRunner runPipeline;
};
} // namespace

static std::string formatDiagnostic(Diagnostic &diag) {
  std::string text;
  raw_string_ostream os(text);
  os << diag.getLocation() << ": " << diag;
  for (Diagnostic &note : diag.getNotes()) {
    // The op dump MLIR attaches to op diagnostics can be the whole module.
    std::string text = note.str();
    if (StringRef(text).starts_with("see current operation"))
      continue;
    os << "\n  note: " << note.getLocation() << ": " << text;
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
  ErrorCapture(MLIRContext *ctx, std::string &sink) : ctx(ctx) {
    uint64_t thread = llvm::get_threadid();
    id = ctx->getDiagEngine().registerHandler(
        [thread, &sink](Diagnostic &diag) -> LogicalResult {
          if (llvm::get_threadid() != thread ||
              diag.getSeverity() != mlir::DiagnosticSeverity::Error)
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

ModuleOp BatchCompiler::buildVariant(OpBuilder &b, unsigned index) {
  VariantResult &result = results[index];
  auto variant = ModuleOp::create(b, source.getLoc(), result.id);
  variant->setAttr(kHintsAttrName, b.getStringAttr(result.hints.canonical()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(variant.getBody());
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    auto clone = cast<gpu::GPUModuleOp>(b.clone(*gpuModule));
    if (failed(applyHints(clone, result.hints))) {
      result.error = "hints could not be applied";
      variant.erase();
      return nullptr;
    }
  }
  // Replays run on a verified copy: a hint such as func.<attr> can make
  // the IR invalid, and the backend must not be the one to find out.
  if (failed(verify(variant))) {
    result.error = "the hinted module fails verification";
    variant.erase();
    return nullptr;
  }
  return variant;
}

void BatchCompiler::compile(ArrayRef<unsigned> indices,
                            OpPassManager &pipeline) {
  MLIRContext *ctx = source.getContext();
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> owned;
  if (nestInSource)
    b.setInsertionPointToEnd(source.getBody());
  auto container = ModuleOp::create(b, source.getLoc(), "fly.replay");
  if (!nestInSource)
    owned = OwningOpRef<ModuleOp>(container);
  llvm::scope_exit eraseContainer([&] {
    if (nestInSource)
      container.erase();
  });

  std::string captured;
  SmallVector<std::pair<unsigned, ModuleOp>> variants;
  {
    // Diagnostics of a hint set that fails belong to that variant's result.
    ErrorCapture capture(ctx, captured);
    b.setInsertionPointToEnd(container.getBody());
    for (unsigned index : indices) {
      captured.clear();
      if (ModuleOp variant = buildVariant(b, index))
        variants.emplace_back(index, variant);
      else
        results[index].error += ": " + captured;
    }
    if (variants.empty())
      return;
    captured.clear();
    auto start = std::chrono::steady_clock::now();
    LogicalResult status = runPipeline(pipeline, container);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (succeeded(status)) {
      for (auto [index, variant] : variants) {
        VariantResult &result = results[index];
        result.replayMs = ms;
        result.replayedWith = variants.size();
        recordBinaries(result, variant);
      }
      return;
    }
  }
  if (variants.size() == 1) {
    results[variants.front().first].error =
        captured.empty() ? "the binary pass failed" : captured;
    return;
  }
  SmallVector<unsigned> retry = llvm::to_vector(llvm::make_first_range(variants));
  eraseContainer.release();
  if (nestInSource)
    container.erase();
  owned = nullptr;
  for (unsigned index : retry)
    compile(ArrayRef<unsigned>(index), pipeline);
}

/// A missing toolkit would fail every variant with "lld invocation failed":
/// say what is missing, once, before compiling.
static LogicalResult verifyToolkit(StringRef binaryPass,
                                   ArrayRef<gpu::GPUModuleOp> gpuModules,
                                   Location loc) {
  std::string toolkit = getPassOption(binaryPass, "toolkit");
  std::string format = getPassOption(binaryPass, "format");
  bool links = format.empty() || format == "bin" || format == "binary" ||
               format == "fatbin" || format == "fatbinary";
  if (toolkit.empty() || !links)
    return success();
  bool rocdl = llvm::any_of(gpuModules, [](gpu::GPUModuleOp gpuModule) {
    return llvm::any_of(gpuModule.getTargetsAttr(), [](mlir::Attribute target) {
      return getTargetFamily(target) == TargetFamily::ROCDL;
    });
  });
  if (!rocdl)
    return success();
  for (StringRef needed : {"llvm/bin/ld.lld", "amdgcn/bitcode"}) {
    SmallString<256> path(toolkit);
    sys::path::append(path, needed);
    if (!sys::fs::exists(path))
      return emitError(loc)
             << "the ROCm toolkit '" << toolkit << "' has no " << needed
             << ", which gpu-module-to-binary needs to link #rocdl.target "
                "objects; pass toolkit=<folder with amdgcn/bitcode and "
                "llvm/bin/ld.lld> (the build makes one: build/rocm-toolkit)";
  }
  return success();
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
static std::optional<SmallVector<mlir::Attribute>>
fingerprintHinted(ArrayRef<gpu::GPUModuleOp> gpuModules, const HintSet &hints) {
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
    if (failed(applyHints(*skeleton, hints)))
      return std::nullopt;
    fingerprint.push_back(skeleton.get()->getAttrDictionary());
    for (Operation &op : *body)
      fingerprint.push_back(op.getAttrDictionary());
  }
  return fingerprint;
}

SmallVector<std::optional<unsigned>>
findDuplicateVariants(ModuleOp source, ArrayRef<HintSet> hintSets) {
  SmallVector<gpu::GPUModuleOp> gpuModules = getTargetedGpuModules(source);
  std::vector<std::pair<std::pair<std::string, SmallVector<mlir::Attribute>>,
                        unsigned>>
      seen;
  SmallVector<std::optional<unsigned>> sameAs(hintSets.size());
  for (auto [index, hints] : enumerate(hintSets)) {
    std::optional<SmallVector<mlir::Attribute>> fingerprint =
        fingerprintHinted(gpuModules, hints);
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
  copy.objects = from.objects;
  copy.binaryIR = from.binaryIR;
  copy.objectHash = from.objectHash;
  copy.error = from.error;
  copy.replayMs = 0;
  copy.replayedWith = from.replayedWith;
  copy.duplicateOf = from.index;
}

FailureOr<std::vector<VariantResult>>
replayVariants(ModuleOp source, ArrayRef<HintSet> hintSets,
               const ReplayConfig &config, bool nestInSource,
               PipelineRunner runPipeline) {
  SmallVector<gpu::GPUModuleOp> gpuModules = getTargetedGpuModules(source);
  // Every hint set is checked before anything compiles: a typo in the last
  // of 200 hint sets must not cost 199 compiles first.
  for (const HintSet &hints : hintSets)
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      if (failed(verifyHintsApply(gpuModule, hints)))
        return failure();

  if (failed(verifyToolkit(config.binaryPass, gpuModules, source.getLoc())))
    return failure();

  std::vector<VariantResult> results(hintSets.size());
  // Hint sets that make identical variant modules (same binary pass options,
  // same hinted attributes) are compiled once; the others copy the result.
  SmallVector<std::optional<unsigned>> sameAs =
      findDuplicateVariants(source, hintSets);
  // Variants whose `opts` differ need their own binary pass instance.
  // Groups keep the order of their first variant.
  std::vector<std::pair<std::string, SmallVector<unsigned>>> groups;
  for (auto [index, hints] : enumerate(hintSets)) {
    unsigned label = config.variantIndices.empty()
                         ? index
                         : config.variantIndices[index];
    results[index].index = label;
    results[index].id = getVariantId(label, hints);
    results[index].hints = hints;
    if (sameAs[index])
      continue;
    std::string opts = getBinaryOptsHint(hints, gpuModules);
    auto group = find_if(groups, [&](auto &g) { return g.first == opts; });
    if (group == groups.end())
      group = groups.insert(groups.end(), {opts, {}});
    group->second.push_back(index);
  }

  MLIRContext *ctx = source.getContext();
  unsigned batchSize = config.maxParallel;
  if (batchSize == 0)
    batchSize = ctx->isMultithreadingEnabled() ? ctx->getNumThreads() : 1;
  BatchCompiler compiler(source, hintSets, results, nestInSource, runPipeline);
  for (auto &[extraOpts, indices] : groups) {
    std::string effective;
    FailureOr<OpPassManager> pipeline = buildReplayPipeline(
        config.binaryPass, extraOpts, source.getLoc(), &effective);
    if (failed(pipeline))
      return failure();
    for (unsigned index : indices)
      results[index].binaryPass = effective;
    for (size_t begin = 0; begin < indices.size(); begin += batchSize)
      compiler.compile(
          ArrayRef(indices).slice(begin,
                                  std::min<size_t>(batchSize,
                                                   indices.size() - begin)),
          *pipeline);
  }

  // Copies for the hint sets whose variant equals an earlier one: same
  // objects (or the same failure); replayMs 0 says it was not compiled.
  for (auto [index, original] : enumerate(sameAs))
    if (original)
      copyVariantOutcome(results[index], results[*original]);

  markDuplicates(results);
  return results;
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
