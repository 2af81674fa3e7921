/* fly-capi-test: compiles a kernel through the C API.
 *
 *   fly-capi-test <kernel.mlir> <rocm-toolkit>
 *
 * Plain C99: checks that the header is C, that two hint sets give two
 * variants with objects, and that a bad pipeline and bad hint JSON come back
 * as error results rather than aborts. */

#include "fly-c/FlySnapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc((size_t)n + 1);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(data);
    return NULL;
  }
  data[n] = 0;
  fclose(f);
  *size = (size_t)n;
  return data;
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

  FlyResult result =
      flyCompilerCompile(compiler, source, size, pipeline,
                         "[{}, {\"waves_per_eu\": 8}]", "rocdl:gfx942");
  printf("compile: succeeded=%d from_cache=%d\n", flyResultSucceeded(result),
         flyResultPrefixFromCache(result));
  if (!flyResultSucceeded(result)) {
    printf("error: %s\n", flyResultGetError(result));
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

  /* A bad pipeline: an error result with the diagnostic as text. */
  FlyResult badPipeline =
      flyCompilerCompile(compiler, source, size, "builtin.module(no-such-pass)",
                         "[{}]", "rocdl:gfx942");
  printf("bad pipeline: succeeded=%d variants=%zu\n",
         flyResultSucceeded(badPipeline), flyResultGetNumVariants(badPipeline));
  printf("bad pipeline error: %s\n", flyResultGetError(badPipeline));
  if (flyResultSucceeded(badPipeline) || !*flyResultGetError(badPipeline))
    ++failures;
  flyResultDestroy(badPipeline);

  /* Bad hint JSON. */
  FlyResult badHints = flyCompilerCompile(
      compiler, source, size, pipeline, "[{\"waves_per_eu\": ", "rocdl:gfx942");
  printf("bad hints: succeeded=%d error=%s\n", flyResultSucceeded(badHints),
         flyResultGetError(badHints));
  if (flyResultSucceeded(badHints))
    ++failures;
  flyResultDestroy(badHints);

  /* Bad source. */
  const char *garbage = "this is not MLIR";
  FlyResult badSource = flyCompilerCompile(compiler, garbage, strlen(garbage),
                                           pipeline, NULL, "rocdl:gfx942");
  printf("bad source: succeeded=%d\n", flyResultSucceeded(badSource));
  printf("bad source error: %s\n", flyResultGetError(badSource));
  if (flyResultSucceeded(badSource))
    ++failures;
  flyResultDestroy(badSource);

  /* sourceSize 0 (a caller that forgot the length) is named as such. */
  FlyResult emptySource =
      flyCompilerCompile(compiler, source, 0, pipeline, NULL, "rocdl:gfx942");
  printf("empty source: succeeded=%d error=%s\n",
         flyResultSucceeded(emptySource), flyResultGetError(emptySource));
  if (flyResultSucceeded(emptySource))
    ++failures;
  flyResultDestroy(emptySource);
  /* A chip that is no chip: part of the cache key, so an error result. */
  FlyResult badChip =
      flyCompilerCompile(compiler, source, size, pipeline, NULL, "banana");
  printf("bad chip: succeeded=%d error=%s\n", flyResultSucceeded(badChip),
         flyResultGetError(badChip));
  if (flyResultSucceeded(badChip))
    ++failures;
  flyResultDestroy(badChip);

  /* Two kernels x a product of two hint sets: one sweep, each variant
   * handed to the callback as it finishes, then all in the result. */
  FlySweepKernel kernels[2] = {{"first", source, size},
                               {"second", source, size}};
  struct SweepSeen seen = {0, {0, 0}, 0};
  FlyResult swept = flyCompilerSweep(
      compiler, kernels, 2, pipeline, "{\"waves_per_eu\": [1, 2]}",
      "rocdl:gfx942", "{\"time_budget\": 0}", onVariant, &seen);
  printf("sweep: succeeded=%d variants=%zu calls=%d first=%d second=%d "
         "objects=%d\n",
         flyResultSucceeded(swept), flyResultGetNumVariants(swept), seen.calls,
         seen.perKernel[0], seen.perKernel[1], seen.withObjects);
  printf("sweep variant 3: %s\n", flyResultGetVariantJSON(swept, 3));
  if (!flyResultSucceeded(swept) || seen.calls != 4 || seen.withObjects != 4)
    ++failures;
  flyResultDestroy(swept);
  FlyResult noKernels = flyCompilerSweep(compiler, kernels, 0, pipeline, NULL,
                                         "rocdl:gfx942", NULL, NULL, NULL);
  printf("no kernels: succeeded=%d error=%s\n", flyResultSucceeded(noKernels),
         flyResultGetError(noKernels));
  flyResultDestroy(noKernels);

  flyCompilerDestroy(compiler);
  free(source);
  printf("failures: %d\n", failures);
  return failures ? 1 : 0;
}
