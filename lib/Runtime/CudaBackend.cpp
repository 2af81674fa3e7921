//===- CudaBackend.cpp - The CUDA driver API, loaded at run time ----------===//
//
// libcuda.so.1 is dlopen'ed, never linked: fly-run starts (and says "no CUDA
// device") on machines without an NVIDIA driver. The few driver types and
// functions used are declared here; their ABI has been stable for years.
//
//===----------------------------------------------------------------------===//

#include "fly/Runtime/Backend.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace fly::rt {
namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

/// Errors that poison the context: ECC, illegal address, launch timeout,
/// 714..719 (stack, instruction, alignment, address space, PC, launch).
bool isSticky(CUresult r) {
  return r == 214 || r == 700 || r == 702 || (r >= 714 && r <= 719);
}

// Every driver entry point used: X(name, symbol, required, parameters).
#define FLY_CUDA_DRIVER_API(X)                                                 \
  X(cuInit, "cuInit", true, unsigned)                                          \
  X(cuDriverGetVersion, "cuDriverGetVersion", false, int *)                    \
  X(cuDeviceGetCount, "cuDeviceGetCount", true, int *)                         \
  X(cuDeviceGet, "cuDeviceGet", true, CUdevice *, int)                         \
  X(cuDeviceGetName, "cuDeviceGetName", true, char *, int, CUdevice)           \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", true, int *, int, CUdevice)  \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", false, size_t *, CUdevice)        \
  X(cuCtxCreate, "cuCtxCreate_v2", false, CUcontext *, unsigned, CUdevice)     \
  X(cuCtxDestroy, "cuCtxDestroy_v2", false, CUcontext)                         \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", false, CUcontext *,  \
    CUdevice)                                                                  \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", false,          \
    CUdevice)                                                                  \
  X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", false, CUdevice)    \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", false, CUcontext)                      \
  X(cuCtxSynchronize, "cuCtxSynchronize", true)                                \
  X(cuModuleLoadData, "cuModuleLoadData", true, CUmodule *, const void *)      \
  X(cuModuleGetFunction, "cuModuleGetFunction", true, CUfunction *, CUmodule,  \
    const char *)                                                              \
  X(cuFuncGetAttribute, "cuFuncGetAttribute", true, int *, int, CUfunction)    \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", false, CUfunction, int, int)     \
  X(cuMemAlloc, "cuMemAlloc_v2", true, CUdeviceptr *, size_t)                  \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", true, CUdeviceptr, const void *, size_t)  \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", true, void *, CUdeviceptr, size_t)        \
  X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", true, CUdeviceptr, CUdeviceptr, size_t)   \
  X(cuLaunchKernel, "cuLaunchKernel", true, CUfunction, unsigned, unsigned,    \
    unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **,       \
    void **)                                                                   \
  X(cuEventCreate, "cuEventCreate", true, CUevent *, unsigned)                 \
  X(cuEventDestroy, "cuEventDestroy_v2", true, CUevent)                        \
  X(cuEventRecord, "cuEventRecord", true, CUevent, CUstream)                   \
  X(cuEventSynchronize, "cuEventSynchronize", true, CUevent)                   \
  X(cuEventElapsedTime, "cuEventElapsedTime", true, float *, CUevent, CUevent) \
  X(cuGetErrorString, "cuGetErrorString", false, CUresult, const char **)      \
  X(cuGetErrorName, "cuGetErrorName", false, CUresult, const char **)          \
  X(cuModuleUnload, "cuModuleUnload", false, CUmodule)                         \
  X(cuMemFree, "cuMemFree_v2", false, CUdeviceptr)                             \
  X(cuMemsetD8Async, "cuMemsetD8Async", false, CUdeviceptr, unsigned char,     \
    size_t, CUstream)

struct Driver {
  void *handle = nullptr;
#define FLY_DECLARE(name, symbol, required, ...) CUresult (*name)(__VA_ARGS__);
  FLY_CUDA_DRIVER_API(FLY_DECLARE)
#undef FLY_DECLARE
};

