//===- FlySnapshotCAPI.cpp - C API of fly-snapshot ------------------------===//
//
// A thin C shell over fly::SplitCompiler. Every diagnostic is captured as
// text by a ScopedDiagnosticHandler, so nothing reaches stderr; a bad input,
// pipeline or hint set is a null result with the diagnostics as the thread's
// last error (the conventions at the top of fly-c/FlySnapshot.h), never an
// abort.
//
//===----------------------------------------------------------------------===//

#include "fly-c/FlySnapshot.h"

#include "Compiler/SweepReport.h"
#include "fly/Compiler/Presets.h"
#include "fly/Compiler/Registration.h"
#include "fly/Compiler/SplitCompiler.h"
#include "fly/Compiler/TargetName.h"
#include "fly/Hints/HintRegistry.h"
#include "fly/Hints/HintSetSources.h"
#include "fly/Replay/BinaryPass.h"
#include "fly/Replay/Manifest.h"
#include "fly/Support/BoundedJSON.h"
#include "fly/Support/InstallLocation.h"
#include "fly/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#ifndef FLY_VERSION
#define FLY_VERSION "unknown"
#endif

using namespace mlir;

namespace {

struct CompilerImpl {
  explicit CompilerImpl(fly::SplitCompilerOptions options) : options(options) {
    fly::registerCompilerDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
    compiler =
        std::make_unique<fly::SplitCompiler>(*context, std::move(options));
  }

  /// What the compiler was made with; a sweep's own compiler starts there.
  fly::SplitCompilerOptions options;
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<fly::SplitCompiler> compiler;
  std::mutex mutex;
  /// flyCompilerDestroy while calls run (from a sweep's callback, or another
  /// thread): a sweep stops starting variants, a call still waiting for the
  /// compiler fails, and the last call to return destroys it.
  std::atomic<bool> destroyRequested{false};
  std::mutex lifetimeMutex;
  unsigned activeCalls = 0;
};

/// Keeps a compiler alive for one call of the API on it.
class CompilerCall {
public:
  explicit CompilerCall(CompilerImpl *impl) : impl(impl) {
    if (!impl)
      return;
    std::lock_guard<std::mutex> lock(impl->lifetimeMutex);
    ++impl->activeCalls;
  }
  ~CompilerCall() {
    if (!impl)
      return;
    bool last;
    {
      std::lock_guard<std::mutex> lock(impl->lifetimeMutex);
      last = --impl->activeCalls == 0 && impl->destroyRequested;
    }
    if (last)
      delete impl;
  }
  CompilerCall(const CompilerCall &) = delete;
  CompilerCall &operator=(const CompilerCall &) = delete;

private:
  CompilerImpl *impl;
};

struct ResultImpl {
  bool prefixFromCache = false;
  /// Diagnostics, one per line: the last error when the compile failed as a
  /// whole, else flyResultGetDiagnostics.
  std::string diagnostics;
  std::vector<fly::VariantResult> variants;
  std::vector<std::string> variantJSON;
  /// Per variant: the position of its kernel (sweeps; 0 for a compile).
  std::vector<size_t> kernelOf;
  /// The manifest's top level (fly::getSweepHeader), for flyResultWrite.
  fly::SweepHeader header;
};

CompilerImpl *unwrap(FlyCompiler c) {
  return static_cast<CompilerImpl *>(c.ptr);
}
ResultImpl *unwrap(FlyResult r) { return static_cast<ResultImpl *>(r.ptr); }
FlyResult wrap(ResultImpl *r) { return FlyResult{r}; }

/// The one error channel: why the last fallible call on this thread failed.
thread_local std::string lastError;

FlyResult nullResult(std::string message) {
  lastError = std::move(message);
  return FlyResult{nullptr};
}

/// A compile that failed as a whole: its diagnostics become the last error.
FlyResult failedResult(ResultImpl *r, llvm::StringRef fallback) {
  std::string message =
      r->diagnostics.empty() ? fallback.str() : std::move(r->diagnostics);
  delete r;
  return nullResult(std::move(message));
}

/// "variant_timeout" / "time_budget": seconds, at most 1e9 (the timeout is
/// stored as unsigned seconds; a bigger value would wrap to a short one).
std::optional<double> getSeconds(const llvm::json::Value &value) {
  std::optional<double> seconds = value.getAsNumber();
  if (!seconds || !(*seconds >= 0 && *seconds <= 1e9))
    return std::nullopt;
  return seconds;
}

/// The compiler whose sweep callback runs on this thread: a compile or sweep
/// on it from there would wait for itself.
thread_local const void *callbackOf = nullptr;

void registerPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    fly::registerFlySnapshotPasses();
  });
}

