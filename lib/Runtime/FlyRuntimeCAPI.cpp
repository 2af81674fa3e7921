//===- FlyRuntimeCAPI.cpp - The runtime C API (fly-c/FlyRuntime.h) --------===//
//
// A thin C layer over fly::rt::Backend. Built as libFlyRuntimeCAPI.so from
// this file and CudaBackend.cpp only: no LLVM, no MLIR, so Python loads it
// beside torch without a second LLVM in the process.
//
//===----------------------------------------------------------------------===//

#include "fly-c/FlyRuntime.h"

#include "Location/CodeFile.h"
#include "Runtime/HipLoader.h"
#include "fly/Runtime/Backend.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace fly::rt;

namespace {

thread_local std::string lastError;

bool fail(std::string message) {
  lastError = std::move(message);
  return false;
}
/// The one error channel (fly-c/FlyRuntime.h): a call that succeeds clears
/// the last error, one that fails sets it.
bool check(const Status &s) {
  if (!s)
    return fail(s.message);
  lastError.clear();
  return true;
}

struct Device {
  std::unique_ptr<Backend> backend;
  std::string infoJSON;
};
struct Function {
  Backend *backend;
  FunctionHandle handle;
};
/// Owns the functions taken from it: they die with the module.
struct Module {
  Backend *backend;
  ModuleHandle handle;
  std::vector<std::unique_ptr<Function>> functions;
};
struct Event {
  Backend *backend;
  EventHandle handle;
};

Device *unwrap(FlyRtDevice d) { return static_cast<Device *>(d.ptr); }
Module *unwrap(FlyRtModule m) { return static_cast<Module *>(m.ptr); }
Function *unwrap(FlyRtFunction f) { return static_cast<Function *>(f.ptr); }
Event *unwrap(FlyRtEvent e) { return static_cast<Event *>(e.ptr); }

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// The HIP plugin: $FLY_HIP_BACKEND, else libFlyRuntimeHip.so beside this
/// library, else the loader's search path.
std::unique_ptr<Backend> loadHipPlugin(std::string &why) {
  std::string dir =
      fly::location::getDirectoryOf(fly::location::getCodeFilePath(
          reinterpret_cast<const void *>(&flyRtGetLastError)));
  return loadHipBackend(getHipPluginCandidates({dir}), why);
}

} // namespace

