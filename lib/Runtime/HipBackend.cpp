//===- HipBackend.cpp - The HIP module API (plugin) -----------------------===//
//
// Built as libFlyRuntimeHip.so, linked against libamdhip64, and dlopen'ed by
// createHipBackend(): fly-run itself has no link-time HIP (or LLVM, which
// libamdhip64 loads through comgr) dependency.
//
//===----------------------------------------------------------------------===//

#include "fly/Runtime/Backend.h"

#include <hip/hip_runtime_api.h>

#include <string>

namespace fly::rt {
namespace {

bool isSticky(hipError_t e) {
  switch (e) {
  case hipErrorIllegalAddress:
  case hipErrorLaunchFailure:
  case hipErrorLaunchTimeOut:
  case hipErrorIllegalState:
    return true;
  default:
    return false;
  }
}

class HipBackend final : public Backend {
public:
  ~HipBackend() override { destroyEvents(); }

  const char *name() const override { return "HIP"; }

  OpenResult open(int ordinal, std::string &message) override {
    int count = 0;
    hipError_t e = hipGetDeviceCount(&count);
    if (e != hipSuccess || count == 0) {
      message = e != hipSuccess ? "hipGetDeviceCount: " + describe(e)
                                : "the HIP runtime reports 0 devices";
      return OpenResult::NoDevice;
    }
    if (ordinal < 0 || ordinal >= count) {
      message = "device " + std::to_string(ordinal) +
                " requested, but HIP "
                "reports " +
                std::to_string(count) + " device(s)";
      return OpenResult::NoDevice;
    }
    ordinal_ = ordinal;
    if ((e = hipSetDevice(ordinal)) != hipSuccess) {
      message = "hipSetDevice: " + describe(e);
      return OpenResult::Error;
    }
    hipDeviceProp_t props{};
    if ((e = hipGetDeviceProperties(&props, ordinal)) != hipSuccess) {
      message = "hipGetDeviceProperties: " + describe(e);
      return OpenResult::Error;
    }
    info_.ordinal = ordinal;
    info_.name = props.name;
    info_.arch = props.gcnArchName;
    // "gfx942:sramecc+:xnack-" -> "gfx942"
    if (size_t colon = info_.arch.find(':'); colon != std::string::npos)
      info_.arch.resize(colon);
    info_.totalMemory = props.totalGlobalMem;
    int version = 0;
    if (hipRuntimeGetVersion(&version) == hipSuccess)
      info_.runtimeVersion = "HIP runtime " + std::to_string(version);
    if (Status s = createEvents(); !s) {
      message = s.message;
      return OpenResult::Error;
    }
    return OpenResult::Ok;
  }

  DeviceInfo info() const override { return info_; }

  Status reset() override {
    destroyEvents();
    (void)hipDeviceReset();
    if (hipError_t e = hipSetDevice(ordinal_); e != hipSuccess)
      return fail("hipSetDevice", e);
    return createEvents();
  }

  Status loadModule(const std::string &image, ModuleHandle &module) override {
    hipModule_t m = nullptr;
    if (hipError_t e = hipModuleLoadData(&m, image.data()); e != hipSuccess)
      return fail("hipModuleLoadData", e);
    module = m;
    return {};
  }
  Status unloadModule(ModuleHandle module) override {
    return check("hipModuleUnload",
                 hipModuleUnload(static_cast<hipModule_t>(module)));
  }
  Status getFunction(ModuleHandle module, const std::string &name,
                     FunctionHandle &function) override {
    hipFunction_t f = nullptr;
    if (hipError_t e = hipModuleGetFunction(
            &f, static_cast<hipModule_t>(module), name.c_str());
        e != hipSuccess)
      return fail("hipModuleGetFunction('" + name + "')", e);
    function = f;
    return {};
  }
  Status getAttributes(FunctionHandle function,
                       KernelAttributes &attributes) override {
    // hipFuncGetAttributes() takes a host stub pointer; module functions are
    // asked one attribute at a time.
    auto f = static_cast<hipFunction_t>(function);
    int value = 0;
    if (hipError_t e =
            hipFuncGetAttribute(&value, HIP_FUNC_ATTRIBUTE_NUM_REGS, f);
        e != hipSuccess)
      return fail("hipFuncGetAttribute(NUM_REGS)", e);
    attributes.registers = value;
    if (hipFuncGetAttribute(&value, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f) ==
        hipSuccess)
      attributes.localBytes = value;
    if (hipFuncGetAttribute(&value, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) ==
        hipSuccess)
      attributes.sharedBytes = value;
    if (hipFuncGetAttribute(&value, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                            f) == hipSuccess)
      attributes.maxThreadsPerBlock = value;
    return {};
  }