void appendLine(std::string &out, llvm::StringRef line) {
  if (!out.empty() && out.back() != '\n')
    out += '\n';
  out += line.str();
}

/// A diagnostic as one line (notes after it) of the result's error text.
LogicalResult captureDiagnostic(Diagnostic &diag, ResultImpl *r,
                                std::mutex &mutex) {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  }
  os << diag.getLocation() << ": " << diag;
  for (const Diagnostic &note : diag.getNotes())
    os << "\nnote: " << note.getLocation() << ": " << note;
  std::lock_guard<std::mutex> lock(mutex);
  appendLine(r->diagnostics, text);
  return success();
}

/// A variant's JSON as results and callbacks hand it out.
std::string variantText(const fly::VariantResult &variant, bool fromCache,
                        const std::string *kernel, size_t kernelIndex) {
  llvm::json::Object json = fly::variantToJSON(variant, {});
  json["from_cache"] = fromCache;
  if (kernel) {
    json["kernel"] = *kernel;
    json["kernel_index"] = static_cast<int64_t>(kernelIndex);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(json));
  return text;
}

} // namespace

extern "C" {

const char *flyGetVersion(void) { return FLY_VERSION; }

const char *flyGetLastError(void) { return lastError.c_str(); }

const char *flyGetHintSpecsJSON(void) {
  static const std::string specs = fly::printHintSpecsJSON();
  return specs.c_str();
}

FlyCompiler flyCompilerCreate(const char *optionsJSON) {
  lastError.clear();
  registerPassesOnce();
  fly::SplitCompilerOptions options =
      fly::SplitCompilerOptions::fromEnvironment();
  // The host is someone else's process (a Python autotuner): by default
  // nothing a backend does may end it, so variants compile in child
  // fly-tune processes.
  options.executor = fly::ExecutorKind::Process;
  if (optionsJSON && *optionsJSON) {
    llvm::Expected<llvm::json::Value> parsed =
        fly::parseJSONBounded(optionsJSON, "");
    if (!parsed) {
      lastError = "bad compiler options: " + llvm::toString(parsed.takeError());
      return FlyCompiler{nullptr};
    }
    const llvm::json::Object *obj = parsed->getAsObject();
    if (!obj) {
      lastError = "bad compiler options: expected a JSON object";
      return FlyCompiler{nullptr};
    }
    for (const auto &[key, value] : *obj) {
      if (key == "jobs") {
        std::optional<int64_t> jobs = value.getAsInteger();
        if (!jobs || *jobs < 0 || *jobs > 65536) {
          lastError = "bad compiler options: \"jobs\" must be an integer "
                      "from 0 to 65536";
          return FlyCompiler{nullptr};
        }
        options.jobs = static_cast<unsigned>(*jobs);
      } else if (key == "variant_timeout" || key == "time_budget") {
        std::optional<double> seconds = getSeconds(value);
        if (!seconds) {
          lastError = "bad compiler options: \"" + key.str() +
                      "\" must be a number of seconds from 0 to 1e9";
          return FlyCompiler{nullptr};
        }
        if (key == "time_budget")
          options.timeBudgetSeconds = *seconds;
        else
          options.variantTimeoutSeconds =
              static_cast<unsigned>(std::ceil(*seconds));
      } else if (key == "isolate") {
        lastError = "bad compiler options: \"isolate\" was removed: "
                    "\"executor\": \"process\" (the default) compiles in "
                    "child processes, \"batch\" in this process";
        return FlyCompiler{nullptr};
      } else if (key == "executor") {
        std::optional<llvm::StringRef> name = value.getAsString();
        std::optional<fly::ExecutorKind> kind =
            name ? fly::parseExecutorKind(*name) : std::nullopt;
        if (!kind) {
          lastError = "bad compiler options: \"executor\" must be \"batch\", "
                      "\"isolated\" or \"process\"";
          return FlyCompiler{nullptr};
        }
        options.executor = *kind;
      } else if (key == "cache" || key == "reuse_isa") {
        std::optional<bool> on = value.getAsBoolean();
        if (!on) {
          lastError =
              ("bad compiler options: \"" + key.str() + "\" must be a boolean");
          return FlyCompiler{nullptr};
        }
        (key == "cache" ? options.cache.enabled : options.reuseIsa) = *on;
      } else if (key == "cache_dir" || key == "dump_dir") {
        std::optional<llvm::StringRef> dir = value.getAsString();
        if (!dir) {
          lastError =
              ("bad compiler options: \"" + key.str() + "\" must be a string");
          return FlyCompiler{nullptr};
        }
        if (key == "cache_dir")
          options.cache.directory = dir->str();
        else
          options.dumpDir = dir->str();
      } else {
        lastError = "bad compiler options: unknown option \"" + key.str() +
                    "\" (expected jobs, cache, cache_dir, dump_dir, reuse_isa, "
                    "executor, variant_timeout, time_budget)";
        return FlyCompiler{nullptr};
      }
    }
  }
  try {
    return FlyCompiler{new CompilerImpl(std::move(options))};
  } catch (const std::exception &e) {
    lastError = std::string("cannot create compiler: ") + e.what();
    return FlyCompiler{nullptr};
  }
}

void flyCompilerDestroy(FlyCompiler compiler) {
  CompilerImpl *impl = unwrap(compiler);
  if (!impl)
    return;
  {
    std::lock_guard<std::mutex> lock(impl->lifetimeMutex);
    impl->destroyRequested = true;
    if (impl->activeCalls)
      return;
  }
  delete impl;
}

/// The checks before a compile, in flyCompilerCompile's order.
static llvm::Error checkArguments(const char *hintSetsJSON, const char *chip,
                                  std::vector<fly::HintSet> &hintSets) {
  // Part of the cache key: a typo must not become a new cache slot.
  if (llvm::Error err = fly::parseTargetSpec(chip ? chip : "").takeError())
    return llvm::createStringError("bad chip: " +
                                   llvm::toString(std::move(err)));
  fly::HintSetSources sources;
  sources.json = hintSetsJSON ? hintSetsJSON : "";
  sources.jsonName = "bad hint sets";
  auto hints = fly::collectHintSets(sources);
  if (!hints)
    return hints.takeError();
  hintSets = std::move(*hints);
  return llvm::Error::success();
}

bool flyCheckCompileArguments(const char *hintSetsJSON, const char *chip) {
  lastError.clear();
  std::vector<fly::HintSet> hintSets;
  if (llvm::Error err = checkArguments(hintSetsJSON, chip, hintSets)) {
    lastError = llvm::toString(std::move(err));
    return false;
  }
  return true;
}

bool flyCheckBinaryPass(const char *pass, FlyStringCallback callback,
                        void *userData) {
  lastError.clear();
  if (!pass) {
    lastError = "no binary pass";
    return false;
  }
  // A location needs a context; the parse needs no dialect.
  MLIRContext context(MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    appendLine(diagnostics, diag.str());
    return success();
  });
  FailureOr<fly::BinaryPassOptions> options =
      fly::parseBinaryPass(pass, UnknownLoc::get(&context));
  if (failed(options)) {
    lastError = std::move(diagnostics);
    return false;
  }
  if (callback) {
    std::string printed = fly::printBinaryPass(*options);
    callback(printed.c_str(), printed.size(), userData);
  }
  // The callback may have failed a call of its own: this one succeeded.
  lastError.clear();
  return true;
}