extern "C" {

const char *flyRtGetLastError(void) { return lastError.c_str(); }

FlyRtDevice flyRtDeviceOpen(const char *backendName, int ordinal,
                            FlyRtOpenStatus *status) {
  lastError.clear();
  auto setStatus = [&](FlyRtOpenStatus s) {
    if (status)
      *status = s;
  };
  std::string which = backendName ? backendName : "";
  std::unique_ptr<Backend> backend;
  if (which == "cuda") {
    backend = createCudaBackend();
  } else if (which == "hip") {
    std::string why;
    backend = loadHipPlugin(why);
    if (!backend) {
      setStatus(FlyRtOpenNoRuntime);
      fail(why);
      return {nullptr};
    }
  } else {
    setStatus(FlyRtOpenError);
    fail("unknown backend '" + which + "' (expected 'cuda' or 'hip')");
    return {nullptr};
  }
  backend->shareProcessContext();
  std::string message;
  switch (backend->open(ordinal, message)) {
  case OpenResult::Ok:
    break;
  case OpenResult::NoRuntime:
    setStatus(FlyRtOpenNoRuntime);
    fail(message);
    return {nullptr};
  case OpenResult::NoDevice:
    setStatus(FlyRtOpenNoDevice);
    fail(message);
    return {nullptr};
  case OpenResult::Error:
    setStatus(FlyRtOpenError);
    fail(message);
    return {nullptr};
  }
  setStatus(FlyRtOpenOk);
  auto *device = new Device{std::move(backend), ""};
  DeviceInfo info = device->backend->info();
  device->infoJSON =
      "{\"backend\": " + jsonString(device->backend->name()) +
      ", \"name\": " + jsonString(info.name) +
      ", \"arch\": " + jsonString(info.arch) +
      ", \"total_memory\": " + std::to_string(info.totalMemory) +
      ", \"runtime_version\": " + jsonString(info.runtimeVersion) +
      ", \"ordinal\": " + std::to_string(info.ordinal) + "}";
  return {device};
}

void flyRtDeviceDestroy(FlyRtDevice device) { delete unwrap(device); }

const char *flyRtDeviceGetInfoJSON(FlyRtDevice device) {
  Device *d = unwrap(device);
  return d ? d->infoJSON.c_str() : nullptr;
}

bool flyRtDeviceSynchronize(FlyRtDevice device) {
  if (!unwrap(device))
    return fail("null device");
  return check(unwrap(device)->backend->synchronize());
}

FlyRtModule flyRtModuleLoad(FlyRtDevice device, const void *data, size_t size) {
  if (!unwrap(device))
    return fail("null device"), FlyRtModule{nullptr};
  if (!data || !size)
    return fail("an empty object"), FlyRtModule{nullptr};
  Backend *backend = unwrap(device)->backend.get();
  // A copy ending in NUL: a PTX image is a C string.
  std::string image(static_cast<const char *>(data), size);
  ModuleHandle handle = nullptr;
  if (!check(backend->loadModule(image, handle)))
    return {nullptr};
  return {new Module{backend, handle, {}}};
}

void flyRtModuleUnload(FlyRtModule module) {
  Module *m = unwrap(module);
  if (!m)
    return;
  check(m->backend->unloadModule(m->handle));
  delete m;
}

FlyRtFunction flyRtModuleGetFunction(FlyRtModule module, const char *name) {
  Module *m = unwrap(module);
  if (!m)
    return fail("null module"), FlyRtFunction{nullptr};
  FunctionHandle handle = nullptr;
  if (!check(m->backend->getFunction(m->handle, name ? name : "", handle)))
    return {nullptr};
  m->functions.push_back(
      std::make_unique<Function>(Function{m->backend, handle}));
  return {m->functions.back().get()};
}

bool flyRtFunctionGetAttributes(FlyRtFunction function, int *registers,
                                int64_t *localBytes, int64_t *sharedBytes,
                                int *maxThreadsPerBlock) {
  Function *f = unwrap(function);
  if (!f)
    return fail("null function");
  KernelAttributes a;
  if (!check(f->backend->getAttributes(f->handle, a)))
    return false;
  if (registers)
    *registers = a.registers;
  if (localBytes)
    *localBytes = a.localBytes;
  if (sharedBytes)
    *sharedBytes = a.sharedBytes;
  if (maxThreadsPerBlock)
    *maxThreadsPerBlock = a.maxThreadsPerBlock;
  return true;
}

bool flyRtLaunch(FlyRtFunction function, const unsigned grid[3],
                 const unsigned block[3], unsigned sharedBytes, void *stream,
                 const void *argBuffer, const size_t *argOffsets,
                 size_t numArgs) {
  Function *f = unwrap(function);
  if (!f)
    return fail("null function");
  if (!grid || !block)
    return fail("no grid or block dimensions");
  if (numArgs && (!argBuffer || !argOffsets))
    return fail("no argument buffer or offsets for " + std::to_string(numArgs) +
                " arguments");
  std::vector<void *> params(numArgs);
  for (size_t i = 0; i < numArgs; ++i)
    params[i] = const_cast<char *>(static_cast<const char *>(argBuffer) +
                                   argOffsets[i]);
  return check(f->backend->launchOn(f->handle, Dim3{grid[0], grid[1], grid[2]},
                                    Dim3{block[0], block[1], block[2]},
                                    sharedBytes, stream,
                                    params.empty() ? nullptr : params.data()));
}

bool flyRtAlloc(FlyRtDevice device, size_t bytes, uint64_t *ptr) {
  if (!unwrap(device))
    return fail("null device");
  if (!ptr)
    return fail("no pointer to receive the allocation");
  DevicePtr p = 0;
  if (!check(unwrap(device)->backend->allocate(bytes, p)))
    return false;
  *ptr = p;
  return true;
}

bool flyRtFree(FlyRtDevice device, uint64_t ptr) {
  if (!unwrap(device))
    return fail("null device");
  return check(unwrap(device)->backend->deallocate(ptr));
}

bool flyRtCopyToDevice(FlyRtDevice device, uint64_t dst, const void *src,
                       size_t bytes) {
  if (!unwrap(device))
    return fail("null device");
  if (!src && bytes)
    return fail("no host source");
  return check(unwrap(device)->backend->copyToDevice(dst, src, bytes));
}

bool flyRtCopyToHost(FlyRtDevice device, void *dst, uint64_t src,
                     size_t bytes) {
  if (!unwrap(device))
    return fail("null device");
  if (!dst && bytes)
    return fail("no host destination");
  return check(unwrap(device)->backend->copyToHost(dst, src, bytes));
}

bool flyRtCopyOnDevice(FlyRtDevice device, uint64_t dst, uint64_t src,
                       size_t bytes) {
  if (!unwrap(device))
    return fail("null device");
  return check(unwrap(device)->backend->copyOnDevice(dst, src, bytes));
}

bool flyRtMemset(FlyRtDevice device, uint64_t dst, uint8_t value, size_t bytes,
                 void *stream) {
  if (!unwrap(device))
    return fail("null device");
  return check(unwrap(device)->backend->fill(dst, value, bytes, stream));
}

FlyRtEvent flyRtEventCreate(FlyRtDevice device) {
  if (!unwrap(device))
    return fail("null device"), FlyRtEvent{nullptr};
  Backend *backend = unwrap(device)->backend.get();
  EventHandle handle = nullptr;
  if (!check(backend->createEvent(handle)))
    return {nullptr};
  return {new Event{backend, handle}};
}

void flyRtEventDestroy(FlyRtEvent event) {
  Event *e = unwrap(event);
  if (!e)
    return;
  check(e->backend->destroyEvent(e->handle));
  delete e;
}

bool flyRtEventRecord(FlyRtEvent event, void *stream) {
  Event *e = unwrap(event);
  if (!e)
    return fail("null event");
  return check(e->backend->recordEvent(e->handle, stream));
}

bool flyRtEventElapsedMs(FlyRtEvent start, FlyRtEvent stop, float *ms) {
  Event *a = unwrap(start), *b = unwrap(stop);
  if (!a || !b)
    return fail("null event");
  if (!ms)
    return fail("no pointer to receive the milliseconds");
  return check(a->backend->elapsedMs(a->handle, b->handle, *ms));
}

} // extern "C"
