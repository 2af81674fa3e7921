/*===- fly-c/FlySnapshot.h - C API of fly-snapshot ----------------*- C -*-===*\
|*                                                                            *|
|* A C interface to fly::SplitCompiler in the style of the MLIR C API, for    *|
|* DSL front ends written in other languages (Python through ctypes, Rust,    *|
|* Julia...). One compiler owns one MLIRContext; a compile turns one module,  *|
|* one full pipeline and N hint sets into N variants, each with its objects   *|
|* and a JSON description.                                                    *|
|*                                                                            *|
|* Conventions (every function follows them):                                 *|
|*                                                                            *|
|* Errors. A call that can fail says so by its return value alone: false, or  *|
|* a null handle (flyCompilerIsNull, flyResultIsNull). The reason is then     *|
|* flyGetLastError() on the same thread, which each such call sets (or        *|
|* clears). Nothing aborts or throws, and the library prints nothing (with    *|
|* the in-process executors, "isolated" and "batch", an LLVM backend may      *|
|* still write to stderr, as for a fatal error). Accessors (flyResultGet*,    *|
|* flyVariantGet*) do not fail: an index out of range or a null handle gives  *|
|* NULL, 0 or false (flyResultGetDiagnostics: ""). What a compile produced is *|
|* data, not an error of the call: a variant that failed says so in its JSON  *|
|* ("status", "error") and flyResultVariantSucceeded; the warnings of a       *|
|* compile, and in a sweep the diagnostics of a kernel that failed as a       *|
|* whole, are flyResultGetDiagnostics.                                        *|
|*                                                                            *|
|* Strings. Arguments are read during the call only. Every string the API     *|
|* hands out is NUL-terminated, owned by the library and valid until its      *|
|* owner, named with each function, ends:                                     *|
|*   - a FlyResult: until flyResultDestroy;                                   *|
|*   - a callback's arguments (FlyVariantCallback, FlyStringCallback): until  *|
|*     the callback returns (copy what is kept);                              *|
|*   - the last error: until the next fallible call on the same thread;       *|
|*   - the library: for as long as it is loaded (flyGetVersion,               *|
|*     flyGetHintSpecsJSON).                                                  *|
|* A string the library computes on request (flyGetPresetPipeline,            *|
|* flyCheckBinaryPass) goes to a FlyStringCallback, as mlir-c's               *|
|* MlirStringCallback.                                                        *|
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

/** The variants of a compile (or sweep) that did not fail as a whole: one
 *  per hint set (of each kernel), each ok or failed. */
typedef struct FlyResult {
  void *ptr;
} FlyResult;

/** Receives a string the library hands out: `length` bytes at `data`,
 *  NUL-terminated, valid until the callback returns. */
typedef void (*FlyStringCallback)(const char *data, size_t length,
                                  void *userData);

/** The version of the library, e.g. "0.1.0"; owned by the library. */
FLY_CAPI_EXPORTED const char *flyGetVersion(void);

/** Creates a compiler. `optionsJSON` is NULL (defaults, read from the
 *  environment: FLY_ENABLE_CACHE, FLY_CACHE_DIR, ...) or a JSON object with
 *  any of
 *    "jobs":      variants compiled at once (0 = hardware threads; at
 *                 most 65536),
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
 *  Seconds are at most 1e9.
 *  Returns a null compiler on bad options; flyGetLastError() says why. */
FLY_CAPI_EXPORTED FlyCompiler flyCompilerCreate(const char *optionsJSON);

/** Whether `compiler` is null (creation failed). */
static inline bool flyCompilerIsNull(FlyCompiler compiler) {
  return compiler.ptr == NULL;
}

/** Destroys a compiler; null compilers are ignored. Called while a compile
 *  or sweep of it runs (from a sweep's callback, or another thread), it
 *  cancels the sweep as a callback returning true does, a call still waiting
 *  for the compiler fails, and the compiler goes when the last call returns
 *  (results stay valid). The handle must not be used after this call. */
FLY_CAPI_EXPORTED void flyCompilerDestroy(FlyCompiler compiler);

/** Why the last fallible call on this thread failed ("" after one that
 *  succeeded); valid until the next fallible call on this thread. */
FLY_CAPI_EXPORTED const char *flyGetLastError(void);

/** Compiles `source` (MLIR text or bytecode, `sourceSize` bytes) with
 *  `pipeline` (the full pass pipeline, gpu-module-to-binary included) once
 *  per hint set in `hintSetsJSON` (a JSON list of objects such as
 *  `[{}, {"waves_per_eu": 8}]`; NULL or "" = one empty set). `chip` is part of
 *  the cache key: "rocdl:<gfx chip>" or "nvvm:sm_<NN>" (e.g. "rocdl:gfx942");
 *  anything else is an error. Calls on one compiler are serialised. Returns
 *  a result, to be destroyed with flyResultDestroy, or a null result when
 *  the compile as a whole failed (bad arguments, source, or pipeline
 *  prefix): flyGetLastError() then holds every diagnostic, one per line.
 *  Variants that failed are part of a result. */
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
 *  receives their count; NULL and 0 if out of range), owned by the variant:
 *  valid until the callback returns. */
FLY_CAPI_EXPORTED size_t flyVariantGetNumObjects(FlyVariant variant);
FLY_CAPI_EXPORTED const void *flyVariantGetObject(FlyVariant variant,
                                                  size_t object, size_t *size);