FlyResult flyCompilerCompile(FlyCompiler compiler, const char *source,
                             size_t sourceSize, const char *pipeline,
                             const char *hintSetsJSON, const char *chip) {
  lastError.clear();
  CompilerImpl *impl = unwrap(compiler);
  CompilerCall call(impl);
  if (!impl)
    return nullResult("null compiler");
  if (impl == callbackOf)
    return nullResult("flyCompilerCompile from a sweep callback of the same "
                      "compiler: it would wait for the sweep (use another "
                      "compiler)");
  if (!source)
    return nullResult("no source");
  if (sourceSize == 0)
    return nullResult("empty source: sourceSize is 0 (pass the byte length "
                      "of the MLIR text or bytecode)");
  if (!pipeline || !*pipeline)
    return nullResult("no pipeline");
  fly::CompileJob job;
  if (llvm::Error err = checkArguments(hintSetsJSON, chip, job.hintSets))
    return nullResult(llvm::toString(std::move(err)));
  job.source.assign(source, sourceSize);
  job.sourceName = "<fly-capi>";
  job.pipeline = pipeline;
  job.chip = chip ? chip : "";
  if (job.hintSets.empty())
    job.hintSets.emplace_back();

  auto *r = new ResultImpl;
  std::lock_guard<std::mutex> lock(impl->mutex);
  if (impl->destroyRequested)
    return failedResult(r, "the compiler was destroyed");
  std::mutex diagMutex;
  ScopedDiagnosticHandler handler(impl->context.get(), [&](Diagnostic &diag) {
    return captureDiagnostic(diag, r, diagMutex);
  });

  FailureOr<fly::CompileResult> result = failure();
  try {
    result = impl->compiler->compile(job);
  } catch (const std::exception &e) {
    appendLine(r->diagnostics, std::string("error: ") + e.what());
    result = failure();
  }
  if (failed(result))
    return failedResult(r, "error: compile failed");
  r->prefixFromCache = result->prefixFromCache;
  for (const std::string &w : result->warnings)
    appendLine(r->diagnostics, "warning: " + w);
  r->header = fly::getSweepHeader("fly-capi", job, *result);
  r->variants = std::move(result->variants);
  // A result may outlive the compiler and its context.
  for (fly::VariantResult &variant : r->variants)
    fly::keepBinaryIR(variant);
  for (size_t i = 0, e = r->variants.size(); i != e; ++i) {
    llvm::json::Object json = fly::variantToJSON(r->variants[i], {});
    if (i < result->variantFromCache.size())
      json["from_cache"] = bool(result->variantFromCache[i]);
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(json));
    r->variantJSON.push_back(std::move(text));
  }
  return wrap(r);
}

