/*===- fly-c/FlySnapshot.h - C API of fly-snapshot ----------------*- C -*-===*\
|*                                                                            *|
|* A C interface to fly::SplitCompiler in the style of the MLIR C API, for    *|
|* DSL front ends written in other languages (Python through ctypes, Rust,   *|
|* Julia...). One compiler owns one MLIRContext; a compile turns one module, *|
|* one full pipeline and N hint sets into N variants, each with its objects  *|
|* and a JSON description. Errors never abort: they come back as text.       *|
|*                                                                            *|
|* Strings returned by the API belong to the object they came from and live  *|
|* until it is destroyed.                                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FLY_C_FLYSNAPSHOT_H
#define FLY_C_FLYSNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#if defined(_WIN32)
#define FLY_CAPI_EXPORTED __declspec(dllexport)
#else
#define FLY_CAPI_EXPORTED __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** A compiler: an MLIRContext with every upstream dialect, pass and LLVM IR
 *  translation registered, plus a compile cache. */
typedef struct FlyCompiler {
  void *ptr;
} FlyCompiler;

/** The outcome of one compile: an error, or one variant per hint set. */
typedef struct FlyResult {
  void *ptr;
} FlyResult;

/** The version of the library, e.g. "0.1.0". */
FLY_CAPI_EXPORTED const char *flyGetVersion(void);

/** Creates a compiler. `optionsJSON` is NULL (defaults, read from the
 *  environment: FLY_ENABLE_CACHE, FLY_CACHE_DIR, ...) or a JSON object with
 *  any of
 *    "jobs":      variants compiled at once (0 = hardware threads),
 *    "cache":     true / false,
 *    "cache_dir": the cache directory,
 *    "dump_dir":  numbered per-stage IR dumps ("" = off),
 *    "reuse_isa": true (default) / false: one ISA compile for variants
 *                 that share it (SplitCompilerOptions::reuseIsa),
 *    "executor":  "process" (default): variants compile in child fly-tune
 *                 processes (installed beside this library), so a backend
 *                 crash, LLVM fatal error or heap corruption fails only its
 *                 variants and never the calling process; "isolated": in
 *                 this process under crash recovery; "batch": in this
 *                 process, fastest,
 *    "variant_timeout": seconds one variant may compile before it fails
 *                 naming the limit (0 = none; default FLY_VARIANT_TIMEOUT,
 *                 else 600; enforced on every variant by the process
 *                 executor, on ptxas by the in-process ones),
 *    "time_budget": seconds after which no new variant starts; the rest
 *                 fail as skipped (0 = none, the default).
 *  Returns a null compiler on bad options; flyGetLastError() says why. */
FLY_CAPI_EXPORTED FlyCompiler flyCompilerCreate(const char *optionsJSON);

/** Whether `compiler` is null (creation failed). */
static inline bool flyCompilerIsNull(FlyCompiler compiler) {
  return compiler.ptr == NULL;
}

/** Destroys a compiler; null compilers are ignored. */
FLY_CAPI_EXPORTED void flyCompilerDestroy(FlyCompiler compiler);

/** The message of the last flyCompilerCreate failure on this thread, or "". */
FLY_CAPI_EXPORTED const char *flyGetLastError(void);

/** Compiles `source` (MLIR text or bytecode, `sourceSize` bytes) with
 *  `pipeline` (the full pass pipeline, gpu-module-to-binary included) once
 *  per hint set in `hintSetsJSON` (a JSON list of objects such as
 *  `[{}, {"waves_per_eu": 8}]`; NULL or "" = one empty set). `chip` is part of
 *  the cache key: "rocdl:<gfx chip>" or "nvvm:sm_<NN>" (e.g. "rocdl:gfx942");
 *  anything else is an error result. Calls on one compiler are
 *  serialised. Always returns a result, to be destroyed with
 *  flyResultDestroy. */
FLY_CAPI_EXPORTED FlyResult flyCompilerCompile(
    FlyCompiler compiler, const char *source, size_t sourceSize,
    const char *pipeline, const char *hintSetsJSON, const char *chip);

/** One kernel of a sweep: `name` (NUL-terminated; it names the kernel in
 *  diagnostics and in each of its variants' JSON, "kernel") and its source
 *  (MLIR text or bytecode, `sourceSize` bytes). The strings are read during
 *  the call only. */
typedef struct FlySweepKernel {
  const char *name;
  const char *source;
  size_t sourceSize;
} FlySweepKernel;

/** A finished variant, as a sweep hands it to its callback: valid only
 *  during that call (copy what is kept). */
typedef struct FlyVariant {
  const void *ptr;
} FlyVariant;

/** The number of objects of `variant`, and the bytes of one (`*size`
 *  receives their count; NULL and 0 if out of range). Valid only during the
 *  callback. */
FLY_CAPI_EXPORTED size_t flyVariantGetNumObjects(FlyVariant variant);
FLY_CAPI_EXPORTED const void *flyVariantGetObject(FlyVariant variant,
                                                  size_t object, size_t *size);

/** Called once per variant the moment it is final (compiled and stored in
 *  the cache, from the cache, or copied from an identical one), one call at
 *  a time, from a library thread. `variantJSON` is what
 *  flyResultGetVariantJSON returns for it, plus "kernel" (its kernel's name)
 *  and "kernel_index"; it lives until the callback returns. Returning true
 *  cancels the sweep: no further variant or kernel starts (those running
 *  finish and are still reported). */
typedef bool (*FlyVariantCallback)(FlyVariant variant, const char *variantJSON,
                                   void *userData);

