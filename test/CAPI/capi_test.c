/* fly-capi-test: compiles a kernel through the C API.
 *
 *   fly-capi-test <kernel.mlir> <rocm-toolkit>
 *
 * Plain C99: checks that the header is C, that two hint sets give two
 * variants with objects, and that a bad pipeline and bad hint JSON come back
 * as null results with the reason in flyGetLastError() rather than aborts. */

#include "fly-c/FlySnapshot.h"
#include "read_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A FlyStringCallback that keeps the string. */
struct Collected {
  char text[8192];
  int calls;
};

static void collect(const char *data, size_t length, void *userData) {
  struct Collected *c = (struct Collected *)userData;
  ++c->calls;
  snprintf(c->text, sizeof(c->text), "%.*s", (int)length, data);
}

/* A failed compile: a null result, why in the last error. */
static int reportNull(const char *what, FlyResult result) {
  printf("%s: null=%d error=%s\n", what, flyResultIsNull(result),
         flyGetLastError());
  int bad = !flyResultIsNull(result) || !*flyGetLastError();
  flyResultDestroy(result);
  return bad;
}

/* What the sweep's callback saw: variants, per kernel, with objects. */
struct SweepSeen {
  int calls, perKernel[2], withObjects;
};

static bool onVariant(FlyVariant variant, const char *json, void *userData) {
  struct SweepSeen *seen = (struct SweepSeen *)userData;
  ++seen->calls;
  if (strstr(json, "\"kernel\":\"first\""))
    ++seen->perKernel[0];
  if (strstr(json, "\"kernel\":\"second\""))
    ++seen->perKernel[1];
  size_t bytes = 0;
  if (flyVariantGetNumObjects(variant) == 1 &&
      flyVariantGetObject(variant, 0, &bytes) && bytes > 0)
    ++seen->withObjects;
  return false;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <kernel.mlir> <rocm-toolkit>\n", argv[0]);
    return 2;
  }
  size_t size = 0;
  char *source = readFile(argv[1], &size);
  if (!source) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  int failures = 0;

  printf("version: %s\n", flyGetVersion());

  /* The hint registry as JSON: an array with an object per hint. */
  const char *specs = flyGetHintSpecsJSON();
  printf("hint specs: array=%d waves_per_eu=%d\n", specs[0] == '[',
         strstr(specs, "\"name\": \"waves_per_eu\"") != NULL);

  /* Bad options: a null compiler and a message. */
  FlyCompiler bad = flyCompilerCreate("{\"jobs\": \"many\"}");
  printf("bad options: null=%d error=%s\n", flyCompilerIsNull(bad),
         flyGetLastError());

  FlyCompiler compiler =
      flyCompilerCreate("{\"jobs\": 2, \"cache\": false, \"reuse_isa\": true}");
  if (flyCompilerIsNull(compiler)) {
    fprintf(stderr, "cannot create compiler: %s\n", flyGetLastError());
    return 1;
  }

  char pipeline[4096];
  snprintf(pipeline, sizeof(pipeline),
           "builtin.module(rocdl-attach-target{chip=gfx942 O=3},"
           "gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx942}),"
           "reconcile-unrealized-casts,"
           "gpu-module-to-binary{format=fatbin toolkit=%s})",
           argv[2]);

  /* The preset pipeline through a string callback; a bad target is false
   * and the callback is not called. */
  struct Collected preset = {{0}, 0};
  bool presetOk =
      flyGetPresetPipeline("rocdl:gfx942", argv[2], collect, &preset);
  printf("preset: ok=%d calls=%d binary=%d\n", presetOk, preset.calls,
         strstr(preset.text, "gpu-module-to-binary") != NULL);
  struct Collected badPreset = {{0}, 0};
  bool badPresetOk =
      flyGetPresetPipeline("banana", argv[2], collect, &badPreset);
  printf("bad preset: ok=%d calls=%d error=%s\n", badPresetOk, badPreset.calls,
         flyGetLastError());
  if (!presetOk || badPresetOk || badPreset.calls)
    ++failures;

  /* The binary pass as the library reads it: accepted spellings are handed
   * back as printed; anything else is false with the parser's diagnostic
   * and no callback. */
  const char *passes[] = {"gpu-module-to-binary{format=isa opts=\"-v -w\"}",
                          "builtin.module(gpu-module-to-binary)",
                          "canonicalize,gpu-module-to-binary",
                          "gpu-module-to-binary{bogus=1}", ""};
  for (size_t i = 0; i < sizeof(passes) / sizeof(passes[0]); ++i) {
    struct Collected checked = {{0}, 0};
    bool passOk = flyCheckBinaryPass(passes[i], collect, &checked);
    printf("binary pass '%s': ok=%d calls=%d %s\n", passes[i], passOk,
           checked.calls, passOk ? checked.text : flyGetLastError());
    if (passOk != (i < 2) || checked.calls != passOk)
      ++failures;
  }
  bool nullPassOk = flyCheckBinaryPass(NULL, NULL, NULL);
  printf("null binary pass: ok=%d error=%s\n", nullPassOk, flyGetLastError());
  if (nullPassOk || !flyCheckBinaryPass("gpu-module-to-binary", NULL, NULL))
    ++failures;

  FlyResult result =
      flyCompilerCompile(compiler, source, size, pipeline,
                         "[{}, {\"waves_per_eu\": 8}]", "rocdl:gfx942");
  printf("compile: null=%d from_cache=%d last error=\"%s\"\n",
         flyResultIsNull(result), flyResultPrefixFromCache(result),
         flyGetLastError());
  if (flyResultIsNull(result)) {
    printf("error: %s\n", flyGetLastError());
    ++failures;
  }
  size_t numVariants = flyResultGetNumVariants(result);
  printf("variants: %zu\n", numVariants);
  for (size_t v = 0; v < numVariants; ++v) {
    printf("variant %zu: ok=%d json=%s\n", v,
           flyResultVariantSucceeded(result, v),
           flyResultGetVariantJSON(result, v));
    size_t numObjects = flyResultGetNumObjects(result, v);
    for (size_t o = 0; o < numObjects; ++o) {
      size_t bytes = 0;
      const void *data = flyResultGetObject(result, v, o, &bytes);
      printf("variant %zu object %zu: module=%s nonempty=%d\n", v, o,
             flyResultGetObjectModule(result, v, o), data && bytes > 0);
      fprintf(stderr, "variant %zu object %zu: %zu bytes\n", v, o, bytes);
      if (!data || !bytes)
        ++failures;
    }
    if (!numObjects)
      ++failures;
  }
  if (numVariants != 2)
    ++failures;
  /* Out of range is NULL, not a crash. */
  printf("out of range: %s\n",
         flyResultGetVariantJSON(result, 99) ? "non-null" : "null");
  flyResultDestroy(result);

  /* A bad pipeline: a null result, the diagnostic as the last error. */
  failures += reportNull("bad pipeline",
                         flyCompilerCompile(compiler, source, size,
                                            "builtin.module(no-such-pass)",
                                            "[{}]", "rocdl:gfx942"));
  /* Bad hint JSON. */
  failures += reportNull(
      "bad hints", flyCompilerCompile(compiler, source, size, pipeline,
                                      "[{\"waves_per_eu\": ", "rocdl:gfx942"));
  /* Bad source. */
  const char *garbage = "this is not MLIR";
  failures += reportNull("bad source",
                         flyCompilerCompile(compiler, garbage, strlen(garbage),
                                            pipeline, NULL, "rocdl:gfx942"));
  /* sourceSize 0 (a caller that forgot the length) is named as such. */
  failures += reportNull(
      "empty source",
      flyCompilerCompile(compiler, source, 0, pipeline, NULL, "rocdl:gfx942"));
  /* A chip that is no chip: part of the cache key, so an error. */
  failures +=
      reportNull("bad chip", flyCompilerCompile(compiler, source, size,
                                                pipeline, NULL, "banana"));
  /* A null result is no output: writing one fails, why in the last error. */
  printf("write null: ok=%d error=%s\n",
         flyResultWrite((FlyResult){NULL}, "/nonexistent"), flyGetLastError());

  /* Two kernels x a product of two hint sets: one sweep, each variant
   * handed to the callback as it finishes, then all in the result. */
  FlySweepKernel kernels[2] = {{"first", source, size},
                               {"second", source, size}};
  struct SweepSeen seen = {0, {0, 0}, 0};
  FlyResult swept = flyCompilerSweep(
      compiler, kernels, 2, pipeline, "{\"waves_per_eu\": [1, 2]}",
      "rocdl:gfx942", "{\"time_budget\": 0}", onVariant, &seen);
  printf("sweep: null=%d variants=%zu calls=%d first=%d second=%d "
         "objects=%d\n",
         flyResultIsNull(swept), flyResultGetNumVariants(swept), seen.calls,
         seen.perKernel[0], seen.perKernel[1], seen.withObjects);
  printf("sweep variant 3: %s\n", flyResultGetVariantJSON(swept, 3));
  if (flyResultIsNull(swept) || seen.calls != 4 || seen.withObjects != 4)
    ++failures;
  flyResultDestroy(swept);
  failures += reportNull("no kernels",
                         flyCompilerSweep(compiler, kernels, 0, pipeline, NULL,
                                          "rocdl:gfx942", NULL, NULL, NULL));
  /* One kernel that compiles, one that does not: a result (the kernel's
   * failure is data of it), the failed kernel in its diagnostics. */
  FlySweepKernel mixed[2] = {{"good", source, size},
                             {"broken", garbage, strlen(garbage)}};
  FlyResult partial = flyCompilerSweep(compiler, mixed, 2, pipeline, NULL,
                                       "rocdl:gfx942", NULL, NULL, NULL);
  printf("partial sweep: null=%d variants=%zu diagnostics=%s\n",
         flyResultIsNull(partial), flyResultGetNumVariants(partial),
         flyResultGetDiagnostics(partial));
  if (flyResultIsNull(partial) || flyResultGetNumVariants(partial) != 1)
    ++failures;
  flyResultDestroy(partial);

  flyCompilerDestroy(compiler);
  free(source);
  printf("failures: %d\n", failures);
  return failures ? 1 : 0;
}
