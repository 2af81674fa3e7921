//===- CubinInfo.h - Kernel facts from a cubin's .nv.info -------*- C++ -*-===//
//
// A plain-C++ reader (no LLVM) for what the driver itself needs to launch a
// cubin kernel: its parameter layout. fly-run checks a launch spec against
// it before launching, so a spec that passes the wrong number or size of
// arguments is a clear error instead of a fault (or silent garbage).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_CUBININFO_H
#define FLY_RUNTIME_CUBININFO_H

#include <string>
#include <vector>

namespace fly::rt {

struct CubinParam {
  int ordinal = 0;
  int offset = 0;
  int size = 0;
};

struct CubinKernel {
  std::string name;
  int registers = -1;
  int frameBytes = -1;
  int paramBytes = -1; ///< size of the parameter constant bank; -1 unknown
  std::vector<CubinParam> params; ///< by ordinal
};

/// False (with `error`) unless `image` is a 64-bit little-endian ELF.
bool readCubinKernels(const std::string &image,
                      std::vector<CubinKernel> &kernels, std::string &error);

/// True for an ELF image (a cubin or an AMD code object).
bool isElf(const std::string &image);

} // namespace fly::rt

#endif // FLY_RUNTIME_CUBININFO_H