  Status allocate(size_t bytes, DevicePtr &ptr) override {
    void *p = nullptr;
    if (hipError_t e = hipMalloc(&p, bytes); e != hipSuccess)
      return fail("hipMalloc(" + std::to_string(bytes) + " bytes)", e);
    ptr = reinterpret_cast<DevicePtr>(p);
    return {};
  }
  Status release(DevicePtr ptr) override {
    return check("hipFree", hipFree(reinterpret_cast<void *>(ptr)));
  }
  Status copyToDevice(DevicePtr dst, const void *src, size_t bytes) override {
    return check("hipMemcpyHtoD",
                 hipMemcpyHtoD(reinterpret_cast<hipDeviceptr_t>(dst),
                               const_cast<void *>(src), bytes));
  }
  Status copyToHost(void *dst, DevicePtr src, size_t bytes) override {
    return check(
        "hipMemcpyDtoH",
        hipMemcpyDtoH(dst, reinterpret_cast<hipDeviceptr_t>(src), bytes));
  }
  Status copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes) override {
    return check("hipMemcpyDtoD",
                 hipMemcpyDtoD(reinterpret_cast<hipDeviceptr_t>(dst),
                               reinterpret_cast<hipDeviceptr_t>(src), bytes));
  }

  Status launch(FunctionHandle function, Dim3 grid, Dim3 block,
                unsigned sharedBytes, void **params) override {
    return check("hipModuleLaunchKernel",
                 hipModuleLaunchKernel(static_cast<hipFunction_t>(function),
                                       grid.x, grid.y, grid.z, block.x, block.y,
                                       block.z, sharedBytes, nullptr, params,
                                       nullptr));
  }
  Status timedLaunch(FunctionHandle function, Dim3 grid, Dim3 block,
                     unsigned sharedBytes, void **params, float &ms) override {
    if (Status s = check("hipEventRecord", hipEventRecord(start_, nullptr)); !s)
      return s;
    if (Status s = launch(function, grid, block, sharedBytes, params); !s)
      return s;
    if (Status s = check("hipEventRecord", hipEventRecord(stop_, nullptr)); !s)
      return s;
    if (Status s = check("hipEventSynchronize", hipEventSynchronize(stop_)); !s)
      return s;
    return check("hipEventElapsedTime",
                 hipEventElapsedTime(&ms, start_, stop_));
  }
  Status synchronize() override {
    return check("hipDeviceSynchronize", hipDeviceSynchronize());
  }

private:
  int ordinal_ = 0;
  DeviceInfo info_;
  hipEvent_t start_ = nullptr, stop_ = nullptr;

  static std::string describe(hipError_t e) {
    return std::string(hipGetErrorName(e)) + " (" + hipGetErrorString(e) + ")";
  }
  static Status fail(const std::string &what, hipError_t e) {
    return Status::error(what + ": " + describe(e), isSticky(e));
  }
  static Status check(const std::string &what, hipError_t e) {
    return e == hipSuccess ? Status::success() : fail(what, e);
  }
  Status createEvents() {
    if (hipError_t e = hipEventCreate(&start_); e != hipSuccess)
      return fail("hipEventCreate", e);
    if (hipError_t e = hipEventCreate(&stop_); e != hipSuccess)
      return fail("hipEventCreate", e);
    return {};
  }
  void destroyEvents() {
    if (start_)
      (void)hipEventDestroy(start_);
    if (stop_)
      (void)hipEventDestroy(stop_);
    start_ = stop_ = nullptr;
  }
};

} // namespace
} // namespace fly::rt

extern "C" __attribute__((visibility("default"))) fly::rt::Backend *
flyRuntimeCreateHipBackend() {
  return new fly::rt::HipBackend();
}
