//===- fake_libcuda.cpp - A stand-in CUDA driver for GPU-less tests -------===//
//
// Exports the driver entry points fly-run's CUDA backend uses. Device memory
// is host memory; modules are cubins read with fly's own .nv.info reader;
// "launching" tile_matmul / tile_matmul_grid computes their 8x16-per-thread
// tiles on the host in the kernel's own order (fmaf over k), and
// scale_1d(memref<?xf32> x, memref<?xf32> y) computes y[i] = 2 x[i] + 1 for
// the i < size covered by the grid (Inputs/scale_1d.mlir), checking every
// access against the allocations (out of bounds: CUDA_ERROR_ILLEGAL_ADDRESS,
// which, as with the real driver, poisons the whole process: every later
// call fails, new contexts included). Each launch advances a fake clock
// by 1 + |registers - 64| / 64 ms, so timings and the winner are
// deterministic.
//
// Knobs: FAKE_CUDA_MODE=nodevice (cuInit fails with CUDA_ERROR_NO_DEVICE),
// FAKE_CUDA_FAULT_REGS=N (kernels with N registers fault),
// FAKE_CUDA_WRONG_REGS=N (kernels with N registers get one wrong output),
// FAKE_CUDA_REG_SKEW=N (report N more registers than the cubin has),
// FAKE_CUDA_HANG_REGS=N (kernels with N registers never finish),
// FAKE_CUDA_CRASH_REGS=N (launching kernels with N registers crashes).
//
// The primary context API is one shared context; fakeCudaCounters() tells a
// test how many launches and memsets ran and how many contexts are alive.
//
//===----------------------------------------------------------------------===//

#include "fly/Object/CubinInfo.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

using CUresult = int;
using CUdeviceptr = unsigned long long;

