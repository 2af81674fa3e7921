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

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_INSUFFICIENT_DRIVER = 35;
constexpr CUresult CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804;
constexpr CUresult CUDA_ERROR_SYSTEM_NOT_READY = 802;

constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

/// Errors after which the context cannot be used any more.
bool isSticky(CUresult r) {
  switch (r) {
  case 214: // CUDA_ERROR_ECC_UNCORRECTABLE
  case 700: // CUDA_ERROR_ILLEGAL_ADDRESS
  case 702: // CUDA_ERROR_LAUNCH_TIMEOUT
  case 714: // CUDA_ERROR_HARDWARE_STACK_ERROR
  case 715: // CUDA_ERROR_ILLEGAL_INSTRUCTION
  case 716: // CUDA_ERROR_MISALIGNED_ADDRESS
  case 717: // CUDA_ERROR_INVALID_ADDRESS_SPACE
  case 718: // CUDA_ERROR_INVALID_PC
  case 719: // CUDA_ERROR_LAUNCH_FAILED
    return true;
  default:
    return false;
  }
}

struct Driver {
  void *handle = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
  CUresult (*cuCtxCreate)(CUcontext *, unsigned, CUdevice);
  CUresult (*cuCtxDestroy)(CUcontext);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuDevicePrimaryCtxReset)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuGetErrorName)(CUresult, const char **);
};

class CudaBackend final : public Backend {
public:
  explicit CudaBackend(std::string library) : library_(std::move(library)) {
    if (library_.empty()) {
      const char *env = std::getenv("FLY_LIBCUDA");
      library_ = env && *env ? env : "libcuda.so.1";
    }
  }
  ~CudaBackend() override {
    if (d_.handle && context_) {
      destroyEvents();
      destroyContext();
    }
    // libcuda is never dlclose'd: its threads may outlive this object.
  }

  const char *name() const override { return "CUDA"; }

