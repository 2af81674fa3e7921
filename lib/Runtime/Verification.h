//===- Verification.h - Check a variant's outputs ---------------*- C++ -*-===//
//
// The host reference (a sampled matmul in double, or expected bytes) is made
// once by the supervisor; workers compare every variant's outputs with it
// and with the first passing variant.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_VERIFICATION_H
#define FLY_RUNTIME_VERIFICATION_H

#include "Runtime/Sweep.h"
#include "fly/Runtime/LaunchSpec.h"

namespace fly::rt {

struct HostReference {
  int buffer = -1;            ///< the output buffer it checks; -1: none
  std::vector<int64_t> index; ///< sampled element indices (matmul) ...
  std::vector<double> expected;
  std::string bytes;  ///< ... or the whole expected buffer (file)
  size_t entries = 0; ///< elements checked
};

llvm::Expected<HostReference>
computeHostReference(const LaunchSpec &spec,
                     const std::vector<std::string> &host);

/// Compares buffer `b`'s contents `got` with the reference samples.
void compareWithHost(const HostReference &ref, const BufferSpec &b,
                     llvm::StringRef got, const Tolerance &tol, Comparison &c);
/// Compares two whole buffers (bit-identical is a fast path).
void compareBuffers(const BufferSpec &b, llvm::StringRef got,
                    llvm::StringRef want, const Tolerance &tol, Comparison &c);

} // namespace fly::rt

#endif // FLY_RUNTIME_VERIFICATION_H