size_t flyVariantGetNumObjects(FlyVariant variant) {
  auto *v = static_cast<const fly::VariantResult *>(variant.ptr);
  return v ? v->objects.size() : 0;
}

const void *flyVariantGetObject(FlyVariant variant, size_t object,
                                size_t *size) {
  auto *v = static_cast<const fly::VariantResult *>(variant.ptr);
  if (size)
    *size = 0;
  if (!v || object >= v->objects.size())
    return nullptr;
  const std::string &bytes = v->objects[object].bytes;
  if (size)
    *size = bytes.size();
  return bytes.data();
}

static FlyResult sweepOn(CompilerImpl *impl, const FlySweepKernel *kernels,
                         size_t numKernels, const char *pipeline,
                         const char *hintSetsJSON, const char *chip,
                         const char *optionsJSON, FlyVariantCallback callback,
                         void *userData) {
  if (!impl)
    return nullResult("null compiler");
  if (impl == callbackOf)
    return nullResult("flyCompilerSweep from a sweep callback of the same "
                      "compiler: it would wait for the sweep (use another "
                      "compiler)");
  if (!kernels || numKernels == 0)
    return nullResult("no kernels: give at least one");
  if (!pipeline || !*pipeline)
    return nullResult("no pipeline");
  std::vector<fly::HintSet> hintSets;
  if (llvm::Error err = checkArguments(hintSetsJSON, chip, hintSets))
    return nullResult(llvm::toString(std::move(err)));
  if (hintSets.empty())
    hintSets.emplace_back();
  fly::SplitCompilerOptions options = impl->options;
  if (optionsJSON && *optionsJSON) {
    llvm::Expected<llvm::json::Value> parsed =
        fly::parseJSONBounded(optionsJSON, "sweep options");
    if (!parsed)
      return nullResult(llvm::toString(parsed.takeError()));
    const llvm::json::Object *object = parsed->getAsObject();
    if (!object)
      return nullResult("bad sweep options: expected a JSON object");
    for (const auto &[key, value] : *object) {
      std::optional<double> seconds = getSeconds(value);
      if ((key != "variant_timeout" && key != "time_budget") || !seconds)
        return nullResult("bad sweep options: \"" + key.str() +
                          "\" (expected variant_timeout, time_budget: "
                          "seconds from 0 to 1e9)");
      if (key == "variant_timeout")
        options.variantTimeoutSeconds =
            static_cast<unsigned>(std::ceil(*seconds));
      else
        options.timeBudgetSeconds = *seconds;
    }
  }
  std::vector<fly::CompileJob> jobs;
  std::vector<std::string> names;
  for (size_t k = 0; k < numKernels; ++k) {
    const FlySweepKernel &kernel = kernels[k];
    if (!kernel.source || kernel.sourceSize == 0)
      return nullResult("kernel #" + std::to_string(k) + ": empty source");
    fly::CompileJob job;
    job.source.assign(kernel.source, kernel.sourceSize);
    job.sourceName = kernel.name && *kernel.name
                         ? std::string(kernel.name)
                         : "<kernel " + std::to_string(k) + ">";
    job.pipeline = pipeline;
    job.chip = chip ? chip : "";
    job.hintSets = hintSets;
    names.push_back(job.sourceName);
    jobs.push_back(std::move(job));
  }

  std::atomic<bool> cancelled{false};
  // A callback's cancel, or the compiler destroyed during the sweep.
  auto stopping = [&] {
    return cancelled.load() || impl->destroyRequested.load();
  };
  options.variantFinished = [&](unsigned kernel, unsigned,
                                const fly::VariantResult &variant,
                                bool fromCache) {
    if (!callback || stopping())
      return;
    std::string text = variantText(variant, fromCache, &names[kernel], kernel);
    const void *outer = callbackOf;
    callbackOf = impl;
    bool cancel = callback(FlyVariant{&variant}, text.c_str(), userData);
    callbackOf = outer;
    if (cancel)
      cancelled = true;
  };
  options.cancelled = stopping;
  auto *r = new ResultImpl;
  std::lock_guard<std::mutex> lock(impl->mutex);
  if (impl->destroyRequested)
    return failedResult(r, "the compiler was destroyed");
  std::mutex diagMutex;
  ScopedDiagnosticHandler handler(impl->context.get(), [&](Diagnostic &diag) {
    return captureDiagnostic(diag, r, diagMutex);
  });
  std::vector<FailureOr<fly::CompileResult>> results;
  try {
    fly::SplitCompiler sweeper(*impl->context, options);
    results = sweeper.compileMany(jobs);
  } catch (const std::exception &e) {
    appendLine(r->diagnostics, std::string("error: ") + e.what());
    return failedResult(r, "error: sweep failed");
  }
  bool anyCompiled = false;
  for (auto [k, result] : llvm::enumerate(results)) {
    if (failed(result)) {
      appendLine(r->diagnostics,
                 "error: kernel " + names[k] +
                     (stopping() ? " was not compiled: the sweep "
                                   "was cancelled"
                                 : " failed as a whole"));
      continue;
    }
    anyCompiled = true;
    for (const std::string &w : result->warnings)
      appendLine(r->diagnostics, "warning: " + names[k] + ": " + w);
    if (k == 0)
      r->header = fly::getSweepHeader("fly-capi", jobs[k], *result);
    for (auto [i, variant] : llvm::enumerate(result->variants)) {
      bool fromCache =
          i < result->variantFromCache.size() && result->variantFromCache[i];
      r->variantJSON.push_back(variantText(variant, fromCache, &names[k], k));
      r->kernelOf.push_back(k);
      // A result may outlive the compiler and its context.
      fly::keepBinaryIR(variant);
      r->variants.push_back(std::move(variant));
    }
  }
  if (!anyCompiled)
    return failedResult(r, "error: no kernel compiled");
  // A callback on this thread may have failed a call of its own.
  lastError.clear();
  return wrap(r);
}