  OpenResult open(int ordinal, std::string &message) override {
    if (!loadDriver(message))
      return OpenResult::NoRuntime;
    CUresult r = d_.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_INVALID_DEVICE ||
        r == CUDA_ERROR_SYSTEM_NOT_READY ||
        r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
      message = "cuInit: " + describe(r);
      return OpenResult::NoDevice;
    }
    if (r == CUDA_ERROR_INSUFFICIENT_DRIVER ||
        r == CUDA_ERROR_NOT_INITIALIZED) {
      message = "cuInit: " + describe(r);
      return OpenResult::NoRuntime;
    }
    if (r != CUDA_SUCCESS) {
      message = "cuInit: " + describe(r);
      return OpenResult::NoDevice;
    }
    int count = 0;
    if ((r = d_.cuDeviceGetCount(&count)) != CUDA_SUCCESS || count == 0) {
      message = r != CUDA_SUCCESS ? "cuDeviceGetCount: " + describe(r)
                                  : "the driver reports 0 devices";
      return OpenResult::NoDevice;
    }
    if (ordinal < 0 || ordinal >= count) {
      message = "device " + std::to_string(ordinal) +
                " requested, but the "
                "driver reports " +
                std::to_string(count) + " device(s)";
      return OpenResult::NoDevice;
    }
    if ((r = d_.cuDeviceGet(&device_, ordinal)) != CUDA_SUCCESS) {
      message = "cuDeviceGet: " + describe(r);
      return OpenResult::NoDevice;
    }
    info_.ordinal = ordinal;
    char name[256] = {0};
    if (d_.cuDeviceGetName(name, sizeof name - 1, device_) == CUDA_SUCCESS)
      info_.name = name;
    int major = 0, minor = 0;
    d_.cuDeviceGetAttribute(
        &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_);
    d_.cuDeviceGetAttribute(
        &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_);
    info_.arch = "sm_" + std::to_string(major) + std::to_string(minor);
    if (d_.cuDeviceTotalMem)
      d_.cuDeviceTotalMem(&info_.totalMemory, device_);
    int version = 0;
    if (d_.cuDriverGetVersion &&
        d_.cuDriverGetVersion(&version) == CUDA_SUCCESS)
      info_.runtimeVersion = "CUDA driver API " +
                             std::to_string(version / 1000) + "." +
                             std::to_string(version % 1000 / 10);
    if (Status s = createContext(); !s) {
      message = s.message;
      return OpenResult::Error;
    }
    if (Status s = createEvents(); !s) {
      message = s.message;
      return OpenResult::Error;
    }
    return OpenResult::Ok;
  }

  DeviceInfo info() const override { return info_; }

  Status reset() override {
    if (context_) {
      destroyEvents();
      destroyContext(); // may report the old fault again; ignore
    }
    if (Status s = createContext(); !s)
      return s;
    return createEvents();
  }

  Status loadModule(const std::string &image, ModuleHandle &module) override {
    CUmodule m = nullptr;
    // A PTX image must be NUL-terminated; std::string's buffer is.
    if (CUresult r = d_.cuModuleLoadData(&m, image.c_str()); r != CUDA_SUCCESS)
      return fail("cuModuleLoadData", r);
    module = m;
    return {};
  }
  Status unloadModule(ModuleHandle module) override {
    return check("cuModuleUnload",
                 d_.cuModuleUnload(static_cast<CUmodule>(module)));
  }
  Status getFunction(ModuleHandle module, const std::string &name,
                     FunctionHandle &function) override {
    CUfunction f = nullptr;
    if (CUresult r = d_.cuModuleGetFunction(&f, static_cast<CUmodule>(module),
                                            name.c_str());
        r != CUDA_SUCCESS)
      return fail("cuModuleGetFunction('" + name + "')", r);
    function = f;
    return {};
  }
  Status getAttributes(FunctionHandle function,
                       KernelAttributes &attributes) override {
    auto f = static_cast<CUfunction>(function);
    int value = 0;
    if (CUresult r =
            d_.cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
        r != CUDA_SUCCESS)
      return fail("cuFuncGetAttribute(NUM_REGS)", r);
    attributes.registers = value;
    if (CUresult r = d_.cuFuncGetAttribute(
            &value, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
        r != CUDA_SUCCESS)
      return fail("cuFuncGetAttribute(LOCAL_SIZE_BYTES)", r);
    attributes.localBytes = value;
    if (CUresult r = d_.cuFuncGetAttribute(
            &value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
        r != CUDA_SUCCESS)
      return fail("cuFuncGetAttribute(SHARED_SIZE_BYTES)", r);
    attributes.sharedBytes = value;
    if (d_.cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                              f) == CUDA_SUCCESS)
      attributes.maxThreadsPerBlock = value;
    return {};
  }

  Status allocate(size_t bytes, DevicePtr &ptr) override {
    CUdeviceptr p = 0;
    if (CUresult r = d_.cuMemAlloc(&p, bytes); r != CUDA_SUCCESS)
      return fail("cuMemAlloc(" + std::to_string(bytes) + " bytes)", r);
    ptr = p;
    return {};
  }
  Status release(DevicePtr ptr) override {
    return check("cuMemFree", d_.cuMemFree(ptr));
  }
  Status copyToDevice(DevicePtr dst, const void *src, size_t bytes) override {
    return check("cuMemcpyHtoD", d_.cuMemcpyHtoD(dst, src, bytes));
  }
  Status copyToHost(void *dst, DevicePtr src, size_t bytes) override {
    return check("cuMemcpyDtoH", d_.cuMemcpyDtoH(dst, src, bytes));
  }
  Status copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes) override {
    return check("cuMemcpyDtoD", d_.cuMemcpyDtoD(dst, src, bytes));
  }

  Status launch(FunctionHandle function, Dim3 grid, Dim3 block,
                unsigned sharedBytes, void **params) override {
    auto f = static_cast<CUfunction>(function);
    if (sharedBytes > 48 * 1024 && d_.cuFuncSetAttribute)
      d_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            static_cast<int>(sharedBytes));
    return check("cuLaunchKernel",
                 d_.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y,
                                   block.z, sharedBytes, nullptr, params,
                                   nullptr));
  }

  Status timedLaunch(FunctionHandle function, Dim3 grid, Dim3 block,
                     unsigned sharedBytes, void **params, float &ms) override {
    if (Status s = check("cuEventRecord", d_.cuEventRecord(start_, nullptr));
        !s)
      return s;
    if (Status s = launch(function, grid, block, sharedBytes, params); !s)
      return s;
    if (Status s = check("cuEventRecord", d_.cuEventRecord(stop_, nullptr)); !s)
      return s;
    if (Status s = check("cuEventSynchronize", d_.cuEventSynchronize(stop_));
        !s)
      return s;
    return check("cuEventElapsedTime",
                 d_.cuEventElapsedTime(&ms, start_, stop_));
  }

  Status synchronize() override {
    return check("cuCtxSynchronize", d_.cuCtxSynchronize());
  }

