//===- SplitCompiler.cpp - Prefix once, binary pass per hint set ----------===//

#include "fly/Compiler/SplitCompiler.h"

#include "fly/Cache/VariantCodec.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Pipeline/SplitPipeline.h"
#include "fly/Pipeline/StageDumper.h"
#include "fly/Replay/Replay.h"
#include "fly/Snapshot/Snapshot.h"

#include "fly/Replay/VariantDedupe.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <atomic>
#include <chrono>

using namespace mlir;
using llvm::StringRef;
using llvm::Twine;

namespace fly {

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}
} // namespace

unsigned CompileResult::numFailed() const {
  return llvm::count_if(variants,
                        [](const VariantResult &v) { return !v.succeeded(); });
}

SplitCompilerOptions SplitCompilerOptions::fromEnvironment() {
  SplitCompilerOptions options;
  options.dumpDir = StageDumper::directoryFromEnvironment().value_or("");
  return options;
}

SplitCompiler::SplitCompiler(MLIRContext &context, SplitCompilerOptions opts)
    : context(context), options(std::move(opts)), cache(options.cache) {
  if (!options.dumpDir.empty())
    dumper = std::make_unique<StageDumper>(options.dumpDir);
  if (options.reproducerDir.empty())
    options.reproducerDir = options.dumpDir;
}

SplitCompiler::~SplitCompiler() = default;

void SplitCompiler::say(const Twine &line) {
  if (options.progress)
    options.progress(line.str());
}

LogicalResult SplitCompiler::runPipeline(OpPassManager &pipeline, ModuleOp op,
                                         bool dump) {
  PassManager pm(&context, pipeline.getOpAnchorName());
  static_cast<OpPassManager &>(pm) = pipeline;
  if (options.configurePassManager && failed(options.configurePassManager(pm)))
    return failure();
  if (dump && dumper)
    pm.addInstrumentation(dumper->instrument(op));
  return pm.run(op);
}

/// Parses and runs `passes` (no anchor) on `module`.
static LogicalResult parsePasses(StringRef passes, OpPassManager &pm,
                                 Location loc) {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(parsePassPipeline(passes, pm, os)))
    return emitError(loc) << "cannot parse pipeline '" << passes
                          << "': " << error;
  return success();
}

/// Replaces the targeted gpu.modules of `module` by the gpu.binary ops
/// printed in `binaryIR`, as the pipeline's own binary pass would have.
static LogicalResult installBinaries(ModuleOp module, StringRef binaryIR) {
  Block parsed;
  if (failed(parseSourceString(binaryIR, &parsed,
                               ParserConfig(module.getContext()))))
    return failure();
  for (gpu::GPUModuleOp gpuModule : getTargetedGpuModules(module)) {
    for (Operation &op : llvm::make_early_inc_range(parsed)) {
      auto binary = dyn_cast<gpu::BinaryOp>(op);
      if (binary && binary.getName() == gpuModule.getName()) {
        binary->moveBefore(gpuModule);
        break;
      }
    }
    gpuModule.erase();
  }
  return success();
}