/** Called once per variant the moment it is final (compiled and stored in
 *  the cache, from the cache, or copied from an identical one), one call at
 *  a time, from a library thread. `variantJSON` is what
 *  flyResultGetVariantJSON returns for it, plus "kernel" (its kernel's name)
 *  and "kernel_index"; it lives until the callback returns. Returning true
 *  cancels the sweep: no further variant or kernel starts (those running
 *  finish and are still reported). The callback may call the API, but not
 *  flyCompilerCompile or flyCompilerSweep on the sweep's own compiler (they
 *  fail: it is busy with this sweep). */
typedef bool (*FlyVariantCallback)(FlyVariant variant, const char *variantJSON,
                                   void *userData);

/** Several kernels as one sweep (fly::SplitCompiler::compileMany): each
 *  kernel's phase 1 side by side, every replay of every kernel on the
 *  compiler's one executor, `pipeline`, `hintSetsJSON` and `chip` as in
 *  flyCompilerCompile, for every kernel. `optionsJSON` is NULL or an object
 *  with "variant_timeout" and "time_budget" (seconds, as in
 *  flyCompilerCreate) for this sweep. `callback` (may be NULL) sees each
 *  variant as it finishes. Returns a result with every variant, kernel by
 *  kernel in `kernels` order, when at least one kernel compiled (the
 *  diagnostics of a kernel that failed as a whole, or was cancelled before
 *  it began, are in flyResultGetDiagnostics); else a null result, the
 *  reason in flyGetLastError(). Calls on one compiler are serialised. */
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

/** Checks `pass` as the library reads a binary pass: exactly one
 *  gpu-module-to-binary with its options, optionally inside
 *  `builtin.module(...)` (the C++ fly::parseBinaryPass). Returns false for
 *  anything else (another pass, several passes, an unknown option or
 *  format, ""), flyGetLastError() holding the parser's diagnostic. On
 *  success hands `callback` (may be NULL) the pass as the library prints it,
 *  every option spelled out, bare (no `builtin.module`): the spelling that
 *  manifests record. */
FLY_CAPI_EXPORTED bool flyCheckBinaryPass(const char *pass,
                                          FlyStringCallback callback,
                                          void *userData);

/** Whether `result` is null (the compile as a whole failed). */
static inline bool flyResultIsNull(FlyResult result) {
  return result.ptr == NULL;
}

/** The diagnostics of a compile that produced variants, one per line ("" if
 *  none): warnings, and the kernels of a sweep that failed as a whole.
 *  Owned by the result. */
FLY_CAPI_EXPORTED const char *flyResultGetDiagnostics(FlyResult result);

/** Whether phase 1 (the pipeline prefix) came from the compile cache. */
FLY_CAPI_EXPORTED bool flyResultPrefixFromCache(FlyResult result);

/** The number of variants: one per hint set (of each kernel, for a
 *  sweep). */
FLY_CAPI_EXPORTED size_t flyResultGetNumVariants(FlyResult result);

/** Variant `i` as JSON (the manifest entry: id, hints, binary pass, objects
 *  with kernel metadata, error...), owned by the result; NULL if `i` is out
 *  of range. */
FLY_CAPI_EXPORTED const char *flyResultGetVariantJSON(FlyResult result,
                                                      size_t i);

/** Whether variant `i` succeeded. */
FLY_CAPI_EXPORTED bool flyResultVariantSucceeded(FlyResult result, size_t i);

/** The number of objects (#gpu.object) variant `variant` produced. */
FLY_CAPI_EXPORTED size_t flyResultGetNumObjects(FlyResult result,
                                                size_t variant);

/** The bytes of one object, owned by the result; `*size` receives their
 *  count. NULL (and size 0) if an index is out of range. */
FLY_CAPI_EXPORTED const void *flyResultGetObject(FlyResult result,
                                                 size_t variant, size_t object,
                                                 size_t *size);

/** The gpu.module an object was compiled from, owned by the result; NULL
 *  if an index is out of range. */
FLY_CAPI_EXPORTED const char *
flyResultGetObjectModule(FlyResult result, size_t variant, size_t object);

/** Destroys a result; null results are ignored. */
FLY_CAPI_EXPORTED void flyResultDestroy(FlyResult result);

/** Writes a result the way fly-tune writes its --out-dir: per successful
 *  variant `<id>.mlir` and one raw object per gpu.module, then
 *  `manifest.json` (every variant, failed ones included). Returns false on
 *  a null result, a sweep result of several kernels, or an I/O error;
 *  flyGetLastError() says why. */
FLY_CAPI_EXPORTED bool flyResultWrite(FlyResult result, const char *outDir);

/** fly-tune's lowering preset for plain gpu-dialect input on `target`
 *  ("rocdl:gfx942", "nvvm:sm_90"), ending in gpu-module-to-binary with
 *  `toolkit` (NULL or "": the toolkit found beside this library, in its
 *  install prefix or build tree, $FLY_ROCM_TOOLKIT, /opt/rocm; on NVVM the
 *  CUDA toolkit found at configure time), handed to `callback` in one
 *  piece. Returns false on a bad target or when no toolkit is found
 *  (flyGetLastError() says why; `callback` is not called). */
FLY_CAPI_EXPORTED bool flyGetPresetPipeline(const char *target,
                                            const char *toolkit,
                                            FlyStringCallback callback,
                                            void *userData);

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
 *  Owned by the library. */
FLY_CAPI_EXPORTED const char *flyGetHintSpecsJSON(void);

#ifdef __cplusplus
}
#endif

#endif /* FLY_C_FLYSNAPSHOT_H */
