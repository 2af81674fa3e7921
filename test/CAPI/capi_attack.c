/* fly-capi-attack: the conventions at the top of fly-c/FlySnapshot.h, from a
 * hostile caller.
 *
 *   fly-capi-attack <kernel.mlir> <rocm-toolkit>
 *
 * Every line it prints is "<what>: ..." and ends in "PASS" or "FAIL"; it
 * exits non-zero on any FAIL. A hang (a call that waits for itself) ends in
 * SIGALRM, also a failure. */

#include "fly-c/FlySnapshot.h"
#include "read_file.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

static void expect(const char *what, int ok, const char *detail) {
  printf("%s: %s %s\n", what, detail ? detail : "", ok ? "PASS" : "FAIL");
  fflush(stdout);
  if (!ok)
    ++failures;
}

/* A string callback that itself fails a call, and looks at the last error
 * on the way in. */
struct Nested {
  char seenError[256];
  int calls;
};

static void failInside(const char *data, size_t length, void *userData) {
  struct Nested *n = (struct Nested *)userData;
  (void)data;
  (void)length;
  ++n->calls;
  snprintf(n->seenError, sizeof(n->seenError), "%s", flyGetLastError());
  flyCheckCompileArguments(NULL, "banana");
}

/* Two threads, each failing its own call at once: each sees its own. */
struct ThreadCheck {
  const char *chip, *expected;
  int ok;
};

static void *failOnThread(void *arg) {
  struct ThreadCheck *t = (struct ThreadCheck *)arg;
  t->ok = 1;
  for (int i = 0; i < 2000; ++i) {
    bool passed = flyCheckCompileArguments(NULL, t->chip);
    const char *error = flyGetLastError();
    if (t->expected ? passed || !strstr(error, t->expected) : !passed || *error)
      t->ok = 0;
  }
  return NULL;
}

/* A sweep callback that calls back into the API. */
struct Reentrant {
  FlyCompiler compiler;
  const char *source, *pipeline;
  size_t size;
  int calls, nestedNull, nestedNamed, cancelAfter;
  char nestedError[512];
};

static bool reenter(FlyVariant variant, const char *json, void *userData) {
  struct Reentrant *r = (struct Reentrant *)userData;
  (void)variant;
  (void)json;
  ++r->calls;
  /* The same compiler, from its own sweep: must fail, not wait forever. */
  FlyResult nested = flyCompilerCompile(r->compiler, r->source, r->size,
                                        r->pipeline, NULL, "rocdl:gfx942");
  r->nestedNull += flyResultIsNull(nested);
  snprintf(r->nestedError, sizeof(r->nestedError), "%s", flyGetLastError());
  r->nestedNamed += strstr(flyGetLastError(), "sweep callback") != NULL;
  flyResultDestroy(nested);
  FlySweepKernel kernel = {"nested", r->source, r->size};
  FlyResult nestedSweep =
      flyCompilerSweep(r->compiler, &kernel, 1, r->pipeline, NULL,
                       "rocdl:gfx942", NULL, NULL, NULL);
  r->nestedNull += flyResultIsNull(nestedSweep);
  flyResultDestroy(nestedSweep);
  return r->cancelAfter && r->calls >= r->cancelAfter;
}

/* A sweep callback that destroys the sweep's own compiler at the first
 * variant. */
