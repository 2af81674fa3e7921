//===- Backend.h - Load, launch and time GPU kernels ------------*- C++ -*-===//
//
// One interface, two backends: CUDA (the driver API, dlopen'ed from
// libcuda.so.1) and HIP (the plugin libFlyRuntimeHip.so, itself dlopen'ed),
// so fly-run starts on machines without either. Plain C++, header-only: the
// plugin implements it without linking LLVM or the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_BACKEND_H
#define FLY_RUNTIME_BACKEND_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace fly::rt {

/// Success, or what went wrong. `fault` marks a "sticky" error (illegal
/// address, launch failure, ...) that poisons the whole process: runSweep()
/// only touches the device in worker processes. Plain C++, not llvm::Error:
/// the HIP plugin implements this interface without linking LLVM.
struct Status {
  bool ok = true, fault = false;
  std::string message;
  static Status success() { return {}; }
  static Status error(std::string message, bool fault = false) {
    return {false, fault, std::move(message)};
  }
  explicit operator bool() const { return ok; }
};

/// What open() found.
enum class OpenResult {
  Ok,
  NoRuntime, ///< the driver / runtime library is not installed
  NoDevice,  ///< the runtime is there but reports no usable device
  Error,     ///< a device is there but could not be opened
};

/// "NVIDIA H200", "sm_90" (or "gfx942"), bytes, "CUDA driver API 13.0".
struct DeviceInfo {
  int ordinal = 0;
  std::string name, arch;
  size_t totalMemory = 0;
  std::string runtimeVersion;
};

struct KernelAttributes {
  int registers = -1;       ///< per thread (VGPRs on AMD)
  int64_t localBytes = -1;  ///< per-thread local (spill) memory / scratch
  int64_t sharedBytes = -1; ///< static shared memory
  int maxThreadsPerBlock = -1;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

using DevicePtr = uint64_t;
using ModuleHandle = void *;
using FunctionHandle = void *;
/// A CUstream / hipStream_t; null is the default stream.
using StreamHandle = void *;
using EventHandle = void *;

class Backend {
public:
  virtual ~Backend() = default;
  /// "CUDA" or "HIP".
  virtual const char *name() const = 0;

  /// Called before open(): use the device's primary context, the one other
  /// GPU users in the process (torch, cupy) share, so their buffers and
  /// streams are valid here; never reset or destroy it.
  virtual void shareProcessContext() = 0;

  /// Finds the runtime, initialises it and makes device `ordinal` current.
  /// Never aborts: every failure is an OpenResult plus `message`.
  virtual OpenResult open(int ordinal, std::string &message) = 0;
  virtual DeviceInfo info() const = 0;
  /// Throws the context away and makes a fresh one. Every module, function
  /// and buffer of the old context is gone. It does not help after a sticky
  /// fault (see Status::fault): only a new process does.
  virtual Status reset() = 0;

  /// Modules and buffers live until the (worker) process ends.
  virtual Status loadModule(const std::string &image, ModuleHandle &module) = 0;
  virtual Status getFunction(ModuleHandle module, const std::string &name,
                             FunctionHandle &function) = 0;
  virtual Status getAttributes(FunctionHandle function,
                               KernelAttributes &attributes) = 0;

  virtual Status allocate(size_t bytes, DevicePtr &ptr) = 0;
  virtual Status copyToDevice(DevicePtr dst, const void *src, size_t bytes) = 0;
  virtual Status copyToHost(void *dst, DevicePtr src, size_t bytes) = 0;
  virtual Status copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes) = 0;

  /// `params[i]` points at the value of kernel parameter i.
  virtual Status launch(FunctionHandle function, Dim3 grid, Dim3 block,
                        unsigned sharedBytes, void **params) = 0;
  /// launch() between two events on the same stream; waits for the stop
  /// event and returns the elapsed time between them in `ms`.
  virtual Status timedLaunch(FunctionHandle function, Dim3 grid, Dim3 block,
                             unsigned sharedBytes, void **params,
                             float &ms) = 0;
  virtual Status synchronize() = 0;

  // Stream-ordered calls for callers that time their own launches (the
  // runtime C API). `stream` may belong to another library in the process.
  virtual Status unloadModule(ModuleHandle module) = 0;
  virtual Status deallocate(DevicePtr ptr) = 0;
  /// Sets `bytes` bytes at `dst` to `value`, ordered on `stream`.
  virtual Status fill(DevicePtr dst, uint8_t value, size_t bytes,
                      StreamHandle stream) = 0;
  virtual Status launchOn(FunctionHandle function, Dim3 grid, Dim3 block,
                          unsigned sharedBytes, StreamHandle stream,
                          void **params) = 0;
  virtual Status createEvent(EventHandle &event) = 0;
  virtual Status destroyEvent(EventHandle event) = 0;
  virtual Status recordEvent(EventHandle event, StreamHandle stream) = 0;
  /// Waits for `stop` and returns the time from `start` to it in `ms`.
  virtual Status elapsedMs(EventHandle start, EventHandle stop, float &ms) = 0;
};

/// The CUDA driver backend. `library` overrides where libcuda comes from
/// (default: $FLY_LIBCUDA, else "libcuda.so.1").
std::unique_ptr<Backend> createCudaBackend(std::string library = "");

/// The HIP backend, loaded from the plugin `plugin` (default:
/// $FLY_HIP_BACKEND, else libFlyRuntimeHip.so next to the executable or in
/// ../lib). Null with `why` set when the plugin or libamdhip64 is missing.
std::unique_ptr<Backend> createHipBackend(std::string &why,
                                          std::string plugin = "");

/// The symbol the HIP plugin exports.
#define FLY_RUNTIME_HIP_ENTRY "flyRuntimeCreateHipBackend"
using CreateBackendFn = Backend *(*)();

} // namespace fly::rt

#endif // FLY_RUNTIME_BACKEND_H
