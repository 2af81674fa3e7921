//===- LaunchSpecFuzzer.cpp - libFuzzer target for fly-run launch specs ---===//
//
// A launch spec is user input that fly-run turns into device allocations
// and kernel parameters. This target feeds arbitrary bytes to
// parseLaunchSpec and checks, aborting on failure:
//   - an error names the file ("spec.json: ...");
//   - a parsed spec is within the limits (buffers, args, rank, elements);
//   - every memref argument stays inside its buffer (the last element it
//     reaches, computed here in 128-bit arithmetic) and every buffer
//     argument's offset is inside its buffer;
//   - the expanded parameter list has 1 slot per buffer/scalar argument and
//     3 + 2 x rank per memref.
//
//===----------------------------------------------------------------------===//

#include "fly/Runtime/LaunchSpec.h"

#include <cstdio>
#include <cstdlib>

using namespace llvm;
using namespace fly::rt;

static void check(bool ok, const char *what) {
  if (ok)
    return;
  std::fprintf(stderr, "LaunchSpecFuzzer invariant violated: %s\n", what);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef text(reinterpret_cast<const char *>(data), size);
  Expected<LaunchSpec> spec = parseLaunchSpec(text, "spec.json");
  if (!spec) {
    check(StringRef(toString(spec.takeError())).starts_with("spec.json"),
          "an error names the file");
    return 0;
  }
  check(spec->buffers.size() <= kMaxBuffers && spec->args.size() <= kMaxArgs,
        "limits on buffers and args");
  size_t slots = 0;
  for (const BufferSpec &b : spec->buffers)
    check(b.elements >= 1 && b.elements <= kMaxBufferElements,
          "buffer elements in [1, 2^40]");
  for (const ArgSpec &a : spec->args) {
    if (a.kind == ArgSpec::Kind::Scalar) {
      ++slots;
      continue;
    }
    check(a.buffer >= 0 && size_t(a.buffer) < spec->buffers.size(),
          "argument buffer index");
    __int128 last = a.offset, elements = spec->buffers[a.buffer].elements;
    check(a.offset >= 0 && last < elements, "offset inside the buffer");
    if (a.kind == ArgSpec::Kind::Buffer) {
      ++slots;
      continue;
    }
    check(a.sizes.size() == a.strides.size() && a.sizes.size() <= kMaxRank,
          "memref rank");
    for (size_t d = 0; d < a.sizes.size(); ++d) {
      check(a.sizes[d] >= 1 && a.strides[d] >= 0, "memref sizes and strides");
      last += (__int128)(a.sizes[d] - 1) * a.strides[d];
    }
    check(last < elements, "memref inside its buffer");
    slots += 3 + 2 * a.sizes.size();
  }
  check(spec->params().size() == slots, "expanded parameter count");
  return 0;
}