/// Replays each of `indices` alone, `config.maxParallel` at a time, each in a
/// CrashRecoveryContext: a backend that aborts (an LLVM fatal error, a
/// segfault) fails only its own variant.
static FailureOr<std::vector<VariantResult>>
replayIsolated(ModuleOp preBinary, ArrayRef<HintSet> hintSets,
               ArrayRef<unsigned> indices, const ReplayConfig &config,
               PipelineRunner runner) {
  llvm::CrashRecoveryContext::Enable();
  std::vector<VariantResult> results(indices.size());
  std::atomic<bool> setupFailed{false};
  llvm::DefaultThreadPool pool(
      llvm::hardware_concurrency(std::max(1u, config.maxParallel)));
  auto crashMessage = [](const llvm::CrashRecoveryContext &crc,
                         StringRef step) {
    // On Unix RetCode is 128 + the signal number.
    return llvm::formatv("the binary pass crashed (signal {0}){1}; the "
                         "backend's message is on stderr",
                         crc.RetCode > 128 ? crc.RetCode - 128 : crc.RetCode,
                         step)
        .str();
  };

  // Shared ISA first, each compile alone: the variants then only assemble.
  ReplayConfig shared = config;
  if (shared.reuseIsa) {
    shared.sharedIsa = std::make_shared<SharedIsaTable>();
    SmallVector<gpu::GPUModuleOp> gpuModules = getTargetedGpuModules(preBinary);
    std::vector<SharedIsaKey> seen;
    for (unsigned i : indices) {
      std::optional<SharedIsaKey> key = getSharedIsaKey(
          gpuModules, hintSets[i], getBinaryOptsHint(hintSets[i], gpuModules));
      if (!key || llvm::is_contained(seen, *key))
        continue;
      seen.push_back(*key);
      pool.async([&, i = i, key = *key] {
        ReplayConfig one = shared;
        one.maxParallel = 1;
        one.variantIndices = {i};
        LogicalResult prepared = failure();
        llvm::CrashRecoveryContext crc;
        if (!crc.RunSafely([&] {
              prepared = prepareSharedIsa(preBinary, {hintSets[i]}, one,
                                          /*nestInSource=*/false, runner);
            })) {
          releaseErrorCapturesAfterCrash();
          SharedIsa crashed;
          crashed.producer = i;
          crashed.error = crashMessage(crc, " compiling the ISA");
          one.sharedIsa->insert(key, std::move(crashed));
          return;
        }
        if (failed(prepared))
          setupFailed = true;
      });
    }
    pool.wait();
    if (setupFailed)
      return failure();
  }

  for (auto [k, i] : llvm::enumerate(indices)) {
    pool.async([&, k = k, i = i] {
      ReplayConfig one = shared;
      one.maxParallel = 1;
      one.variantIndices = {i};
      FailureOr<std::vector<VariantResult>> replayed = failure();
      llvm::CrashRecoveryContext crc;
      if (!crc.RunSafely([&] {
            replayed = replayVariants(preBinary, {hintSets[i]}, one,
                                      /*nestInSource=*/false, runner);
          })) {
        releaseErrorCapturesAfterCrash();
        VariantResult &crashed = results[k];
        crashed.index = i;
        crashed.hints = hintSets[i];
        crashed.id = getVariantId(i, hintSets[i]);
        crashed.error = crashMessage(crc, "");
        return;
      }
      if (failed(replayed)) {
        setupFailed = true;
        return;
      }
      results[k] = std::move(replayed->front());
    });
  }
  pool.wait();
  if (setupFailed)
    return failure();
  return results;
}

