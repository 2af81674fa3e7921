/*===- fly-tune-launcher.c - The wheel's fly-tune ---------------------------===
 *
 * The self-contained libFlySnapshotCAPI.so also holds fly-tune's program
 * (its main exported as flyTuneMain), so that the wheel carries LLVM once:
 * this program, <dir>/bin/fly-tune, loads <dir>/lib/libFlySnapshotCAPI.so
 * and runs it. The library's process executor starts it the same way as
 * the full fly-tune (<library dir>/../bin/fly-tune).
 *
 *===----------------------------------------------------------------------===*/

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  char self[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length < 0) {
    perror("fly-tune: /proc/self/exe");
    return 1;
  }
  self[length] = '\0';
  char library[PATH_MAX + 64];
  snprintf(library, sizeof(library), "%s/../lib/libFlySnapshotCAPI.so",
           dirname(self));
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    fprintf(stderr, "fly-tune: %s\n", dlerror());
    return 1;
  }
  int (*toolMain)(int, char **) =
      (int (*)(int, char **))dlsym(handle, "flyTuneMain");
  if (!toolMain) {
    fprintf(stderr, "fly-tune: %s has no flyTuneMain: %s\n", library,
            dlerror());
    return 1;
  }
  return toolMain(argc, argv);
}