private:
  std::string library_;
  Driver d_{};
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  DeviceInfo info_;

  template <typename T>
  bool bind(T &slot, const char *symbol, bool required, std::string &message) {
    slot = reinterpret_cast<T>(dlsym(d_.handle, symbol));
    if (!slot && required && message.empty())
      message = library_ + " has no symbol " + symbol;
    return slot || !required;
  }

  bool loadDriver(std::string &message) {
    if (d_.handle)
      return true;
    void *handle = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *err = dlerror();
      message = "cannot load the CUDA driver library " + library_ +
                " (is the NVIDIA driver installed?): " +
                (err ? err : "unknown error");
      return false;
    }
    d_.handle = handle;
    std::string missing;
    bool ok = true;
    ok &= bind(d_.cuInit, "cuInit", true, missing);
    ok &= bind(d_.cuDriverGetVersion, "cuDriverGetVersion", false, missing);
    ok &= bind(d_.cuDeviceGetCount, "cuDeviceGetCount", true, missing);
    ok &= bind(d_.cuDeviceGet, "cuDeviceGet", true, missing);
    ok &= bind(d_.cuDeviceGetName, "cuDeviceGetName", true, missing);
    ok &= bind(d_.cuDeviceGetAttribute, "cuDeviceGetAttribute", true, missing);
    ok &= bind(d_.cuDeviceTotalMem, "cuDeviceTotalMem_v2", false, missing);
    // cuCtxCreate_v2 where the driver has it, else the primary context.
    bind(d_.cuCtxCreate, "cuCtxCreate_v2", false, missing);
    bind(d_.cuCtxDestroy, "cuCtxDestroy_v2", false, missing);
    bind(d_.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", false,
         missing);
    bind(d_.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", false,
         missing);
    bind(d_.cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", false,
         missing);
    bind(d_.cuCtxSetCurrent, "cuCtxSetCurrent", false, missing);
    if (!(d_.cuCtxCreate && d_.cuCtxDestroy) &&
        !(d_.cuDevicePrimaryCtxRetain && d_.cuDevicePrimaryCtxReset &&
          d_.cuCtxSetCurrent)) {
      ok = false;
      missing = library_ + " has neither cuCtxCreate_v2 nor the primary "
                           "context API";
    }
    ok &= bind(d_.cuCtxSynchronize, "cuCtxSynchronize", true, missing);
    ok &= bind(d_.cuModuleLoadData, "cuModuleLoadData", true, missing);
    ok &= bind(d_.cuModuleUnload, "cuModuleUnload", true, missing);
    ok &= bind(d_.cuModuleGetFunction, "cuModuleGetFunction", true, missing);
    ok &= bind(d_.cuFuncGetAttribute, "cuFuncGetAttribute", true, missing);
    ok &= bind(d_.cuFuncSetAttribute, "cuFuncSetAttribute", false, missing);
    ok &= bind(d_.cuMemAlloc, "cuMemAlloc_v2", true, missing);
    ok &= bind(d_.cuMemFree, "cuMemFree_v2", true, missing);
    ok &= bind(d_.cuMemcpyHtoD, "cuMemcpyHtoD_v2", true, missing);
    ok &= bind(d_.cuMemcpyDtoH, "cuMemcpyDtoH_v2", true, missing);
    ok &= bind(d_.cuMemcpyDtoD, "cuMemcpyDtoD_v2", true, missing);
    ok &= bind(d_.cuLaunchKernel, "cuLaunchKernel", true, missing);
    ok &= bind(d_.cuEventCreate, "cuEventCreate", true, missing);
    ok &= bind(d_.cuEventDestroy, "cuEventDestroy_v2", true, missing);
    ok &= bind(d_.cuEventRecord, "cuEventRecord", true, missing);
    ok &= bind(d_.cuEventSynchronize, "cuEventSynchronize", true, missing);
    ok &= bind(d_.cuEventElapsedTime, "cuEventElapsedTime", true, missing);
    ok &= bind(d_.cuGetErrorString, "cuGetErrorString", false, missing);
    ok &= bind(d_.cuGetErrorName, "cuGetErrorName", false, missing);
    if (!ok) {
      message = "unusable CUDA driver library: " + missing;
      d_.handle = nullptr; // leaked on purpose, see the destructor
      return false;
    }
    return true;
  }

  std::string describe(CUresult r) const {
    const char *name = nullptr, *text = nullptr;
    if (d_.cuGetErrorName)
      d_.cuGetErrorName(r, &name);
    if (d_.cuGetErrorString)
      d_.cuGetErrorString(r, &text);
    std::string out = name ? name : "CUDA error " + std::to_string(r);
    if (text)
      out += std::string(" (") + text + ")";
    return out;
  }
  Status fail(const std::string &what, CUresult r) const {
    return Status::error(what + ": " + describe(r), isSticky(r));
  }
  Status check(const std::string &what, CUresult r) const {
    return r == CUDA_SUCCESS ? Status::success() : fail(what, r);
  }

  bool usePrimary() const { return !(d_.cuCtxCreate && d_.cuCtxDestroy); }
  Status createContext() {
    CUresult r;
    if (usePrimary()) {
      if ((r = d_.cuDevicePrimaryCtxRetain(&context_, device_)) !=
              CUDA_SUCCESS ||
          (r = d_.cuCtxSetCurrent(context_)) != CUDA_SUCCESS) {
        context_ = nullptr;
        return fail("cuDevicePrimaryCtxRetain", r);
      }
      return {};
    }
    if ((r = d_.cuCtxCreate(&context_, 0, device_)) != CUDA_SUCCESS) {
      context_ = nullptr;
      return fail("cuCtxCreate", r);
    }
    return {};
  }
  void destroyContext() {
    if (usePrimary()) {
      if (d_.cuDevicePrimaryCtxRelease)
        d_.cuDevicePrimaryCtxRelease(device_);
      d_.cuDevicePrimaryCtxReset(device_);
    } else {
      d_.cuCtxDestroy(context_);
    }
    context_ = nullptr;
  }

  Status createEvents() {
    if (CUresult r = d_.cuEventCreate(&start_, 0); r != CUDA_SUCCESS)
      return fail("cuEventCreate", r);
    if (CUresult r = d_.cuEventCreate(&stop_, 0); r != CUDA_SUCCESS)
      return fail("cuEventCreate", r);
    return {};
  }
  void destroyEvents() {
    if (start_)
      d_.cuEventDestroy(start_);
    if (stop_)
      d_.cuEventDestroy(stop_);
    start_ = stop_ = nullptr;
  }
};

} // namespace

std::unique_ptr<Backend> createCudaBackend(std::string library) {
  return std::make_unique<CudaBackend>(std::move(library));
}

} // namespace fly::rt