namespace {

struct Module {
  std::vector<fly::CubinKernel> kernels;
};
struct Event {
  double t = 0;
};
struct Context {
  CUresult sticky = 0;
  std::map<uint64_t, size_t> allocations;
};

Context *current = nullptr;
Context *primary = nullptr;
int primaryRetains = 0;
double fakeClockMs = 0;
long launches = 0, memsets = 0;
CUresult poisoned = 0; // a sticky error: the process is done with CUDA

int envInt(const char *name, int fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

bool inBounds(uint64_t begin, uint64_t bytes) {
  if (!current)
    return false;
  auto it = current->allocations.upper_bound(begin);
  if (it == current->allocations.begin())
    return false;
  --it;
  return begin >= it->first && begin + bytes <= it->first + it->second;
}

/// An f32 memref descriptor of rank 1 or 2 as the lowering passes it:
/// allocated, aligned, offset, sizes[rank], strides[rank].
struct Memref {
  uint64_t aligned;
  int64_t offset, size0, size1 = 1, stride0, stride1 = 0;
  float *at(int64_t i, int64_t j = 0) const {
    return reinterpret_cast<float *>(aligned) + offset + i * stride0 +
           j * stride1;
  }
  bool valid() const {
    if (size0 <= 0 || size1 <= 0 || stride0 < 0 || stride1 < 0 ||
        stride0 > (int64_t(1) << 40) || stride1 > (int64_t(1) << 40))
      return false;
    int64_t last = offset + (size0 - 1) * stride0 + (size1 - 1) * stride1;
    if (offset < 0 || last < offset)
      return false;
    return inBounds(aligned + static_cast<uint64_t>(offset) * 4,
                    static_cast<uint64_t>(last - offset + 1) * 4);
  }
};

Memref memref(void **params, int first, int rank = 2) {
  auto get = [&](int i) {
    return static_cast<int64_t>(*static_cast<uint64_t *>(params[first + i]));
  };
  if (rank == 1)
    return {static_cast<uint64_t>(get(1)), get(2), get(3), 1, get(4), 0};
  return {static_cast<uint64_t>(get(1)), get(2), get(3), get(4), get(5), get(6)};
}

} // namespace

extern "C" {

CUresult cuInit(unsigned) {
  const char *mode = std::getenv("FAKE_CUDA_MODE");
  return mode && std::strcmp(mode, "nodevice") == 0 ? 100 : 0;
}
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return 0;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return 0;
}
CUresult cuDeviceGet(int *d, int ordinal) {
  if (ordinal != 0)
    return 101;
  *d = 0;
  return 0;
}
CUresult cuDeviceGetName(char *name, int len, int) {
  std::strncpy(name, "Fake CUDA Device", static_cast<size_t>(len));
  return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int) {
  *v = attr == 75 ? 9 : 0; // compute capability 9.0
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, int) {
  *bytes = size_t(1) << 32;
  return 0;
}
CUresult cuCtxCreate_v2(void **ctx, unsigned, int) {
  if (poisoned)
    return poisoned;
  current = new Context();
  *ctx = current;
  return 0;
}
CUresult cuCtxDestroy_v2(void *ctx) {
  auto *c = static_cast<Context *>(ctx);
  for (auto &[ptr, size] : c->allocations)
    std::free(reinterpret_cast<void *>(ptr));
  if (c == current)
    current = nullptr;
  delete c;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int) {
  if (poisoned)
    return poisoned;
  if (!primary)
    primary = new Context();
  ++primaryRetains;
  *ctx = primary;
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int) {
  return primaryRetains > 0 ? (--primaryRetains, 0) : 201;
}
CUresult cuDevicePrimaryCtxReset_v2(int) {
  if (primary)
    cuCtxDestroy_v2(primary);
  primary = nullptr;
  primaryRetains = 0;
  return 0;
}
CUresult cuCtxSetCurrent(void *ctx) {
  current = static_cast<Context *>(ctx);
  return 0;
}
CUresult cuCtxSynchronize() { return current ? current->sticky : 201; }

CUresult cuModuleLoadData(void **module, const void *image) {
  if (!current)
    return 201;
  if (current->sticky)
    return current->sticky;
  // A cubin's size is in its ELF header: section headers come last.
  const auto *bytes = static_cast<const unsigned char *>(image);
  if (std::memcmp(bytes, "\x7f" "ELF", 4) != 0)
    return 200; // CUDA_ERROR_INVALID_IMAGE
  uint64_t shoff;
  uint16_t shentsize, shnum;
  std::memcpy(&shoff, bytes + 0x28, 8);
  std::memcpy(&shentsize, bytes + 0x3a, 2);
  std::memcpy(&shnum, bytes + 0x3c, 2);
  std::string text(reinterpret_cast<const char *>(bytes),
                   shoff + uint64_t(shentsize) * shnum);
  auto kernels = fly::readCubinKernels(text);
  if (!kernels) {
    llvm::consumeError(kernels.takeError());
    return 200;
  }
  *module = new Module{std::move(*kernels)};
  return 0;
}
CUresult cuModuleUnload(void *module) {
  delete static_cast<Module *>(module);
  return 0;
}
CUresult cuModuleGetFunction(void **f, void *module, const char *name) {
  for (fly::CubinKernel &k : static_cast<Module *>(module)->kernels)
    if (k.name == name) {
      *f = &k;
      return 0;
    }
  return 500; // CUDA_ERROR_NOT_FOUND
}
CUresult cuFuncGetAttribute(int *v, int attr, void *f) {
  auto *k = static_cast<fly::CubinKernel *>(f);
  switch (attr) {
  case 0:
    *v = 1024;
    return 0;
  case 1:
    *v = 0;
    return 0;
  case 3:
    *v = k->frameBytes < 0 ? 0 : k->frameBytes;
    return 0;
  case 4:
    *v = k->registers + envInt("FAKE_CUDA_REG_SKEW", 0);
    return 0;
  default:
    return 1; // CUDA_ERROR_INVALID_VALUE
  }
}
CUresult cuFuncSetAttribute(void *, int, int) { return 0; }

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  if (!current)
    return 201;
  void *mem = std::calloc(bytes, 1);
  if (!mem)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  *p = reinterpret_cast<CUdeviceptr>(mem);
  current->allocations[*p] = bytes;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  if (!current || !current->allocations.erase(p))
    return 1;
  std::free(reinterpret_cast<void *>(p));
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  if (!current || current->sticky)
    return current ? current->sticky : 201;
  if (!inBounds(dst, bytes))
    return 1;
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  if (!current || current->sticky)
    return current ? current->sticky : 201;
  if (!inBounds(src, bytes))
    return 1;
  std::memcpy(dst, reinterpret_cast<void *>(src), bytes);
  return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes,
                         void *) {
  if (!current || current->sticky)
    return current ? current->sticky : 201;
  if (!inBounds(dst, bytes))
    return 1;
  std::memset(reinterpret_cast<void *>(dst), value, bytes);
  ++memsets;
  return 0;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  if (!current || current->sticky)
    return current ? current->sticky : 201;
  if (!inBounds(dst, bytes) || !inBounds(src, bytes))
    return 1;
  std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
              bytes);
  return 0;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned,
                        unsigned bx, unsigned by, unsigned, unsigned, void *,
                        void **params, void **) {
  if (!current)
    return 201;
  if (current->sticky)
    return current->sticky;
  auto *k = static_cast<fly::CubinKernel *>(f);
  bool scale = k->name == "scale_1d";
  if (k->params.size() != (scale ? 10u : 21u))
    return 1;
  fakeClockMs += 1.0 + std::fabs(k->registers - 64) / 64.0;
  ++launches;
  if (k->registers == envInt("FAKE_CUDA_HANG_REGS", -1))
    while (true)
      pause();
  if (k->registers == envInt("FAKE_CUDA_CRASH_REGS", -1))
    std::abort();
  if (k->registers == envInt("FAKE_CUDA_FAULT_REGS", -1))
    return current->sticky = poisoned = 700; // CUDA_ERROR_ILLEGAL_ADDRESS
  if (scale) {
    Memref x = memref(params, 0, 1), y = memref(params, 5, 1);
    if (!x.valid() || !y.valid() || y.size0 < x.size0)
      return current->sticky = poisoned = 700;
    int64_t threads = int64_t(gx) * bx;
    for (int64_t i = 0; i < std::min(threads, x.size0); ++i)
      *y.at(i) = 2 * *x.at(i) + 1;
    if (k->registers == envInt("FAKE_CUDA_WRONG_REGS", -1))
      *y.at(0) += 1.0f;
    return 0;
  }
  Memref a = memref(params, 0), b = memref(params, 7), c = memref(params, 14);
  if (!a.valid() || !b.valid() || !c.valid())
    return current->sticky = poisoned = 700;
  bool grid = k->name == "tile_matmul_grid";
  int64_t rows = int64_t(by) * 8 * (grid ? gy : 1);
  int64_t cols = int64_t(bx) * 16 * (grid ? gx : 1);
  int64_t depth = a.size1;
  if (rows > a.size0 || rows > c.size0 || cols > b.size1 || cols > c.size1 ||
      depth > b.size0)
    return current->sticky = poisoned = 700;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      float acc = 0;
      for (int64_t kk = 0; kk < depth; ++kk)
        acc = std::fmaf(*a.at(i, kk), *b.at(kk, j), acc);
      *c.at(i, j) = acc;
    }
  if (k->registers == envInt("FAKE_CUDA_WRONG_REGS", -1))
    *c.at(rows - 1, cols - 1) += 1.0f;
  return 0;
}

