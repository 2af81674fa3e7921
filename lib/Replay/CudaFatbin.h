//===- CudaFatbin.h - The entries of a CUDA fatbin container ----*- C++ -*-===//
//
// NVVM's format=fatbin (upstream's default) wraps the cubin that ptxas made,
// and sometimes the PTX, in NVIDIA's fatbin container: a 16-byte header
// (magic 0xBA55ED50, version, header size, payload size), then entries, each
// with its own header (kind 1 = PTX, 2 = ELF; header size; payload size;
// SM arch; flags, 0x2000 = compressed). Register counts live in the cubin.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_REPLAY_CUDAFATBIN_H
#define FLY_REPLAY_CUDAFATBIN_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace fly {

struct FatbinEntry {
  enum class Kind { PTX, ELF, Other };
  Kind kind = Kind::Other;
  /// The SM version the entry is for: 90 for sm_90.
  unsigned arch = 0;
  bool compressed = false;
  /// The entry's bytes (still compressed when `compressed`).
  llvm::StringRef payload;
};

/// The entries of `fatbin`, in order. Fails when it is not a fatbin
/// container or an entry runs past its end.
llvm::Expected<std::vector<FatbinEntry>>
readFatbinEntries(llvm::StringRef fatbin);

} // namespace fly

#endif // FLY_REPLAY_CUDAFATBIN_H