FailureOr<CompileResult> SplitCompiler::compile(const CompileJob &job) {
  Clock::time_point start = Clock::now();
  CompileResult result;
  Location loc = FileLineColLoc::get(&context, job.sourceName, 0, 0);
  llvm::Expected<SplitPipeline> split = splitAtBinaryPass(job.pipeline);
  if (!split)
    return emitError(loc) << llvm::toString(split.takeError());
  if (job.hintSets.empty())
    return emitError(loc) << "no hint sets: give at least one (an empty set "
                             "compiles with the backend's defaults)";
  result.prefix = split->prefix;
  result.binaryPass = split->binaryPass;
  result.suffix = split->suffix;

  // Phase 1: the prefix, once, or its result from the cache. The keys hash
  // the whole source: not worth it for a cache that is off.
  CacheKey baseKey;
  if (cache.enabled()) {
    baseKey = makeBaseKey(job.source, split->prefix, job.chip);
    result.baseKey = baseKey.digest();
  }
  std::string slot = job.sourceName + "|" + job.chip;
  OwningOpRef<ModuleOp> preBinary;
  auto runPrefix = [&]() -> std::optional<std::string> {
    say("phase 1: running the prefix pipeline once");
    Clock::time_point prefixStart = Clock::now();
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
        job.source, ParserConfig(&context), job.sourceName);
    if (!module)
      return std::nullopt;
    if (dumper)
      dumper->write("origin", *module);
    OpPassManager prefix("builtin.module");
    if (failed(parsePasses(split->prefix, prefix, loc)) ||
        failed(runPipeline(prefix, *module, /*dump=*/true)) ||
        failed(verifyCheckpointPosition(*module, "the split compiler")))
      return std::nullopt;
    result.prefixMs = msSince(prefixStart);
    std::string bytecode;
    if (cache.enabled()) {
      llvm::raw_string_ostream os(bytecode);
      if (failed(writeBytecodeToFile(*module, os)))
        return std::nullopt;
    }
    preBinary = std::move(module);
    return bytecode;
  };
  if (cache.enabled()) {
    std::string explanation = cache.explainMiss(slot, baseKey);
    bool hit = false;
    std::optional<std::string> payload =
        cache.getOrCompute("prebinary", baseKey, runPrefix, hit);
    if (hit) {
      Clock::time_point loadStart = Clock::now();
      // Verified before use: a snapshot that does not verify is rebuilt.
      std::string problems;
      {
        ScopedDiagnosticHandler quiet(&context, [&](Diagnostic &diag) {
          problems += diag.str() + "; ";
          return success();
        });
        preBinary =
            readSnapshotBuffer(*payload, "fly-cache:prebinary", &context);
      }
      if (preBinary) {
        result.prefixFromCache = true;
        result.prefixMs = msSince(loadStart);
        say("phase 1: pre-binary module loaded from cache");
        if (dumper) {
          if (OwningOpRef<ModuleOp> origin = parseSourceString<ModuleOp>(
                  job.source, ParserConfig(&context), job.sourceName))
            dumper->write("origin", *origin);
          dumper->write(
              "prebinary_from_cache",
              "// Phase 1 was not run: this pre-binary module came "
              "from the compile cache (base key " +
                  result.baseKey + ").\n" + [&] {
                    std::string text;
                    llvm::raw_string_ostream os(text);
                    preBinary->print(os);
                    return text;
                  }());
        }
      } else {
        result.warnings.push_back("cached pre-binary module failed "
                                  "verification (" +
                                  problems + "); rebuilding it");
        payload = runPrefix();
        if (payload)
          cache.store("prebinary", baseKey, *payload);
      }
    } else {
      result.cacheExplanation = explanation;
    }
    if (preBinary)
      cache.recordSlot(slot, baseKey);
  } else {
    runPrefix();
  }
  if (!preBinary)
    return failure();

  // Phase 2: one replay per hint set not already in the cache.
  Clock::time_point replayStart = Clock::now();
  size_t n = job.hintSets.size();
  result.variants.resize(n);
  result.variantFromCache.assign(n, false);
  std::vector<CacheKey> keys(n);
  // Fills variant `i` from the cache; false on a miss.
  auto takeCached = [&](unsigned i) {
    if (!cache.enabled())
      return false;
    const HintSet &hints = job.hintSets[i];
    std::optional<std::string> payload = cache.lookup("binary", keys[i]);
    if (!payload)
      return false;
    std::optional<VariantResult> cached = decodeVariant(*payload);
    if (!cached) {
      result.warnings.push_back("discarding unreadable cached variant " +
                                getVariantId(i, hints));
      return false;
    }
    cached->index = i;
    cached->id = getVariantId(i, hints);
    cached->hints = hints;
    result.variants[i] = std::move(*cached);
    result.variantFromCache[i] = true;
    return true;
  };
  std::vector<unsigned> misses;
  SmallVector<gpu::GPUModuleOp> gpuModules = getTargetedGpuModules(*preBinary);
  for (unsigned i = 0; i < n; ++i) {
    const HintSet &hints = job.hintSets[i];
    std::string effective;
    if (failed(buildReplayPipeline(split->binaryPass,
                                   getBinaryOptsHint(hints, gpuModules), loc,
                                   &effective)))
      return failure();
    if (cache.enabled())
      keys[i] = makeBinaryKey(baseKey, hints, effective);
    if (!takeCached(i))
      misses.push_back(i);
  }
  say(llvm::formatv("phase 2: {0} variant(s) from cache, replaying {1}",
                    n - misses.size(), misses.size()));
  // Compiles `indices` and stores what succeeds.
  auto replay = [&](ArrayRef<unsigned> indices) -> LogicalResult {
    if (indices.empty())
      return success();
    ReplayConfig config;
    config.binaryPass = split->binaryPass;
    config.maxParallel =
        options.jobs ? options.jobs
                     : llvm::hardware_concurrency().compute_thread_count();
    config.reuseIsa = options.reuseIsa;
    auto runner = [&](OpPassManager &pipeline, ModuleOp container) {
      return runPipeline(pipeline, container, /*dump=*/false);
    };
    std::vector<VariantResult> replayed;
    if (options.isolateCrashes) {
      // One replayVariants call per variant cannot see duplicates: identical
      // hinted variants are found here and compiled once.
      std::vector<HintSet> hintSets;
      for (unsigned i : indices)
        hintSets.push_back(job.hintSets[i]);
      SmallVector<std::optional<unsigned>> sameAs =
          findDuplicateVariants(*preBinary, hintSets);
      SmallVector<unsigned> distinct;
      for (auto [k, i] : llvm::enumerate(indices))
        if (!sameAs[k])
          distinct.push_back(i);
      FailureOr<std::vector<VariantResult>> isolated =
          replayIsolated(*preBinary, job.hintSets, distinct, config, runner);
      if (failed(isolated))
        return failure();
      replayed.resize(indices.size());
      for (size_t k = 0, d = 0; k < indices.size(); ++k)
        if (!sameAs[k])
          replayed[k] = std::move((*isolated)[d++]);
      for (size_t k = 0; k < indices.size(); ++k) {
        if (!sameAs[k])
          continue;
        VariantResult &copy = replayed[k];
        copy.index = indices[k];
        copy.hints = job.hintSets[indices[k]];
        copy.id = getVariantId(indices[k], copy.hints);
        copyVariantOutcome(copy, replayed[*sameAs[k]]);
      }
    } else {
      std::vector<HintSet> hintSets;
      for (unsigned i : indices)
        hintSets.push_back(job.hintSets[i]);
      config.variantIndices.assign(indices.begin(), indices.end());
      // The context's thread pool bounds how many variants compile at once.
      // Batches of exactly that many make every batch wait for its slowest
      // variant; larger batches (up to 4 variants per thread, which bounds
      // the hinted copies alive) let a free thread take the next variant.
      unsigned threads =
          context.isMultithreadingEnabled() ? context.getNumThreads() : 1;
      if (threads > 1 && config.maxParallel >= threads)
        config.maxParallel = std::max<unsigned>(
            config.maxParallel, std::min<size_t>(indices.size(), 4 * threads));
      FailureOr<std::vector<VariantResult>> batch = replayVariants(
          *preBinary, hintSets, config, /*nestInSource=*/false, runner);
      if (failed(batch))
        return failure();
      replayed = std::move(*batch);
    }
    for (auto [k, i] : llvm::enumerate(indices)) {
      VariantResult &variant = replayed[k];
      // Encoding copies every object: not for a cache that is off.
      if (variant.succeeded() && cache.enabled())
        cache.store("binary", keys[i], encodeVariant(variant));
      say(llvm::formatv("variant {0}/{1} {2}: {3}", i + 1, n, variant.id,
                        variant.succeeded() ? "ok" : "FAILED"));
      result.variants[i] = std::move(variant);
    }
    return success();
  };
  // Keys another process is compiling right now are waited for, not
  // compiled twice.
  std::vector<std::unique_ptr<CacheKeyLock>> locks(n);
  SmallVector<unsigned> mine, others;
  for (unsigned i : misses) {
    locks[i] = cache.lock("binary", keys[i]);
    (locks[i]->getState() == CacheKeyLock::State::OwnedByOther ? others : mine)
        .push_back(i);
  }
  if (failed(replay(mine)))
    return failure();
  for (unsigned i : mine)
    locks[i].reset();
  SmallVector<unsigned> leftover;
  for (unsigned i : others) {
    locks[i]->wait();
    if (!takeCached(i))
      leftover.push_back(i);
  }
  if (failed(replay(leftover)))
    return failure();
  locks.clear();
  markDuplicates(result.variants);
  result.replayMs = msSince(replayStart);

  // Debugging artefacts per variant: final stage, LLVM IR and ISA.
  if (dumper) {
    for (VariantResult &variant : result.variants) {
      if (!variant.succeeded())
        continue;
      dumper->write(variant.id + "_gpu-module-to-binary", variant.binaryIR);
      for (auto [format, extension] :
           {std::pair<StringRef, StringRef>{"llvm", ".ll"},
            std::pair<StringRef, StringRef>{"isa", ".s"}}) {
        FailureOr<std::string> pass = setBinaryPassOptions(
            split->binaryPass, ("format=" + format).str(), loc);
        if (failed(pass))
          continue;
        ReplayConfig config;
        config.binaryPass = *pass;
        config.maxParallel = 1;
        FailureOr<std::vector<VariantResult>> artefact =
            replayVariants(*preBinary, {variant.hints}, config, false,
                           [&](OpPassManager &pipeline, ModuleOp container) {
                             return runPipeline(pipeline, container, false);
                           });
        if (failed(artefact) || !artefact->front().succeeded())
          continue;
        for (const VariantObject &object : artefact->front().objects) {
          std::string text = object.bytes;
          if (format == "llvm") {
            llvm::LLVMContext llvmContext;
            auto module = llvm::parseBitcodeFile(
                llvm::MemoryBufferRef(object.bytes, "offload"), llvmContext);
            if (!module) {
              llvm::consumeError(module.takeError());
              continue;
            }
            text.clear();
            llvm::raw_string_ostream os(text);
            (*module)->print(os, nullptr);
          }
          dumper->write(variant.id + "." + object.gpuModule, text, extension);
        }
      }
    }
  }

  // A failing variant leaves what it takes to reproduce it with fly-opt.
  if (!options.reproducerDir.empty()) {
    for (const VariantResult &variant : result.variants) {
      if (variant.succeeded())
        continue;
      llvm::SmallString<256> dir(options.reproducerDir);
      llvm::sys::path::append(dir, "repro", variant.id);
      llvm::sys::fs::create_directories(dir);
      auto path = [&](StringRef name) {
        llvm::SmallString<256> p(dir);
        llvm::sys::path::append(p, name);
        return std::string(p);
      };
      if (failed(writeSnapshot(*preBinary, path("snapshot.mlirbc"),
                               SnapshotFormat::Bytecode)))
        continue;
      llvm::json::Object hintObj;
      for (const auto &[key, value] : variant.hints.entries())
        hintObj[key] = value;
      std::string script =
          "#!/bin/sh\n# Reproduces the failing replay of variant " +
          variant.id +
          ".\ncd \"$(dirname \"$0\")\" && exec fly-opt snapshot.mlirbc "
          "--pass-pipeline='builtin.module(fly-snapshot{hints-file=hints.json "
          "binary-pass={" +
          split->binaryPass + "}})' -o /dev/null\n";
      for (auto [name, text] :
           {std::pair<std::string, std::string>{
                "hints.json",
                llvm::formatv("{0}\n", llvm::json::Value(llvm::json::Array{
                                           std::move(hintObj)}))
                    .str()},
            {"reproduce.sh", script},
            {"error.txt", variant.error}}) {
        if (llvm::Error err =
                llvm::writeToOutput(path(name), [&](llvm::raw_ostream &os) {
                  os << text;
                  return llvm::Error::success();
                }))
          llvm::consumeError(std::move(err));
      }
      llvm::sys::fs::setPermissions(path("reproduce.sh"),
                                    llvm::sys::fs::all_read |
                                        llvm::sys::fs::all_exe |
                                        llvm::sys::fs::owner_write);
      result.reproducers.push_back(std::string(dir));
    }
  }

  // The main module: the first variant's binaries in place of the
  // gpu.modules, then the host suffix, once.
  if (result.variants.front().succeeded()) {
    OwningOpRef<ModuleOp> main = cast<ModuleOp>((*preBinary)->clone());
    if (succeeded(installBinaries(*main, result.variants.front().binaryIR))) {
      OpPassManager suffix("builtin.module");
      if (split->suffix.empty() ||
          (succeeded(parsePasses(split->suffix, suffix, loc)) &&
           succeeded(runPipeline(suffix, *main, /*dump=*/true))))
        result.mainModule = std::move(main);
    }
  }

  for (std::string &warning : cache.takeWarnings())
    result.warnings.push_back(std::move(warning));
  cache.prune();
  result.totalMs = msSince(start);
  return result;
}

} // namespace fly
