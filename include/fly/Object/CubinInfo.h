//===- CubinInfo.h - Kernel facts from a cubin's .nv.info -------*- C++ -*-===//
//
// The one reader of NVIDIA's .nv.info records, shared by the compile side
// (lib/Replay/ObjectMetadata.cpp: registers, frame and stack bytes for the
// manifest) and the runtime (fly-run checks a launch spec against the
// kernel's parameter table; the fake driver in test/Runtime reads it too).
// It needs only LLVMObject/LLVMSupport headers: the compile side links them
// from libLLVM.so, fly-run from the static archives.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_OBJECT_CUBININFO_H
#define FLY_OBJECT_CUBININFO_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fly {

struct CubinParam {
  unsigned ordinal = 0, offset = 0, size = 0;
};

/// One kernel (a function with a .text.<name> section). -1: no record.
struct CubinKernel {
  std::string name;
  int64_t registers = -1, frameBytes = -1, minStackBytes = -1,
          maxStackBytes = -1, sharedBytes = -1, paramBytes = -1;
  std::vector<CubinParam> params; ///< sorted by ordinal
  /// The block size (x, y, z) the kernel requires (.reqntid) or at most
  /// allows (.maxntid); empty when not given.
  std::vector<int64_t> reqntid, maxntid;
};

/// Reads every kernel of a 64-bit little-endian ELF cubin. Malformed records
/// end their section's walk; a malformed ELF is an error.
llvm::Expected<std::vector<CubinKernel>>
readCubinKernels(llvm::StringRef image);

} // namespace fly

#endif // FLY_OBJECT_CUBININFO_H
