//===- LaunchSpec.h - How to launch one kernel ------------------*- C++ -*-===//
//
// A JSON file beside a kernel: grid, block, buffers, the kernel's arguments
// (pointers, memrefs of any rank, scalars), a host reference, tolerance and
// timing. README.md ("fly-run") lists the keys; see examples/*.launch.json.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_LAUNCHSPEC_H
#define FLY_RUNTIME_LAUNCHSPEC_H

#include "fly/Runtime/Backend.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fly::rt {

enum class ElementType { I8, I16, I32, I64, F16, BF16, F32, F64 };
llvm::StringRef elementTypeName(ElementType type);
size_t elementSize(ElementType type);
/// Reads element `i` of `data` as a double.
double readElement(ElementType type, const uint8_t *data, size_t i);

/// Limits that keep a hostile spec cheap to reject.
constexpr uint64_t kMaxSpecBytes = 16 << 20;
constexpr size_t kMaxBuffers = 4096, kMaxArgs = 4096, kMaxRank = 16;
constexpr uint64_t kMaxBufferElements = uint64_t(1) << 40;

struct BufferSpec {
  enum class Init { Zeros, Iota, Random, Constant, File };
  std::string name;
  ElementType type = ElementType::F32;
  uint64_t elements = 0;
  Init init = Init::Zeros;
  uint64_t seed = 0;
  double low = 0, high = 0; ///< random range
  double constant = 0;
  std::string file; ///< Init::File, resolved against the spec's directory
  bool output = false;
  uint64_t bytes() const { return elements * elementSize(type); }
};

struct ArgSpec {
  enum class Kind { Buffer, Memref, Scalar };
  Kind kind = Kind::Scalar;
  int buffer = -1;    ///< index into LaunchSpec::buffers
  int64_t offset = 0; ///< elements
  std::vector<int64_t> sizes, strides;
  ElementType scalarType = ElementType::I64;
  int64_t intValue = 0; ///< a scalar's bits in its type
};

struct ReferenceSpec {
  enum class Kind { Matmul, File };
  Kind kind = Kind::Matmul;
  int a = -1, b = -1, c = -1; ///< c: the buffer checked (both kinds)
  int64_t m = 0, n = 0, k = 0;
  int64_t rows[2] = {0, 0}, cols[2] = {0, 0}; ///< [begin, end) of C checked
  int64_t samples = 4096; ///< entries checked; 0 = all of the region
  uint64_t seed = 12345;
  std::string file; ///< Kind::File: the expected bytes of buffer c
};

struct Tolerance {
  double rtol = 1e-5, atol = 1e-6;
};

/// At least `repetitions` timed runs and `minTimeMs`, at most
/// `maxRepetitions` runs, after `warmup` runs.
struct TimingSpec {
  int warmup = 3, repetitions = 10, maxRepetitions = 200;
  double minTimeMs = 200;
};

struct LaunchSpec {
  std::string path;
  std::string text;   ///< as read: part of the best-config fingerprint
  std::string kernel; ///< empty: the manifest's only kernel
  Dim3 grid, block;
  unsigned sharedBytes = 0;
  std::vector<BufferSpec> buffers; ///< sorted by name
  std::vector<ArgSpec> args;
  std::optional<ReferenceSpec> reference;
  Tolerance tolerance;
  TimingSpec timing;

  /// The kernel parameters' sizes in bytes, after expansion.
  std::vector<unsigned> params() const;
  /// The buffers compared between variants.
  std::vector<int> outputs() const;
  uint64_t totalBytes() const;
};

/// Parses and validates a spec; errors name the file and the JSON path.
llvm::Expected<LaunchSpec> parseLaunchSpec(llvm::StringRef text,
                                           llvm::StringRef path);
llvm::Expected<LaunchSpec> readLaunchSpec(llvm::StringRef path);

/// SplitMix64: the deterministic generator of random buffers and samples.
inline uint64_t splitMix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The buffers' initial contents on the host (files read, allocation
/// failures reported, never thrown).
llvm::Expected<std::vector<std::string>>
initializeBuffers(const LaunchSpec &spec);

} // namespace fly::rt

#endif // FLY_RUNTIME_LAUNCHSPEC_H