FlyResult flyCompilerSweep(FlyCompiler compiler, const FlySweepKernel *kernels,
                           size_t numKernels, const char *pipeline,
                           const char *hintSetsJSON, const char *chip,
                           const char *optionsJSON, FlyVariantCallback callback,
                           void *userData) {
  lastError.clear();
  CompilerImpl *impl = unwrap(compiler);
  // The result owns its variants: it outlives the compiler.
  CompilerCall call(impl);
  return sweepOn(impl, kernels, numKernels, pipeline, hintSetsJSON, chip,
                 optionsJSON, callback, userData);
}

const char *flyResultGetDiagnostics(FlyResult result) {
  ResultImpl *r = unwrap(result);
  return r ? r->diagnostics.c_str() : "";
}

bool flyResultPrefixFromCache(FlyResult result) {
  ResultImpl *r = unwrap(result);
  return r && r->prefixFromCache;
}

size_t flyResultGetNumVariants(FlyResult result) {
  ResultImpl *r = unwrap(result);
  return r ? r->variants.size() : 0;
}

const char *flyResultGetVariantJSON(FlyResult result, size_t i) {
  ResultImpl *r = unwrap(result);
  if (!r || i >= r->variantJSON.size())
    return nullptr;
  return r->variantJSON[i].c_str();
}