static bool destroyOwnCompiler(FlyVariant variant, const char *json,
                               void *userData) {
  struct Reentrant *r = (struct Reentrant *)userData;
  (void)variant;
  (void)json;
  if (++r->calls == 1)
    flyCompilerDestroy(r->compiler);
  return false;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <kernel.mlir> <rocm-toolkit>\n", argv[0]);
    return 2;
  }
  alarm(600);
  size_t size = 0;
  char *source = readFile(argv[1], &size);
  if (!source)
    return 2;
  const char *toolkit = argv[2];

  /* A callback that fails a call of its own: the outer call succeeded, so
   * the last error is "" afterwards; on the way in it was "". */
  flyCheckCompileArguments(NULL, "banana");
  struct Nested nested = {{0}, 0};
  bool presetOk =
      flyGetPresetPipeline("rocdl:gfx942", toolkit, failInside, &nested);
  char detail[1024];
  snprintf(detail, sizeof detail, "ok=%d calls=%d inside=\"%s\" after=\"%s\"",
           presetOk, nested.calls, nested.seenError, flyGetLastError());
  expect("preset, failing callback",
         presetOk && nested.calls == 1 && !*nested.seenError &&
             !*flyGetLastError(),
         detail);

  /* NULL everywhere. */
  bool nullPreset = flyGetPresetPipeline(NULL, NULL, NULL, NULL);
  snprintf(detail, sizeof detail, "error=%s", flyGetLastError());
  expect("preset, NULL", !nullPreset && *flyGetLastError(), detail);
  FlyResult r =
      flyCompilerCompile((FlyCompiler){NULL}, NULL, 0, NULL, NULL, NULL);
  snprintf(detail, sizeof detail, "error=%s", flyGetLastError());
  expect("compile, null compiler",
         flyResultIsNull(r) && !strcmp(flyGetLastError(), "null compiler"),
         detail);
  r = flyCompilerSweep((FlyCompiler){NULL}, NULL, 0, NULL, NULL, NULL, NULL,
                       NULL, NULL);
  expect("sweep, null compiler", flyResultIsNull(r) && *flyGetLastError(),
         NULL);
  expect("accessors on a null result",
         flyResultGetNumVariants(r) == 0 && !flyResultGetVariantJSON(r, 0) &&
             !*flyResultGetDiagnostics(r) && !flyResultPrefixFromCache(r) &&
             !flyResultVariantSucceeded(r, 0) &&
             flyResultGetNumObjects(r, 0) == 0 &&
             !flyResultGetObject(r, 0, 0, NULL) &&
             !flyResultGetObjectModule(r, 0, 0),
         NULL);
  flyResultDestroy(r);
  flyCompilerDestroy((FlyCompiler){NULL});
  expect("null variant",
         flyVariantGetNumObjects((FlyVariant){NULL}) == 0 &&
             !flyVariantGetObject((FlyVariant){NULL}, 0, NULL),
         NULL);
  bool wrote = flyResultWrite((FlyResult){NULL}, NULL);
  expect("write, null result", !wrote && *flyGetLastError(), NULL);

  /* Numbers the unsigned seconds and job count cannot hold are errors, not
   * a wrapped value (4294967297 s would be a 1 s timeout). */
  FlyCompiler huge = flyCompilerCreate("{\"jobs\": 4294967297}");
  snprintf(detail, sizeof detail, "error=%s", flyGetLastError());
  expect("create, jobs 2^32+1", flyCompilerIsNull(huge) && *flyGetLastError(),
         detail);
  flyCompilerDestroy(huge);
  huge = flyCompilerCreate("{\"variant_timeout\": 4294967297}");
  expect("create, timeout 2^32+1",
         flyCompilerIsNull(huge) && *flyGetLastError(), NULL);
  flyCompilerDestroy(huge);
  /* Two threads failing different calls at once, one succeeding. */
  struct ThreadCheck checks[3] = {{"banana", "target 'banana'", 0},
                                  {"rocdl:", "bad chip", 0},
                                  {"rocdl:gfx942", NULL, 0}};
  pthread_t threads[3];
  for (int i = 0; i < 3; ++i)
    pthread_create(&threads[i], NULL, failOnThread, &checks[i]);
  for (int i = 0; i < 3; ++i)
    pthread_join(threads[i], NULL);
  expect("last error per thread", checks[0].ok && checks[1].ok && checks[2].ok,
         NULL);

  FlyCompiler compiler = flyCompilerCreate(
      "{\"jobs\": 1, \"cache\": false, \"executor\": \"batch\"}");
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
           toolkit);
  FlySweepKernel kernels[2] = {{"first", source, size},
                               {"second", source, size}};

  /* The sweep's options as the compiler's: a value that would wrap. */
  r = flyCompilerSweep(compiler, kernels, 1, pipeline, NULL, "rocdl:gfx942",
                       "{\"variant_timeout\": 4294967297}", NULL, NULL);
  snprintf(detail, sizeof detail, "error=%s", flyGetLastError());
  expect("sweep, timeout 2^32+1", flyResultIsNull(r) && *flyGetLastError(),
         detail);
  flyResultDestroy(r);

  /* Embedded NULs where a length is given: a diagnostic, no crash. */
  static const char nuls[] = "module {\0}\0garbage";
  r = flyCompilerCompile(compiler, nuls, sizeof nuls, pipeline, NULL,
                         "rocdl:gfx942");
  expect("compile, embedded NULs", flyResultIsNull(r) && *flyGetLastError(),
         NULL);
  /* Non-UTF-8 hint sets. */
  r = flyCompilerCompile(compiler, source, size, pipeline,
                         "[{\"waves_per_eu\": \"\xff\xfe\"}]", "rocdl:gfx942");
  expect("compile, non-UTF-8 hints",
         flyResultIsNull(r) && strstr(flyGetLastError(), "bad hint sets"),
         NULL);

  /* A callback that compiles on the sweep's own compiler: those calls fail
   * naming why; the sweep finishes, and its success clears the error. */
  struct Reentrant re = {compiler, source, pipeline, size, 0, 0, 0, 0, {0}};
  r = flyCompilerSweep(compiler, kernels, 2, pipeline, "[{}, {\"O\": 2}]",
                       "rocdl:gfx942", NULL, reenter, &re);
  snprintf(detail, sizeof detail,
           "null=%d variants=%zu calls=%d nested null=%d named=%d nested "
           "error=\"%s\" after=\"%s\"",
           flyResultIsNull(r), flyResultGetNumVariants(r), re.calls,
           re.nestedNull, re.nestedNamed, re.nestedError, flyGetLastError());
  expect("sweep, callback compiles on its compiler",
         !flyResultIsNull(r) && flyResultGetNumVariants(r) == 4 &&
             re.calls == 4 && re.nestedNull == 8 && re.nestedNamed == 4 &&
             !*flyGetLastError(),
         detail);
  flyResultDestroy(r);

  /* Cancelled from the first callback, one variant at a time: the second
   * kernel never starts and is named in the diagnostics. */
  struct Reentrant cancel = {compiler, source, pipeline, size, 0, 0, 0, 1, {0}};
  r = flyCompilerSweep(compiler, kernels, 2, pipeline, "[{}, {\"O\": 2}]",
                       "rocdl:gfx942", NULL, reenter, &cancel);
  snprintf(detail, sizeof detail, "null=%d variants=%zu calls=%d",
           flyResultIsNull(r), flyResultGetNumVariants(r), cancel.calls);
  expect("sweep, cancelled from the callback",
         !flyResultIsNull(r) && cancel.calls == 1 &&
             flyResultGetNumVariants(r) < 4 &&
             strstr(flyResultGetDiagnostics(r),
                    "kernel second was not compiled: the sweep was cancelled"),
         detail);
  flyResultDestroy(r);

  /* Its own compiler destroyed from the first callback: the sweep stops as
   * if cancelled, returns what it made, and the compiler goes after it. */
  FlyCompiler doomed = flyCompilerCreate(
      "{\"jobs\": 1, \"cache\": false, \"executor\": \"batch\"}");
  struct Reentrant destroy = {doomed, source, pipeline, size, 0, 0, 0, 0, {0}};
  r = flyCompilerSweep(doomed, kernels, 2, pipeline, "[{}, {\"O\": 2}]",
                       "rocdl:gfx942", NULL, destroyOwnCompiler, &destroy);
  const char *firstJSON = flyResultGetVariantJSON(r, 0);
  snprintf(detail, sizeof detail, "null=%d variants=%zu calls=%d json=%.60s",
           flyResultIsNull(r), flyResultGetNumVariants(r), destroy.calls,
           firstJSON ? firstJSON : "(null)");
  expect("sweep, callback destroys its compiler",
         !flyCompilerIsNull(doomed) && !flyResultIsNull(r) &&
             destroy.calls == 1 && flyResultGetNumVariants(r) < 4 &&
             firstJSON && strstr(firstJSON, "\"kernel\":\"first\"") &&
             strstr(flyResultGetDiagnostics(r),
                    "kernel second was not compiled: the sweep was cancelled"),
         detail);
  flyResultDestroy(r);

  /* A kernel name that is not UTF-8 still gives valid JSON (U+FFFD), and
   * writing a result where a file is fails naming why. */
  FlySweepKernel odd = {"k\xff\"", source, size};
  r = flyCompilerSweep(compiler, &odd, 1, pipeline, NULL, "rocdl:gfx942", NULL,
                       NULL, NULL);
  const char *oddJSON = flyResultGetVariantJSON(r, 0);
  snprintf(detail, sizeof detail, "json=%.80s", oddJSON ? oddJSON : "(null)");
  expect("sweep, non-UTF-8 kernel name",
         oddJSON && strstr(oddJSON, "\"kernel\":\"k\xef\xbf\xbd\\\"\""),
         detail);
  bool wroteOnFile = flyResultWrite(r, argv[1]);
  snprintf(detail, sizeof detail, "ok=%d error=%s", wroteOnFile,
           flyGetLastError());
  expect("write onto a file", !wroteOnFile && *flyGetLastError(), detail);
  flyResultDestroy(r);

  /* The compiler is still usable afterwards. */
  r = flyCompilerCompile(compiler, source, size, pipeline, NULL,
                         "rocdl:gfx942");
  expect("compile after all that",
         !flyResultIsNull(r) && flyResultVariantSucceeded(r, 0) &&
             !*flyGetLastError(),
         NULL);
  flyResultDestroy(r);
  flyCompilerDestroy(compiler);
  free(source);
  printf("failures: %d\n", failures);
  return failures ? 1 : 0;
}
