//===- LaunchSpec.h - How to launch one kernel: grid, buffers, args -*- C++ -*-===//
//
// A launch spec is a JSON file beside a kernel:
//
//   {
//     "kernel": "tile_matmul_grid",            // optional if there is one
//     "grid": [16, 32], "block": [16, 16],     // 1 to 3 entries each
//     "shared_bytes": 0,                       // dynamic shared memory
//     "buffers": {                             // device buffers, by name
//       "A": {"type": "f32", "size": [4096, 4096], "init": "random", "seed": 1},
//       "C": {"type": "f32", "size": 16777216, "init": "zeros", "output": true}
//     },
//     "args": [                                // kernel parameters, in order
//       {"kind": "memref2d", "buffer": "A", "shape": [4096, 4096]},
//       {"kind": "buffer", "buffer": "C"},       // one pointer
//       {"kind": "scalar", "type": "i64", "value": 4096}
//     ],
//     "reference": {"kind": "matmul", "a": "A", "b": "B", "c": "C",
//                   "m": 4096, "n": 4096, "k": 4096, "samples": 4096},
//     "tolerance": {"rtol": 1e-4, "atol": 1e-3},
//     "timing": {"warmup": 3, "repetitions": 10, "min_time_ms": 200,
//                "max_repetitions": 200}
//   }
//
// Buffer "size" counts elements (an array is multiplied out). "type" is f32
// or i32. "init" is zeros, iota, random (uniform in "range", default [-1, 1)
// for f32, [0, 100] for i32, with "seed") or constant:<value>. Every run
// starts from the initial contents ("restore" semantics), so in-place
// kernels time the same work each repetition. "output": true marks the
// buffers compared between variants (default: every buffer).
//
// "memref2d" expands into the 7 parameters of MLIR's memref descriptor
// (allocated ptr, aligned ptr, offset, size0, size1, stride0, stride1) over
// one buffer; "strides" defaults to row-major and "offset" to 0. A kernel
// compiled for a statically shaped memref (memref<4096x4096xf32>) takes its
// sizes, strides and offset from the type and reads only the aligned
// pointer, so for it these must simply agree with the type; they matter for
// dynamic shapes and layouts (memref<?x?xf32, strided<[?, 1], offset: ?>>).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_LAUNCHSPEC_H
#define FLY_RUNTIME_LAUNCHSPEC_H

#include "fly/Runtime/Backend.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fly::rt {

enum class ElementType { F32, I32 };
enum class ScalarType { I32, I64, F32 };

const char *elementTypeName(ElementType type);
size_t elementSize(ElementType type);

struct BufferSpec {
  enum class Init { Zeros, Iota, Random, Constant };
  std::string name;
  ElementType type = ElementType::F32;
  size_t elements = 0;
  Init init = Init::Zeros;
  uint64_t seed = 0;
  double low = 0, high = 0; ///< random range
  double constant = 0;
  bool output = false;
  size_t bytes() const { return elements * elementSize(type); }
};

struct ArgSpec {
  enum class Kind { Buffer, Memref2D, Scalar };
  Kind kind = Kind::Scalar;
  int buffer = -1;     ///< index into LaunchSpec::buffers
  int64_t offset = 0;  ///< elements
  int64_t sizes[2] = {0, 0};
  int64_t strides[2] = {0, 0};
  ScalarType scalarType = ScalarType::I64;
  int64_t intValue = 0;
  double floatValue = 0;
};

/// One kernel parameter after expansion (memref2d gives 7).
struct ParamSlot {
  int size = 8;       ///< bytes
  std::string what;   ///< "A.aligned", "n (i64)", ...
};

/// C = A * B over row-major f32 buffers, checked in double on the host.
struct MatmulReference {
  int a = -1, b = -1, c = -1;
  int64_t m = 0, n = 0, k = 0;
  int64_t rows[2] = {0, 0}, cols[2] = {0, 0}; ///< [begin, end) of C checked
  int64_t samples = 4096; ///< entries checked; 0 = all of the region
  uint64_t seed = 12345;
};

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

struct TimingSpec {
  int warmup = 3;
  int repetitions = 10;     ///< at least this many timed runs
  double minTimeMs = 200;   ///< ... and at least this much timed kernel time
  int maxRepetitions = 200; ///< ... but never more than this many
};

struct LaunchSpec {
  std::string path;
  std::string kernel; ///< empty: the manifest's only kernel
  Dim3 grid, block;
  unsigned sharedBytes = 0;
  std::vector<BufferSpec> buffers;
  std::vector<ArgSpec> args;
  std::optional<MatmulReference> reference;
  Tolerance tolerance;
  TimingSpec timing;

  std::vector<ParamSlot> params() const;
  /// The buffers compared between variants.
  std::vector<int> outputs() const;
  int findBuffer(const std::string &name) const;
};

/// Parses and validates a spec; `error` says what and where on failure.
bool parseLaunchSpec(const std::string &text, const std::string &path,
                     LaunchSpec &spec, std::string &error);
bool readLaunchSpec(const std::string &path, LaunchSpec &spec,
                    std::string &error);

/// Fills `out` with a buffer's initial contents.
void initializeBuffer(const BufferSpec &buffer, std::vector<unsigned char> &out);

/// Reads a whole file; false with `error` set when it cannot.
bool readFile(const std::string &path, std::string &contents,
              std::string &error);

} // namespace fly::rt

#endif // FLY_RUNTIME_LAUNCHSPEC_H