class CudaBackend final : public Backend {
public:
  explicit CudaBackend(std::string library) : library(std::move(library)) {
    const char *env = std::getenv("FLY_LIBCUDA");
    if (this->library.empty())
      this->library = env && *env ? env : "libcuda.so.1";
  }
  ~CudaBackend() override {
    if (d.handle && context) {
      destroyEvents();
      destroyContext();
    }
    // libcuda is never dlclose'd: its threads may outlive this object.
  }

  const char *name() const override { return "CUDA"; }

  void shareProcessContext() override { sharedContext = true; }

  OpenResult open(int ordinal, std::string &message) override {
    if (!loadDriver(message))
      return OpenResult::NoRuntime;
    // No device, invalid device, not ready, ...: NoDevice; an old driver or
    // one that cannot initialise: NoRuntime.
    if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
      message = "cuInit: " + describe(r);
      return r == CUDA_ERROR_INSUFFICIENT_DRIVER ||
                     r == CUDA_ERROR_NOT_INITIALIZED
                 ? OpenResult::NoRuntime
                 : OpenResult::NoDevice;
    }
    int count = 0;
    if (CUresult r = d.cuDeviceGetCount(&count); r != CUDA_SUCCESS || !count) {
      message = r != CUDA_SUCCESS ? "cuDeviceGetCount: " + describe(r)
                                  : "the driver reports 0 devices";
      return OpenResult::NoDevice;
    }
    if (ordinal < 0 || ordinal >= count) {
      message = "device " + std::to_string(ordinal) +
                " requested, but the driver reports " + std::to_string(count) +
                " device(s)";
      return OpenResult::NoDevice;
    }
    if (CUresult r = d.cuDeviceGet(&device, ordinal); r != CUDA_SUCCESS) {
      message = "cuDeviceGet: " + describe(r);
      return OpenResult::NoDevice;
    }
    deviceInfo.ordinal = ordinal;
    char name[256] = {0};
    if (d.cuDeviceGetName(name, sizeof name - 1, device) == CUDA_SUCCESS)
      deviceInfo.name = name;
    int major = 0, minor = 0, version = 0;
    d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           device);
    d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                           device);
    deviceInfo.arch = "sm_" + std::to_string(major) + std::to_string(minor);
    if (d.cuDeviceTotalMem)
      d.cuDeviceTotalMem(&deviceInfo.totalMemory, device);
    if (d.cuDriverGetVersion && d.cuDriverGetVersion(&version) == CUDA_SUCCESS)
      deviceInfo.runtimeVersion = "CUDA driver API " +
                                  std::to_string(version / 1000) + "." +
                                  std::to_string(version % 1000 / 10);
    Status s = reset();
    message = s.message;
    return s ? OpenResult::Ok : OpenResult::Error;
  }

  DeviceInfo info() const override { return deviceInfo; }

  Status reset() override {
    if (context) {
      destroyEvents();
      destroyContext(); // may report the old fault again; ignore
    }
    if (sharedContext && !(d.cuDevicePrimaryCtxRetain && d.cuCtxSetCurrent))
      return Status::error(library + " has no primary context API "
                                     "(cuDevicePrimaryCtxRetain)");
    CUresult r = usePrimary() ? d.cuDevicePrimaryCtxRetain(&context, device)
                              : d.cuCtxCreate(&context, 0, device);
    if (r == CUDA_SUCCESS && usePrimary())
      r = d.cuCtxSetCurrent(context);
    if (r != CUDA_SUCCESS) {
      context = nullptr;
      return fail(usePrimary() ? "cuDevicePrimaryCtxRetain" : "cuCtxCreate", r);
    }
    if (CUresult r = d.cuEventCreate(&start, 0); r != CUDA_SUCCESS)
      return fail("cuEventCreate", r);
    return check("cuEventCreate", d.cuEventCreate(&stop, 0));
  }

  Status loadModule(const std::string &image, ModuleHandle &module) override {
    // A PTX image must be NUL-terminated; std::string's buffer is.
    return check("cuModuleLoadData",
                 d.cuModuleLoadData(reinterpret_cast<CUmodule *>(&module),
                                    image.c_str()));
  }
  Status getFunction(ModuleHandle module, const std::string &name,
                     FunctionHandle &function) override {
    return check(
        "cuModuleGetFunction('" + name + "')",
        d.cuModuleGetFunction(reinterpret_cast<CUfunction *>(&function),
                              static_cast<CUmodule>(module), name.c_str()));
  }
  Status getAttributes(FunctionHandle function,
                       KernelAttributes &attributes) override {
    auto f = static_cast<CUfunction>(function);
    int values[4] = {0, 0, 0, -1};
    const std::pair<int, const char *> queries[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS"},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, nullptr}}; // optional
    for (int q = 0; q < 4; ++q)
      if (CUresult r = d.cuFuncGetAttribute(&values[q], queries[q].first, f);
          r && queries[q].second)
        return fail(
            std::string("cuFuncGetAttribute(") + queries[q].second + ")", r);
    attributes = {values[0], values[1], values[2], values[3]};
    return {};
  }

  Status allocate(size_t bytes, DevicePtr &ptr) override {
    static_assert(sizeof(DevicePtr) == sizeof(CUdeviceptr));
    return check("cuMemAlloc(" + std::to_string(bytes) + " bytes)",
                 d.cuMemAlloc(reinterpret_cast<CUdeviceptr *>(&ptr), bytes));
  }
  Status copyToDevice(DevicePtr dst, const void *src, size_t bytes) override {
    return check("cuMemcpyHtoD", d.cuMemcpyHtoD(dst, src, bytes));
  }
  Status copyToHost(void *dst, DevicePtr src, size_t bytes) override {
    return check("cuMemcpyDtoH", d.cuMemcpyDtoH(dst, src, bytes));
  }
  Status copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes) override {
    return check("cuMemcpyDtoD", d.cuMemcpyDtoD(dst, src, bytes));
  }

  Status launch(FunctionHandle function, Dim3 grid, Dim3 block,
                unsigned sharedBytes, void **params) override {
    return launchOn(function, grid, block, sharedBytes, nullptr, params);
  }
  Status launchOn(FunctionHandle function, Dim3 grid, Dim3 block,
                  unsigned sharedBytes, StreamHandle stream,
                  void **params) override {
    auto f = static_cast<CUfunction>(function);
    if (sharedBytes > 48 * 1024 && d.cuFuncSetAttribute)
      d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           static_cast<int>(sharedBytes));
    return check("cuLaunchKernel",
                 d.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y,
                                  block.z, sharedBytes,
                                  static_cast<CUstream>(stream), params,
                                  nullptr));
  }

  Status timedLaunch(FunctionHandle function, Dim3 grid, Dim3 block,
                     unsigned sharedBytes, void **params, float &ms) override {
    if (Status s = check("cuEventRecord", d.cuEventRecord(start, nullptr)); !s)
      return s;
    if (Status s = launch(function, grid, block, sharedBytes, params); !s)
      return s;
    if (Status s = check("cuEventRecord", d.cuEventRecord(stop, nullptr)); !s)
      return s;
    if (Status s = check("cuEventSynchronize", d.cuEventSynchronize(stop)); !s)
      return s;
    return check("cuEventElapsedTime", d.cuEventElapsedTime(&ms, start, stop));
  }

  Status synchronize() override {
    return check("cuCtxSynchronize", d.cuCtxSynchronize());
  }

  Status unloadModule(ModuleHandle module) override {
    if (!d.cuModuleUnload)
      return missing("cuModuleUnload");
    return check("cuModuleUnload",
                 d.cuModuleUnload(static_cast<CUmodule>(module)));
  }
  Status deallocate(DevicePtr ptr) override {
    if (!d.cuMemFree)
      return missing("cuMemFree_v2");
    return check("cuMemFree", d.cuMemFree(ptr));
  }
  Status fill(DevicePtr dst, uint8_t value, size_t bytes,
              StreamHandle stream) override {
    if (!d.cuMemsetD8Async)
      return missing("cuMemsetD8Async");
    return check(
        "cuMemsetD8Async",
        d.cuMemsetD8Async(dst, value, bytes, static_cast<CUstream>(stream)));
  }
  Status createEvent(EventHandle &event) override {
    return check("cuEventCreate",
                 d.cuEventCreate(reinterpret_cast<CUevent *>(&event), 0));
  }
  Status destroyEvent(EventHandle event) override {
    return check("cuEventDestroy",
                 d.cuEventDestroy(static_cast<CUevent>(event)));
  }
  Status recordEvent(EventHandle event, StreamHandle stream) override {
    return check("cuEventRecord",
                 d.cuEventRecord(static_cast<CUevent>(event),
                                 static_cast<CUstream>(stream)));
  }
  Status elapsedMs(EventHandle start, EventHandle stop, float &ms) override {
    if (Status s = check("cuEventSynchronize",
                         d.cuEventSynchronize(static_cast<CUevent>(stop)));
        !s)
      return s;
    return check("cuEventElapsedTime",
                 d.cuEventElapsedTime(&ms, static_cast<CUevent>(start),
                                      static_cast<CUevent>(stop)));
  }

