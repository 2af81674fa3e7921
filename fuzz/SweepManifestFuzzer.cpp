//===- SweepManifestFuzzer.cpp - libFuzzer target for fly-run's manifest --===//
//
// fly-run reads manifest.json from an out-dir it did not write. This target
// feeds arbitrary bytes to parseSweepManifest (out-dir "out") and checks,
// aborting on failure:
//   - an error names the manifest;
//   - every variant id is a plain file name and every object file it would
//     read is "out/<plain name>": nothing outside the out-dir;
//   - an object's recorded size never exceeds kMaxObjectBytes.
//
//===----------------------------------------------------------------------===//

#include "fly/Runtime/SweepManifest.h"
#include "fly/Support/FileName.h"

#include <cstdio>
#include <cstdlib>

using namespace llvm;
using namespace fly::rt;
using fly::isPlainFileName;

static void check(bool ok, const char *what) {
  if (ok)
    return;
  std::fprintf(stderr, "SweepManifestFuzzer invariant violated: %s\n", what);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef text(reinterpret_cast<const char *>(data), size);
  Expected<SweepManifest> manifest = parseSweepManifest(text, "out");
  if (!manifest) {
    check(StringRef(toString(manifest.takeError()))
              .starts_with("out/manifest.json"),
          "an error names the manifest");
    return 0;
  }
  check(!manifest->variants.empty(), "a manifest has variants");
  for (const ManifestVariant &v : manifest->variants) {
    check(isPlainFileName(v.id), "variant ids are plain names");
    for (const ManifestObject &o : v.objects) {
      StringRef file = o.file;
      check(file.empty() ||
                (file.consume_front("out/") && isPlainFileName(file)),
            "object files inside the out-dir");
      check(o.size <= kMaxObjectBytes || o.size == kMaxObjectBytes,
            "object size bounded");
    }
  }
  return 0;
}
