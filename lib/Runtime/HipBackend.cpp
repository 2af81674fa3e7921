//===- HipBackend.cpp - The HIP module API (plugin) -----------------------===//
//
// Built as libFlyRuntimeHip.so, linked against libamdhip64, and dlopen'ed by
// createHipBackend(): fly-run itself has no link-time HIP (or LLVM, which
// libamdhip64 loads through comgr) dependency. The sweep, the spec and its
// checks are the same as for CUDA; this path has not run on an AMD GPU.
//
//===----------------------------------------------------------------------===//

#include "fly/Runtime/Backend.h"

#include <hip/hip_runtime_api.h>

#include <string>

namespace fly::rt {
namespace {

class HipBackend final : public Backend {
public:
  ~HipBackend() override { destroyEvents(); }

  const char *name() const override { return "HIP"; }

  void shareProcessContext() override { sharedContext = true; }

  OpenResult open(int ordinal, std::string &message) override {
    int count = 0;
    if (hipError_t e = hipGetDeviceCount(&count); e != hipSuccess || !count) {
      message = e != hipSuccess ? "hipGetDeviceCount: " + describe(e)
                                : "the HIP runtime reports 0 devices";
      return OpenResult::NoDevice;
    }
    if (ordinal < 0 || ordinal >= count) {
      message = "device " + std::to_string(ordinal) +
                " requested, but HIP reports " + std::to_string(count) +
                " device(s)";
      return OpenResult::NoDevice;
    }
    this->ordinal = ordinal;
    hipDeviceProp_t props{};
    Status s = check("hipGetDeviceProperties",
                     hipGetDeviceProperties(&props, ordinal));
    if (s)
      s = reset();
    message = s.message;
    deviceInfo.ordinal = ordinal;
    deviceInfo.name = props.name;
    // "gfx942:sramecc+:xnack-" -> "gfx942"
    deviceInfo.arch = std::string(props.gcnArchName)
                          .substr(0, std::string(props.gcnArchName).find(':'));
    deviceInfo.totalMemory = props.totalGlobalMem;
    int version = 0;
    if (hipRuntimeGetVersion(&version) == hipSuccess)
      deviceInfo.runtimeVersion = "HIP runtime " + std::to_string(version);
    return s ? OpenResult::Ok : OpenResult::Error;
  }

  DeviceInfo info() const override { return deviceInfo; }

  Status reset() override {
    destroyEvents();
    // The device's state belongs to every HIP user in a shared process.
    if (!sharedContext)
      (void)hipDeviceReset();
    if (Status s = check("hipSetDevice", hipSetDevice(ordinal)); !s)
      return s;
    if (Status s = check("hipEventCreate", hipEventCreate(&start)); !s)
      return s;
    return check("hipEventCreate", hipEventCreate(&stop));
  }