private:
  std::string library;
  Driver d{};
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUevent start = nullptr, stop = nullptr;
  DeviceInfo deviceInfo;
  bool sharedContext = false;

  Status missing(const char *symbol) const {
    return Status::error(library + " has no symbol " + symbol);
  }

  bool loadDriver(std::string &message) {
    if (d.handle)
      return true;
    d.handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!d.handle) {
      const char *err = dlerror();
      message = "cannot load the CUDA driver library " + library +
                " (is the NVIDIA driver installed?): " +
                (err ? err : "unknown error");
      return false;
    }
    std::string missing;
#define FLY_BIND(name, symbol, required, ...)                                  \
  d.name = reinterpret_cast<decltype(d.name)>(dlsym(d.handle, symbol));        \
  if (required && !d.name && missing.empty())                                  \
    missing = library + " has no symbol " symbol;
    FLY_CUDA_DRIVER_API(FLY_BIND)
#undef FLY_BIND
    // cuCtxCreate_v2 where the driver has it, else the primary context.
    if (missing.empty() && !(d.cuCtxCreate && d.cuCtxDestroy) &&
        !(d.cuDevicePrimaryCtxRetain && d.cuDevicePrimaryCtxReset &&
          d.cuCtxSetCurrent))
      missing = library + " has neither cuCtxCreate_v2 nor the primary "
                          "context API";
    if (missing.empty())
      return true;
    message = "unusable CUDA driver library: " + missing;
    d.handle = nullptr; // leaked on purpose, see the destructor
    return false;
  }

  std::string describe(CUresult r) const {
    const char *name = nullptr, *text = nullptr;
    if (d.cuGetErrorName)
      d.cuGetErrorName(r, &name);
    if (d.cuGetErrorString)
      d.cuGetErrorString(r, &text);
    std::string out = name ? name : "CUDA error " + std::to_string(r);
    return text ? out + " (" + text + ")" : out;
  }
  Status fail(const std::string &what, CUresult r) const {
    return Status::error(what + ": " + describe(r), isSticky(r));
  }
  Status check(const std::string &what, CUresult r) const {
    return r == CUDA_SUCCESS ? Status::success() : fail(what, r);
  }

  bool usePrimary() const {
    return sharedContext || !(d.cuCtxCreate && d.cuCtxDestroy);
  }
  void destroyContext() {
    if (usePrimary() && d.cuDevicePrimaryCtxRelease)
      d.cuDevicePrimaryCtxRelease(device);
    // A shared primary context stays: other libraries in the process use it.
    if (usePrimary() && !sharedContext)
      d.cuDevicePrimaryCtxReset(device);
    else if (!usePrimary())
      d.cuCtxDestroy(context);
    context = nullptr;
  }
  void destroyEvents() {
    if (start)
      d.cuEventDestroy(start);
    if (stop)
      d.cuEventDestroy(stop);
    start = stop = nullptr;
  }
};

} // namespace

std::unique_ptr<Backend> createCudaBackend(std::string library) {
  return std::make_unique<CudaBackend>(std::move(library));
}

} // namespace fly::rt