/** Several kernels as one sweep (fly::SplitCompiler::compileMany): each
 *  kernel's phase 1 side by side, every replay of every kernel on the
 *  compiler's one executor, `pipeline`, `hintSetsJSON` and `chip` as in
 *  flyCompilerCompile, for every kernel. `optionsJSON` is NULL or an object
 *  with "variant_timeout" and "time_budget" (seconds, as in
 *  flyCompilerCreate) for this sweep. `callback` (may be NULL) sees each
 *  variant as it finishes. Returns a result with every variant, kernel by
 *  kernel in `kernels` order; it succeeded when at least one kernel
 *  compiled (the diagnostics of a kernel that failed as a whole, or was
 *  cancelled before it began, are in flyResultGetError). Errors never
 *  abort; calls on one compiler are serialised. */
FLY_CAPI_EXPORTED FlyResult flyCompilerSweep(
    FlyCompiler compiler, const FlySweepKernel *kernels, size_t numKernels,
    const char *pipeline, const char *hintSetsJSON, const char *chip,
    const char *optionsJSON, FlyVariantCallback callback, void *userData);

/** Checks the arguments flyCompilerCompile checks before it compiles:
 *  `hintSetsJSON` (as there; NULL or "" is fine) and `chip`. Returns false
 *  on the first bad one, flyGetLastError() saying which and why ("bad hint
 *  sets: hint set #1: ...", "bad chip: ..."; hint sets numbered from 0). */
FLY_CAPI_EXPORTED bool flyCheckCompileArguments(const char *hintSetsJSON,
                                                const char *chip);

/** Whether the compile as a whole succeeded (individual variants may still
 *  have failed: see each variant's "error" in its JSON). */
FLY_CAPI_EXPORTED bool flyResultSucceeded(FlyResult result);

/** All diagnostics the compile produced, one per line ("" if none). For a
 *  failed result, the reason. */
FLY_CAPI_EXPORTED const char *flyResultGetError(FlyResult result);

/** Whether phase 1 (the pipeline prefix) came from the compile cache. */
FLY_CAPI_EXPORTED bool flyResultPrefixFromCache(FlyResult result);

/** The number of variants: one per hint set, 0 for a failed result. */
FLY_CAPI_EXPORTED size_t flyResultGetNumVariants(FlyResult result);

/** Variant `i` as JSON (the manifest entry: id, hints, binary pass, objects
 *  with kernel metadata, error...); NULL if `i` is out of range. */
FLY_CAPI_EXPORTED const char *flyResultGetVariantJSON(FlyResult result,
                                                      size_t i);

/** Whether variant `i` succeeded. */
FLY_CAPI_EXPORTED bool flyResultVariantSucceeded(FlyResult result, size_t i);

/** The number of objects (#gpu.object) variant `variant` produced. */
FLY_CAPI_EXPORTED size_t flyResultGetNumObjects(FlyResult result,
                                                size_t variant);

/** The bytes of one object; `*size` receives their count. NULL (and size 0)
 *  if an index is out of range. */
FLY_CAPI_EXPORTED const void *flyResultGetObject(FlyResult result,
                                                 size_t variant, size_t object,
                                                 size_t *size);

/** The gpu.module an object was compiled from. */
FLY_CAPI_EXPORTED const char *
flyResultGetObjectModule(FlyResult result, size_t variant, size_t object);

/** Destroys a result; null results are ignored. */
FLY_CAPI_EXPORTED void flyResultDestroy(FlyResult result);

/** Writes a successful result the way fly-tune writes its --out-dir: per
 *  successful variant `<id>.mlir` and one raw object per gpu.module, then
 *  `manifest.json` (every variant, failed ones included). Returns false on
 *  a failed result, a sweep result of several kernels, or an I/O error;
 *  flyGetLastError() says why. */
FLY_CAPI_EXPORTED bool flyResultWrite(FlyResult result, const char *outDir);

/** fly-tune's lowering preset for plain gpu-dialect input on `target`
 *  ("rocdl:gfx942", "nvvm:sm_90"), ending in gpu-module-to-binary with
 *  `toolkit` (NULL or "": the toolkit found beside this library, in its
 *  install prefix or build tree, $FLY_ROCM_TOOLKIT, /opt/rocm; on NVVM the
 *  CUDA toolkit found at configure time). NULL on a bad target or when no
 *  toolkit is found (flyGetLastError() says why). The string lives until
 *  the next call on this thread. */
FLY_CAPI_EXPORTED const char *flyGetPresetPipeline(const char *target,
                                                   const char *toolkit);

/** The hints the library understands, as a JSON array in the order help
 *  lists them, one object per hint from its registry
 *  (fly/Hints/HintRegistry.h):
 *    {"name": "maxnreg", "prefix": false, "type": "int", "min": 1,
 *     "max": 512, "selector": false,
 *     "families": {"rocdl": {}, "nvvm": {"max": 255}}}
 *  "prefix": the name is a family's prefix ("func." for func.<attr>);
 *  "type": "int", "bool", "attribute" or "string" (a manifest's hint_set
 *  writes int and bool values as JSON numbers); "min"/"max": integers only;
 *  "selector": it takes a target selector after its first word
 *  (`O[gfx942]`, `target[sm_90].chip`); "families": the target families it
 *  applies to ("other": targets of neither), with a tighter "max" there.
 *  The string lives as long as the library. */
FLY_CAPI_EXPORTED const char *flyGetHintSpecsJSON(void);

#ifdef __cplusplus
}
#endif

#endif /* FLY_C_FLYSNAPSHOT_H */