  Status loadModule(const std::string &image, ModuleHandle &module) override {
    return check("hipModuleLoadData",
                 hipModuleLoadData(reinterpret_cast<hipModule_t *>(&module),
                                   image.data()));
  }
  Status getFunction(ModuleHandle module, const std::string &name,
                     FunctionHandle &function) override {
    return check(
        "hipModuleGetFunction('" + name + "')",
        hipModuleGetFunction(reinterpret_cast<hipFunction_t *>(&function),
                             static_cast<hipModule_t>(module), name.c_str()));
  }
  Status getAttributes(FunctionHandle function,
                       KernelAttributes &attributes) override {
    // hipFuncGetAttributes() takes a host stub pointer; module functions are
    // asked one attribute at a time. Only the register count is required.
    auto f = static_cast<hipFunction_t>(function);
    int regs = 0, local = -1, shared = -1, threads = -1;
    if (hipError_t e =
            hipFuncGetAttribute(&regs, HIP_FUNC_ATTRIBUTE_NUM_REGS, f))
      return fail("hipFuncGetAttribute(NUM_REGS)", e);
    (void)hipFuncGetAttribute(&local, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
    (void)hipFuncGetAttribute(&shared, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    (void)hipFuncGetAttribute(&threads,
                              HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
    attributes = {regs, local, shared, threads};
    return {};
  }

  Status allocate(size_t bytes, DevicePtr &ptr) override {
    return check("hipMalloc(" + std::to_string(bytes) + " bytes)",
                 hipMalloc(reinterpret_cast<void **>(&ptr), bytes));
  }
  Status copyToDevice(DevicePtr dst, const void *src, size_t bytes) override {
    return check("hipMemcpyHtoD",
                 hipMemcpyHtoD(device(dst), const_cast<void *>(src), bytes));
  }
  Status copyToHost(void *dst, DevicePtr src, size_t bytes) override {
    return check("hipMemcpyDtoH", hipMemcpyDtoH(dst, device(src), bytes));
  }
  Status copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes) override {
    return check("hipMemcpyDtoD",
                 hipMemcpyDtoD(device(dst), device(src), bytes));
  }

  Status launch(FunctionHandle function, Dim3 grid, Dim3 block,
                unsigned sharedBytes, void **params) override {
    return launchOn(function, grid, block, sharedBytes, nullptr, params);
  }
  Status launchOn(FunctionHandle function, Dim3 grid, Dim3 block,
                  unsigned sharedBytes, StreamHandle stream,
                  void **params) override {
    return check("hipModuleLaunchKernel",
                 hipModuleLaunchKernel(
                     static_cast<hipFunction_t>(function), grid.x, grid.y,
                     grid.z, block.x, block.y, block.z, sharedBytes,
                     static_cast<hipStream_t>(stream), params, nullptr));
  }
  Status timedLaunch(FunctionHandle function, Dim3 grid, Dim3 block,
                     unsigned sharedBytes, void **params, float &ms) override {
    if (Status s = check("hipEventRecord", hipEventRecord(start, nullptr)); !s)
      return s;
    if (Status s = launch(function, grid, block, sharedBytes, params); !s)
      return s;
    if (Status s = check("hipEventRecord", hipEventRecord(stop, nullptr)); !s)
      return s;
    if (Status s = check("hipEventSynchronize", hipEventSynchronize(stop)); !s)
      return s;
    return check("hipEventElapsedTime", hipEventElapsedTime(&ms, start, stop));
  }
  Status synchronize() override {
    return check("hipDeviceSynchronize", hipDeviceSynchronize());
  }

  Status unloadModule(ModuleHandle module) override {
    return check("hipModuleUnload",
                 hipModuleUnload(static_cast<hipModule_t>(module)));
  }
  Status deallocate(DevicePtr ptr) override {
    return check("hipFree", hipFree(reinterpret_cast<void *>(ptr)));
  }
  Status fill(DevicePtr dst, uint8_t value, size_t bytes,
              StreamHandle stream) override {
    return check("hipMemsetD8Async",
                 hipMemsetD8Async(device(dst), value, bytes,
                                  static_cast<hipStream_t>(stream)));
  }
  Status createEvent(EventHandle &event) override {
    return check("hipEventCreate",
                 hipEventCreate(reinterpret_cast<hipEvent_t *>(&event)));
  }
  Status destroyEvent(EventHandle event) override {
    return check("hipEventDestroy",
                 hipEventDestroy(static_cast<hipEvent_t>(event)));
  }
  Status recordEvent(EventHandle event, StreamHandle stream) override {
    return check("hipEventRecord",
                 hipEventRecord(static_cast<hipEvent_t>(event),
                                static_cast<hipStream_t>(stream)));
  }
  Status elapsedMs(EventHandle start, EventHandle stop, float &ms) override {
    if (Status s = check("hipEventSynchronize",
                         hipEventSynchronize(static_cast<hipEvent_t>(stop)));
        !s)
      return s;
    return check("hipEventElapsedTime",
                 hipEventElapsedTime(&ms, static_cast<hipEvent_t>(start),
                                     static_cast<hipEvent_t>(stop)));
  }

private:
  int ordinal = 0;
  bool sharedContext = false;
  DeviceInfo deviceInfo;
  hipEvent_t start = nullptr, stop = nullptr;

  static hipDeviceptr_t device(DevicePtr p) {
    return reinterpret_cast<hipDeviceptr_t>(p);
  }
  static Status fail(const std::string &what, hipError_t e) {
    // Errors after which the context cannot be used any more.
    bool sticky = e == hipErrorIllegalAddress || e == hipErrorLaunchFailure ||
                  e == hipErrorLaunchTimeOut || e == hipErrorIllegalState;
    return Status::error(what + ": " + describe(e), sticky);
  }
  static std::string describe(hipError_t e) {
    return std::string(hipGetErrorName(e)) + " (" + hipGetErrorString(e) + ")";
  }
  static Status check(const std::string &what, hipError_t e) {
    return e == hipSuccess ? Status::success() : fail(what, e);
  }
  void destroyEvents() {
    if (start)
      (void)hipEventDestroy(start);
    if (stop)
      (void)hipEventDestroy(stop);
    start = stop = nullptr;
  }
};

} // namespace
} // namespace fly::rt

extern "C" __attribute__((visibility("default"))) fly::rt::Backend *
flyRuntimeCreateHipBackend() {
  return new fly::rt::HipBackend();
}