bool flyResultVariantSucceeded(FlyResult result, size_t i) {
  ResultImpl *r = unwrap(result);
  return r && i < r->variants.size() && r->variants[i].succeeded();
}

size_t flyResultGetNumObjects(FlyResult result, size_t variant) {
  ResultImpl *r = unwrap(result);
  if (!r || variant >= r->variants.size())
    return 0;
  return r->variants[variant].objects.size();
}

static const fly::VariantObject *getObject(FlyResult result, size_t variant,
                                           size_t object) {
  ResultImpl *r = unwrap(result);
  if (!r || variant >= r->variants.size() ||
      object >= r->variants[variant].objects.size())
    return nullptr;
  return &r->variants[variant].objects[object];
}

const void *flyResultGetObject(FlyResult result, size_t variant, size_t object,
                               size_t *size) {
  const fly::VariantObject *o = getObject(result, variant, object);
  if (size)
    *size = o ? o->bytes.size() : 0;
  return o ? o->bytes.data() : nullptr;
}

const char *flyResultGetObjectModule(FlyResult result, size_t variant,
                                     size_t object) {
  const fly::VariantObject *o = getObject(result, variant, object);
  return o ? o->gpuModule.c_str() : nullptr;
}

void flyResultDestroy(FlyResult result) { delete unwrap(result); }

bool flyResultWrite(FlyResult result, const char *outDir) {
  lastError.clear();
  ResultImpl *r = unwrap(result);
  if (!r) {
    lastError = "cannot write a null result (the compile failed)";
    return false;
  }
  if (!outDir || !*outDir) {
    lastError = "no output directory";
    return false;
  }
  // One out-dir is one kernel's: the variant ids of two kernels collide.
  if (llvm::any_of(r->kernelOf, [](size_t k) { return k != 0; })) {
    lastError = "a sweep result of several kernels has no single out-dir";
    return false;
  }
  if (llvm::Error err =
          fly::writeSweepOutputs(outDir, r->variants, r->header)) {
    lastError = llvm::toString(std::move(err));
    return false;
  }
  return true;
}

/// The directory this library was loaded from: the anchor of the toolkit
/// lookup, as fly-tune's own directory is for fly-tune.
static std::string getLibraryDir() {
  return llvm::sys::path::parent_path(
             fly::getCodeFilePath(
                 reinterpret_cast<const void *>(&flyGetPresetPipeline)))
      .str();
}

bool flyGetPresetPipeline(const char *target, const char *toolkit,
                          FlyStringCallback callback, void *userData) {
  lastError.clear();
  if (!callback) {
    lastError = "no callback for the pipeline";
    return false;
  }
  llvm::Expected<fly::TargetSpec> spec =
      fly::parseTargetSpec(target ? target : "");
  if (!spec) {
    lastError = llvm::toString(spec.takeError());
    return false;
  }
  std::string dir = toolkit && *toolkit
                        ? std::string(toolkit)
                        : fly::findToolkit(spec->family, getLibraryDir());
  if (dir.empty()) {
    lastError = "no toolkit found for " + spec->family +
                ": pass one (a folder with amdgcn/bitcode, the ROCm device "
                "libraries, or the CUDA toolkit: else CUDA_HOME, CUDA_PATH "
                "or ptxas on PATH)";
    return false;
  }
  std::string pipeline = fly::getPresetPipeline(*spec, dir);
  callback(pipeline.c_str(), pipeline.size(), userData);
  // The callback may have failed a call of its own: this one succeeded.
  lastError.clear();
  return true;
}

} // extern "C"
