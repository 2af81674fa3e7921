/*===- fly-c/FlyRuntime.h - Load, launch and time GPU objects -----*- C -*-===*\
|*                                                                            *|
|* A C interface to fly-run's device backends (CUDA driver API, HIP) in the   *|
|* style of the MLIR C API, for timing compiled variants from a DSL's own     *|
|* process on its own buffers. libFlyRuntimeCAPI.so links no MLIR or LLVM     *|
|* and dlopens libcuda.so.1 ($FLY_LIBCUDA) or the HIP plugin                  *|
|* ($FLY_HIP_BACKEND, else libFlyRuntimeHip.so beside this library), so it    *|
|* loads in any process beside torch or cupy.                                 *|
|*                                                                            *|
|* A device uses the GPU's primary context, the one torch and cupy use: their *|
|* device pointers and streams are valid arguments. flyRtDeviceOpen makes it  *|
|* current on the calling thread; call from that thread or one where another  *|
|* library made the context current.                                          *|
|*                                                                            *|
|* Conventions, those of fly-c/FlySnapshot.h. Errors: a call that can fail    *|
|* returns false or a null handle, and flyRtGetLastError() of the same thread *|
|* says why (each such call sets or clears it); flyRtDeviceOpen's status says *|
|* besides what was missing. A null handle, or NULL where a call needs a      *|
|* pointer, is such a failure ("null device"), never a crash. Strings:        *|
|* arguments are read during the call only; a string handed out is owned by   *|
|* its object, valid until that is destroyed (flyRtDeviceGetInfoJSON), or is  *|
|* the last error, valid until the next call on the same thread.              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FLY_C_FLYRUNTIME_H
#define FLY_C_FLYRUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define FLY_RT_EXPORTED __declspec(dllexport)
#else
#define FLY_RT_EXPORTED __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** One GPU, opened through one backend. */
typedef struct FlyRtDevice {
  void *ptr;
} FlyRtDevice;

/** A loaded object (cubin, PTX, HSA code object). */
typedef struct FlyRtModule {
  void *ptr;
} FlyRtModule;

/** A kernel of a module; lives until its module is unloaded. */
typedef struct FlyRtFunction {
  void *ptr;
} FlyRtFunction;

typedef struct FlyRtEvent {
  void *ptr;
} FlyRtEvent;

/** What flyRtDeviceOpen found. */
typedef enum FlyRtOpenStatus {
  FlyRtOpenOk = 0,
  FlyRtOpenNoRuntime = 1, /**< no driver / runtime library */
  FlyRtOpenNoDevice = 2,  /**< the runtime reports no usable device */
  FlyRtOpenError = 3,     /**< a device is there but could not be opened */
} FlyRtOpenStatus;

/** Why the last call on this thread that can fail failed ("" after one that
 *  succeeded); valid until the next call on this thread. */
FLY_RT_EXPORTED const char *flyRtGetLastError(void);

/** Opens device `ordinal` of `backend` ("cuda" or "hip"). On failure the
 *  device is null and `*status` (if not NULL) says what was missing. */
FLY_RT_EXPORTED FlyRtDevice flyRtDeviceOpen(const char *backend, int ordinal,
                                            FlyRtOpenStatus *status);
FLY_RT_EXPORTED void flyRtDeviceDestroy(FlyRtDevice device);
/** {"backend", "name", "arch", "total_memory", "runtime_version",
 *  "ordinal"} as JSON; lives as long as the device. NULL for a null
 *  device. */
FLY_RT_EXPORTED const char *flyRtDeviceGetInfoJSON(FlyRtDevice device);
/** Waits for all work on the device. */
FLY_RT_EXPORTED bool flyRtDeviceSynchronize(FlyRtDevice device);

/** Loads `size` bytes of an object. */
FLY_RT_EXPORTED FlyRtModule flyRtModuleLoad(FlyRtDevice device,
                                            const void *data, size_t size);
FLY_RT_EXPORTED void flyRtModuleUnload(FlyRtModule module);
FLY_RT_EXPORTED FlyRtFunction flyRtModuleGetFunction(FlyRtModule module,
                                                     const char *name);
/** Registers per thread, local (spill) bytes per thread, static shared
 *  bytes, max threads per block (-1 where the backend does not say). */
FLY_RT_EXPORTED bool flyRtFunctionGetAttributes(FlyRtFunction function,
                                                int *registers,
                                                int64_t *localBytes,
                                                int64_t *sharedBytes,
                                                int *maxThreadsPerBlock);

/** Launches `function` on `stream` (NULL: the default stream). Kernel
 *  parameter i is the bytes at `argBuffer + argOffsets[i]`. */
FLY_RT_EXPORTED bool flyRtLaunch(FlyRtFunction function, const unsigned grid[3],
                                 const unsigned block[3], unsigned sharedBytes,
                                 void *stream, const void *argBuffer,
                                 const size_t *argOffsets, size_t numArgs);

FLY_RT_EXPORTED bool flyRtAlloc(FlyRtDevice device, size_t bytes,
                                uint64_t *ptr);
FLY_RT_EXPORTED bool flyRtFree(FlyRtDevice device, uint64_t ptr);
FLY_RT_EXPORTED bool flyRtCopyToDevice(FlyRtDevice device, uint64_t dst,
                                       const void *src, size_t bytes);
FLY_RT_EXPORTED bool flyRtCopyToHost(FlyRtDevice device, void *dst,
                                     uint64_t src, size_t bytes);
FLY_RT_EXPORTED bool flyRtCopyOnDevice(FlyRtDevice device, uint64_t dst,
                                       uint64_t src, size_t bytes);
/** Sets `bytes` bytes at `dst` to `value`, ordered on `stream`. */
FLY_RT_EXPORTED bool flyRtMemset(FlyRtDevice device, uint64_t dst,
                                 uint8_t value, size_t bytes, void *stream);

FLY_RT_EXPORTED FlyRtEvent flyRtEventCreate(FlyRtDevice device);
FLY_RT_EXPORTED void flyRtEventDestroy(FlyRtEvent event);
FLY_RT_EXPORTED bool flyRtEventRecord(FlyRtEvent event, void *stream);
/** Waits for `stop`; the milliseconds from `start` to `stop`. */
FLY_RT_EXPORTED bool flyRtEventElapsedMs(FlyRtEvent start, FlyRtEvent stop,
                                         float *ms);

#ifdef __cplusplus
}
#endif

#endif /* FLY_C_FLYRUNTIME_H */