CUresult cuEventCreate(void **e, unsigned) {
  *e = new Event();
  return 0;
}
CUresult cuEventDestroy_v2(void *e) {
  delete static_cast<Event *>(e);
  return 0;
}
CUresult cuEventRecord(void *e, void *) {
  if (current && current->sticky)
    return current->sticky;
  static_cast<Event *>(e)->t = fakeClockMs;
  return 0;
}
CUresult cuEventSynchronize(void *) { return current ? current->sticky : 201; }
CUresult cuEventElapsedTime(float *ms, void *start, void *stop) {
  *ms = static_cast<float>(static_cast<Event *>(stop)->t -
                           static_cast<Event *>(start)->t);
  return 0;
}

CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
  case 100:
    *s = "CUDA_ERROR_NO_DEVICE";
    return 0;
  case 700:
    *s = "CUDA_ERROR_ILLEGAL_ADDRESS";
    return 0;
  case 200:
    *s = "CUDA_ERROR_INVALID_IMAGE";
    return 0;
  case 500:
    *s = "CUDA_ERROR_NOT_FOUND";
    return 0;
  default:
    *s = nullptr;
    return 1;
  }
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  switch (r) {
  case 100:
    *s = "no CUDA-capable device is detected";
    return 0;
  case 700:
    *s = "an illegal memory access was encountered";
    return 0;
  default:
    *s = nullptr;
    return 1;
  }
}

/// launches, memsets, live primary-context retains.
void fakeCudaCounters(long *out) {
  out[0] = launches;
  out[1] = memsets;
  out[2] = primaryRetains;
}

} // extern "C"
