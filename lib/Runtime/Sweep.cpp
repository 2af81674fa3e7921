//===- Sweep.cpp - Load, check and time every variant of a sweep ----------===//

#include "fly/Runtime/Sweep.h"

#include "fly/Runtime/CubinInfo.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace fly::rt {

const char *stateName(VariantState state) {
  switch (state) {
  case VariantState::Pending:
    return "pending";
  case VariantState::Ok:
    return "ok";
  case VariantState::NotCompiled:
    return "not compiled";
  case VariantState::Skipped:
    return "skipped";
  case VariantState::LoadFailed:
    return "load failed";
  case VariantState::Faulted:
    return "FAULT";
  case VariantState::Wrong:
    return "WRONG";
  }
  return "?";
}

Stats computeStats(std::vector<double> s) {
  Stats st;
  st.count = static_cast<int>(s.size());
  if (s.empty())
    return st;
  std::sort(s.begin(), s.end());
  auto quantile = [&](double q) {
    double pos = q * static_cast<double>(s.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, s.size() - 1);
    return s[lo] + (s[hi] - s[lo]) * (pos - static_cast<double>(lo));
  };
  st.min = s.front();
  st.max = s.back();
  st.median = quantile(0.5);
  st.q1 = quantile(0.25);
  st.q3 = quantile(0.75);
  double sum = 0;
  for (double v : s)
    sum += v;
  st.mean = sum / static_cast<double>(s.size());
  return st;
}

static std::string firstLine(const std::string &text) {
  return text.substr(0, text.find('\n'));
}

bool checkSpecAgainstManifest(const LaunchSpec &spec,
                              const SweepManifest &manifest,
                              std::string &kernel, std::string &error) {
  std::vector<std::string> names = manifest.kernelNames();
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "" : ", ") + n;
  if (names.empty()) {
    bool anyObject = false;
    for (const ManifestVariant &v : manifest.variants)
      anyObject |= v.ok && !v.objects.empty();
    if (!anyObject) {
      error = manifest.dir + "/manifest.json: no variant has an object (did "
              "every variant fail to compile?)";
      return false;
    }
    if (spec.kernel.empty()) {
      error = spec.path + ": the manifest lists no kernel names (PTX "
              "objects?): name the kernel with \"kernel\"";
      return false;
    }
    kernel = spec.kernel;
    return true;
  }
  if (!spec.kernel.empty()) {
    if (std::find(names.begin(), names.end(), spec.kernel) == names.end()) {
      error = spec.path + ": kernel '" + spec.kernel + "' is not in " +
              manifest.dir + "/manifest.json (kernels: " + list + ")";
      return false;
    }
    kernel = spec.kernel;
  } else if (names.size() == 1) {
    kernel = names.front();
  } else {
    error = spec.path + ": the manifest has several kernels (" + list +
            "): name one with \"kernel\"";
    return false;
  }
  // The parameter layout comes from the first cubin that holds the kernel.
  for (const ManifestVariant &v : manifest.variants) {
    const ManifestObject *object = v.ok ? v.findKernel(kernel) : nullptr;
    if (!object || object->file.empty())
      continue;
    std::string image, readError;
    if (!readFile(object->file, image, readError) || !isElf(image) ||
        manifest.family != "nvvm")
      return true; // not a cubin: nothing to check here
    std::vector<CubinKernel> kernels;
    if (!readCubinKernels(image, kernels, readError))
      return true;
    for (const CubinKernel &k : kernels) {
      if (k.name != kernel || k.params.empty())
        continue;
      std::vector<ParamSlot> slots = spec.params();
      bool same = slots.size() == k.params.size();
      for (size_t i = 0; same && i < slots.size(); ++i)
        same = slots[i].size == k.params[i].size;
      if (same)
        return true;
      auto describe = [](const std::vector<int> &sizes) {
        std::string out;
        for (size_t i = 0; i < sizes.size(); ++i) {
          if (i >= 12) {
            out += ", ...";
            break;
          }
          out += (i ? ", " : "") + std::to_string(sizes[i]);
        }
        return out;
      };
      std::vector<int> want, got;
      int wantBytes = 0, gotBytes = 0;
      for (const CubinParam &p : k.params)
        want.push_back(p.size), wantBytes += p.size;
      for (const ParamSlot &s : slots)
        got.push_back(s.size), gotBytes += s.size;
      error = spec.path + ": the args expand to " +
              std::to_string(slots.size()) + " kernel parameters (" +
              std::to_string(gotBytes) + " bytes; sizes " + describe(got) +
              "), but '" + kernel + "' in " + object->file + " takes " +
              std::to_string(k.params.size()) + " (" +
              std::to_string(wantBytes) + " bytes; sizes " + describe(want) +
              "). A memref<RxCxf32> argument of an MLIR kernel is 7 "
              "parameters: use {\"kind\": \"memref2d\"}";
      return false;
    }
    return true;
  }
  return true;
}

namespace {

/// The spec's buffers on the device: a working copy that kernels see and a
/// pristine copy each run is restored from (device to device: cheap).
class DeviceBuffers {
public:
  DeviceBuffers(Backend &backend, const LaunchSpec &spec,
                const std::vector<std::vector<unsigned char>> &host)
      : backend_(backend), spec_(spec), host_(host) {}

  Status setUp() {
    work_.assign(spec_.buffers.size(), 0);
    pristine_.assign(spec_.buffers.size(), 0);
    for (size_t i = 0; i < spec_.buffers.size(); ++i) {
      size_t bytes = spec_.buffers[i].bytes();
      if (Status s = backend_.allocate(bytes, work_[i]); !s)
        return s;
      if (Status s = backend_.copyToDevice(work_[i], host_[i].data(), bytes); !s)
        return s;
      // Without room for a pristine copy, restore from the host instead.
      if (!backend_.allocate(bytes, pristine_[i])) {
        pristine_[i] = 0;
        continue;
      }
      if (Status s = backend_.copyOnDevice(pristine_[i], work_[i], bytes); !s)
        return s;
    }
    return backend_.synchronize();
  }

  /// After reset() the old pointers belong to a dead context: forget them.
  void forget() {
    work_.clear();
    pristine_.clear();
  }

  void release() {
    for (DevicePtr p : work_)
      if (p)
        backend_.release(p);
    for (DevicePtr p : pristine_)
      if (p)
        backend_.release(p);
    forget();
  }

  Status restore() {
    for (size_t i = 0; i < work_.size(); ++i) {
      size_t bytes = spec_.buffers[i].bytes();
      Status s = pristine_[i]
                     ? backend_.copyOnDevice(work_[i], pristine_[i], bytes)
                     : backend_.copyToDevice(work_[i], host_[i].data(), bytes);
      if (!s)
        return s;
    }
    return {};
  }

  Status read(int buffer, std::vector<unsigned char> &out) {
    out.resize(spec_.buffers[buffer].bytes());
    return backend_.copyToHost(out.data(), work_[buffer], out.size());
  }

  DevicePtr ptr(int buffer) const { return work_[buffer]; }

private:
  Backend &backend_;
  const LaunchSpec &spec_;
  const std::vector<std::vector<unsigned char>> &host_;
  std::vector<DevicePtr> work_, pristine_;
};

/// The kernel parameter values and the pointer array the launch APIs take.
struct Params {
  std::vector<uint64_t> values;
  std::vector<void *> pointers;

  void build(const LaunchSpec &spec, const DeviceBuffers &buffers,
             bool outOfBounds) {
    values.clear();
    // 1 TiB past the buffers, far outside any allocation: the injected
    // fault. It moves the pointers, not the memref offset field: a kernel
    // compiled for a statically shaped memref uses the layout's static
    // offset (0) and only reads the aligned pointer.
    const uint64_t away = outOfBounds ? (uint64_t(1) << 40) : 0;
    for (const ArgSpec &a : spec.args) {
      switch (a.kind) {
      case ArgSpec::Kind::Buffer:
        values.push_back(buffers.ptr(a.buffer) + away +
                         static_cast<uint64_t>(a.offset) *
                             elementSize(spec.buffers[a.buffer].type));
        break;
      case ArgSpec::Kind::Memref2D:
        values.push_back(buffers.ptr(a.buffer) + away);
        values.push_back(buffers.ptr(a.buffer) + away);
        values.push_back(static_cast<uint64_t>(a.offset));
        values.push_back(static_cast<uint64_t>(a.sizes[0]));
        values.push_back(static_cast<uint64_t>(a.sizes[1]));
        values.push_back(static_cast<uint64_t>(a.strides[0]));
        values.push_back(static_cast<uint64_t>(a.strides[1]));
        break;
      case ArgSpec::Kind::Scalar: {
        uint64_t slot = 0;
        if (a.scalarType == ScalarType::I64) {
          slot = static_cast<uint64_t>(a.intValue);
        } else if (a.scalarType == ScalarType::I32) {
          uint32_t v = static_cast<uint32_t>(a.intValue);
          std::memcpy(&slot, &v, 4);
        } else {
          float f = static_cast<float>(a.floatValue);
          std::memcpy(&slot, &f, 4);
        }
        values.push_back(slot);
        break;
      }
      }
    }
    pointers.clear();
    for (uint64_t &v : values)
      pointers.push_back(&v);
  }
};

struct HostReference {
  int buffer = -1;
  int64_t ldc = 0;
  std::vector<int64_t> index; ///< element index into C
  std::vector<double> expected;
};

HostReference computeHostReference(
    const LaunchSpec &spec, const std::vector<std::vector<unsigned char>> &host) {
  HostReference ref;
  const MatmulReference &r = *spec.reference;
  ref.buffer = r.c;
  const float *a = reinterpret_cast<const float *>(host[r.a].data());
  const float *b = reinterpret_cast<const float *>(host[r.b].data());
  int64_t rows = r.rows[1] - r.rows[0], cols = r.cols[1] - r.cols[0];
  auto add = [&](int64_t i, int64_t j) {
    double sum = 0;
    for (int64_t k = 0; k < r.k; ++k)
      sum += static_cast<double>(a[i * r.k + k]) *
             static_cast<double>(b[k * r.n + j]);
    ref.index.push_back(i * r.n + j);
    ref.expected.push_back(sum);
  };
  if (r.samples == 0 || r.samples >= rows * cols) {
    for (int64_t i = r.rows[0]; i < r.rows[1]; ++i)
      for (int64_t j = r.cols[0]; j < r.cols[1]; ++j)
        add(i, j);
    return ref;
  }
  // Deterministic samples; the region's corners always included.
  uint64_t state = r.seed * 0x9E3779B97F4A7C15ull + 7;
  auto next = [&] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  add(r.rows[0], r.cols[0]);
  add(r.rows[1] - 1, r.cols[1] - 1);
  for (int64_t s = 2; s < r.samples; ++s)
    add(r.rows[0] + static_cast<int64_t>(next() % static_cast<uint64_t>(rows)),
        r.cols[0] + static_cast<int64_t>(next() % static_cast<uint64_t>(cols)));
  return ref;
}

bool withinTolerance(double got, double want, const Tolerance &tol) {
  if (std::isnan(got) || std::isnan(want))
    return std::isnan(got) && std::isnan(want);
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

double element(const BufferSpec &b, const unsigned char *data, size_t i) {
  if (b.type == ElementType::F32) {
    float f;
    std::memcpy(&f, data + i * 4, 4);
    return f;
  }
  int32_t n;
  std::memcpy(&n, data + i * 4, 4);
  return n;
}

void noteMismatch(Comparison &c, const BufferSpec &b, size_t i, double got,
                  double want) {
  ++c.mismatches;
  if (c.firstMismatch.empty()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s[%zu]: %.9g, expected %.9g",
                  b.name.c_str(), i, got, want);
    c.firstMismatch = buf;
  }
}

void compareWithHost(const HostReference &ref, const BufferSpec &b,
                     const std::vector<unsigned char> &got,
                     const Tolerance &tol, Comparison &c) {
  for (size_t s = 0; s < ref.index.size(); ++s) {
    size_t i = static_cast<size_t>(ref.index[s]);
    double g = element(b, got.data(), i), w = ref.expected[s];
    ++c.checked;
    if (!std::isnan(g) && !std::isnan(w))
      c.maxAbsError = std::max(c.maxAbsError, std::fabs(g - w));
    if (!withinTolerance(g, w, tol))
      noteMismatch(c, b, i, g, w);
  }
}

void compareBuffers(const BufferSpec &b, const std::vector<unsigned char> &got,
                    const unsigned char *want, const Tolerance &tol,
                    Comparison &c) {
  if (std::memcmp(got.data(), want, got.size()) == 0) { // bit-identical
    c.checked += b.elements;
    return;
  }
  for (size_t i = 0; i < b.elements; ++i) {
    double g = element(b, got.data(), i), w = element(b, want, i);
    ++c.checked;
    if (!std::isnan(g) && !std::isnan(w))
      c.maxAbsError = std::max(c.maxAbsError, std::fabs(g - w));
    if (!withinTolerance(g, w, tol))
      noteMismatch(c, b, i, g, w);
  }
}

struct Loaded {
  ModuleHandle module = nullptr;
  FunctionHandle function = nullptr;
};

//===----------------------------------------------------------------------===//
// Worker <-> parent messages: one JSON object per line on a pipe.
//===----------------------------------------------------------------------===//

json::Value comparisonToJson(const Comparison &c) {
  json::Value v;
  v["checked"] = c.checked;
  v["mismatches"] = c.mismatches;
  v["max_abs_error"] = c.maxAbsError;
  v["first"] = c.firstMismatch;
  return v;
}

void comparisonFromJson(const json::Value *v, Comparison &c) {
  if (!v)
    return;
  if (const json::Value *x = v->get("checked"))
    c.checked = static_cast<size_t>(x->asInteger());
  if (const json::Value *x = v->get("mismatches"))
    c.mismatches = static_cast<size_t>(x->asInteger());
  if (const json::Value *x = v->get("max_abs_error"))
    c.maxAbsError = x->asNumber();
  if (const json::Value *x = v->get("first"))
    c.firstMismatch = x->asString();
}

json::Value outcomeMessage(size_t i, const VariantOutcome &o) {
  json::Value v;
  v["i"] = i;
  v["state"] = static_cast<int>(o.state);
  v["message"] = o.message;
  v["object"] = o.objectFile;
  v["regs_md"] = o.manifestRegisters;
  v["local_md"] = o.manifestLocalBytes;
  v["regs"] = o.driver.registers;
  v["local"] = o.driver.localBytes;
  v["shared"] = o.driver.sharedBytes;
  v["max_threads"] = o.driver.maxThreadsPerBlock;
  v["host"] = comparisonToJson(o.againstHost);
  v["variant"] = comparisonToJson(o.againstVariant);
  json::Value::Array times;
  for (double t : o.timesMs)
    times.push_back(t);
  v["times"] = times;
  json::Value msg;
  msg["outcome"] = v;
  return msg;
}

void outcomeFromMessage(const json::Value &v, VariantOutcome &o) {
  auto integer = [&](const char *key) {
    const json::Value *x = v.get(key);
    return x && x->isNumber() ? x->asInteger() : int64_t(-1);
  };
  o.state = static_cast<VariantState>(integer("state"));
  if (const json::Value *x = v.get("message"))
    o.message = x->asString();
  if (const json::Value *x = v.get("object"))
    o.objectFile = x->asString();
  o.manifestRegisters = integer("regs_md");
  o.manifestLocalBytes = integer("local_md");
  o.driver.registers = static_cast<int>(integer("regs"));
  o.driver.localBytes = integer("local");
  o.driver.sharedBytes = integer("shared");
  o.driver.maxThreadsPerBlock = static_cast<int>(integer("max_threads"));
  o.againstHost = Comparison();
  o.againstVariant = Comparison();
  comparisonFromJson(v.get("host"), o.againstHost);
  comparisonFromJson(v.get("variant"), o.againstVariant);
  o.timesMs.clear();
  if (const json::Value *t = v.get("times"); t && t->isArray())
    for (const json::Value &x : t->asArray())
      o.timesMs.push_back(x.asNumber());
}

class Channel {
public:
  explicit Channel(int fd) : fd_(fd) {}
  void send(const json::Value &message) {
    std::string line = json::write(message, 0) + "\n";
    const char *p = line.data();
    size_t left = line.size();
    while (left) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return; // the parent is gone; nothing to do
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  void send(const char *key, json::Value value) {
    json::Value m;
    m[key] = std::move(value);
    send(m);
  }

private:
  int fd_;
};

json::Value deviceToJson(const DeviceInfo &d) {
  json::Value v;
  v["ordinal"] = d.ordinal;
  v["name"] = d.name;
  v["arch"] = d.arch;
  v["memory"] = static_cast<int64_t>(d.totalMemory);
  v["runtime"] = d.runtimeVersion;
  return v;
}

DeviceInfo deviceFromJson(const json::Value &v) {
  DeviceInfo d;
  if (const json::Value *x = v.get("ordinal"))
    d.ordinal = static_cast<int>(x->asInteger());
  if (const json::Value *x = v.get("name"))
    d.name = x->asString();
  if (const json::Value *x = v.get("arch"))
    d.arch = x->asString();
  if (const json::Value *x = v.get("memory"))
    d.totalMemory = static_cast<size_t>(x->asInteger());
  if (const json::Value *x = v.get("runtime"))
    d.runtimeVersion = x->asString();
  return d;
}

/// Opens the backend in the worker; false (after telling the parent) if not.
std::unique_ptr<Backend> openInWorker(const BackendFactory &make, int ordinal,
                                      Channel &channel) {
  std::string message = "no backend";
  std::unique_ptr<Backend> backend = make ? make(message) : nullptr;
  OpenResult r = backend ? backend->open(ordinal, message) : OpenResult::NoRuntime;
  if (r != OpenResult::Ok) {
    json::Value m;
    m["open_failed"] = static_cast<int>(r);
    m["message"] = message;
    channel.send(m);
    return nullptr;
  }
  channel.send("device", deviceToJson(backend->info()));
  return backend;
}

//===----------------------------------------------------------------------===//
// The worker: runs in a child process, owns the device.
//===----------------------------------------------------------------------===//

/// Where the reference variant's outputs live: memory shared with the
/// parent, so that later workers compare against them too.
struct SharedOutputs {
  unsigned char *base = nullptr;
  size_t bytes = 0;
  std::vector<size_t> offsets; ///< per entry of spec.outputs()
};

class SweepWorker {
public:
  SweepWorker(Backend &backend, const LaunchSpec &spec,
              const SweepManifest &manifest, const std::string &kernel,
              const SweepOptions &options,
              const std::vector<std::vector<unsigned char>> &host,
              const HostReference &hostRef, std::vector<VariantOutcome> outcomes,
              int referenceVariant, const SharedOutputs &shared,
              Channel &channel)
      : backend_(backend), spec_(spec), manifest_(manifest), kernel_(kernel),
        options_(options), host_(host), hostRef_(hostRef),
        buffers_(backend, spec, host), outcomes_(std::move(outcomes)),
        referenceVariant_(referenceVariant), shared_(shared),
        channel_(channel) {}

  void run();

private:
  Backend &backend_;
  const LaunchSpec &spec_;
  const SweepManifest &manifest_;
  const std::string &kernel_;
  const SweepOptions &options_;
  const std::vector<std::vector<unsigned char>> &host_;
  const HostReference &hostRef_;
  DeviceBuffers buffers_;
  std::vector<VariantOutcome> outcomes_;
  int referenceVariant_;
  const SharedOutputs &shared_;
  Channel &channel_;
  std::vector<Loaded> loaded_;
  std::vector<std::string> images_;
  bool poisoned_ = false; ///< a sticky fault: this process is done

  void say(const std::string &line) {
    if (options_.progress)
      options_.progress(line);
  }
  void current(size_t i) {
    json::Value m;
    m["current"] = i;
    channel_.send(m);
  }
  void report(size_t i) { channel_.send(outcomeMessage(i, outcomes_[i])); }
  Status load(size_t i) {
    Loaded &l = loaded_[i];
    if (l.function)
      return {};
    if (images_[i].empty()) {
      std::string error;
      if (!readFile(outcomes_[i].objectFile, images_[i], error))
        return Status::error(error);
    }
    if (Status s = backend_.loadModule(images_[i], l.module); !s)
      return s;
    return backend_.getFunction(l.module, kernel_, l.function);
  }
  Status runOnce(size_t i, const Params &params) {
    if (Status s = buffers_.restore(); !s)
      return s;
    if (Status s = backend_.launch(loaded_[i].function, spec_.grid, spec_.block,
                                   spec_.sharedBytes,
                                   const_cast<void **>(params.pointers.data()));
        !s)
      return s;
    return backend_.synchronize();
  }
  Status timeOnce(size_t i, const Params &params, float &ms) {
    if (Status s = buffers_.restore(); !s)
      return s;
    return backend_.timedLaunch(loaded_[i].function, spec_.grid, spec_.block,
                                spec_.sharedBytes,
                                const_cast<void **>(params.pointers.data()), ms);
  }
  void fail(size_t i, VariantState state, const Status &s,
            const std::string &what) {
    VariantOutcome &out = outcomes_[i];
    out.state = state;
    out.message = what + s.message;
    out.timesMs.clear();
    say(out.id + ": " + stateName(state) + ": " + out.message);
    report(i);
    if (s.fault) {
      poisoned_ = true;
      say("a fault poisons the device context of the whole process: "
          "continuing in a fresh worker process");
      channel_.send("restart", true);
    }
  }
  void check(size_t i);
  void time();
};

void SweepWorker::check(size_t i) {
  VariantOutcome &out = outcomes_[i];
  const ManifestVariant &v = manifest_.variants[i];
  const ManifestKernel *info = nullptr;
  const ManifestObject *object = v.findKernel(kernel_, &info);
  auto done = [&](VariantState state, const std::string &message) {
    out.state = state;
    out.message = message;
    if (state != VariantState::Ok)
      say(out.id + ": " + stateName(state) + ": " + message);
    report(i);
  };
  if (!object)
    return done(VariantState::LoadFailed,
                "no object of this variant holds kernel '" + kernel_ + "'");
  if (info) {
    out.manifestRegisters = info->registers();
    out.manifestLocalBytes = info->localBytes();
  }
  out.objectFile = object->file;
  if (object->file.empty())
    return done(VariantState::LoadFailed, "the manifest names no object file");
  if (object->format == "offload")
    return done(VariantState::LoadFailed,
                "format 'offload' (LLVM bitcode) cannot be loaded");
  if (Status s = load(i); !s)
    return fail(i, VariantState::LoadFailed, s, "");
  if (Status s = backend_.getAttributes(loaded_[i].function, out.driver); !s)
    return fail(i, VariantState::LoadFailed, s, "");
  report(i); // still pending, but the parent has the attributes if it hangs
  uint64_t threads = uint64_t(spec_.block.x) * spec_.block.y * spec_.block.z;
  if (out.driver.maxThreadsPerBlock > 0 &&
      threads > static_cast<uint64_t>(out.driver.maxThreadsPerBlock))
    return done(VariantState::LoadFailed,
                "cannot launch: a block of " + std::to_string(threads) +
                    " threads is more than the " +
                    std::to_string(out.driver.maxThreadsPerBlock) +
                    " the driver allows this kernel (" +
                    std::to_string(out.driver.registers) + " registers)");

  Params params;
  params.build(spec_, buffers_, options_.injectFault == v.id ||
                                    options_.injectFault == std::to_string(v.index));
  if (Status s = runOnce(i, params); !s)
    return fail(i, VariantState::Faulted, s, "");

  std::vector<int> outputs = spec_.outputs();
  std::vector<std::vector<unsigned char>> got(outputs.size());
  for (size_t o = 0; o < outputs.size(); ++o)
    if (Status s = buffers_.read(outputs[o], got[o]); !s)
      return fail(i, VariantState::Faulted, s, "reading outputs: ");
  if (spec_.reference) {
    for (size_t o = 0; o < outputs.size(); ++o)
      if (outputs[o] == hostRef_.buffer)
        compareWithHost(hostRef_, spec_.buffers[outputs[o]], got[o],
                        spec_.tolerance, out.againstHost);
    if (out.againstHost.mismatches)
      return done(VariantState::Wrong,
                  std::to_string(out.againstHost.mismatches) + " of " +
                      std::to_string(out.againstHost.checked) +
                      " sampled entries differ from the host reference; "
                      "first: " +
                      out.againstHost.firstMismatch);
  }
  if (referenceVariant_ >= 0) {
    for (size_t o = 0; o < outputs.size(); ++o)
      compareBuffers(spec_.buffers[outputs[o]], got[o],
                     shared_.base + shared_.offsets[o], spec_.tolerance,
                     out.againstVariant);
    if (out.againstVariant.mismatches)
      return done(VariantState::Wrong,
                  std::to_string(out.againstVariant.mismatches) + " of " +
                      std::to_string(out.againstVariant.checked) +
                      " output elements differ from " +
                      outcomes_[referenceVariant_].id +
                      "; first: " + out.againstVariant.firstMismatch);
  } else {
    for (size_t o = 0; o < outputs.size(); ++o)
      std::memcpy(shared_.base + shared_.offsets[o], got[o].data(),
                  got[o].size());
    referenceVariant_ = static_cast<int>(i);
    channel_.send("reference", static_cast<int64_t>(i));
  }
  std::string regs =
      out.driver.registers >= 0 ? std::to_string(out.driver.registers) : "?";
  std::string line = out.id + ": loaded, " + regs + " registers";
  if (out.manifestRegisters >= 0)
    line += out.registersMatch()
                ? " (= manifest)"
                : " (MISMATCH: manifest says " +
                      std::to_string(out.manifestRegisters) + ")";
  line += ", outputs ";
  if (spec_.reference)
    line += "match the host reference (" +
            std::to_string(out.againstHost.checked) + " entries)";
  if (referenceVariant_ != static_cast<int>(i))
    line += std::string(spec_.reference ? " and " : "") + "match " +
            outcomes_[referenceVariant_].id;
  else if (!spec_.reference)
    line += "kept as the reference";
  say(line);
  done(VariantState::Ok, "");
}

void SweepWorker::time() {
  const TimingSpec &t = spec_.timing;
  int warmup = options_.warmup >= 0 ? options_.warmup : t.warmup;
  int reps = options_.repetitions > 0 ? options_.repetitions : t.repetitions;
  int maxReps = options_.maxRepetitions > 0 ? options_.maxRepetitions
                                            : t.maxRepetitions;
  maxReps = std::max(maxReps, reps);
  double minTime = options_.minTimeMs >= 0 ? options_.minTimeMs : t.minTimeMs;

  std::vector<size_t> active;
  for (size_t i = 0; i < outcomes_.size(); ++i)
    if (outcomes_[i].state == VariantState::Ok) {
      outcomes_[i].timesMs.clear();
      // Variants checked by an earlier worker are loaded here.
      if (Status s = load(i); !s) {
        fail(i, VariantState::LoadFailed, s, "");
        if (poisoned_)
          return;
        continue;
      }
      active.push_back(i);
    }
  Params params;
  params.build(spec_, buffers_, false);
  auto timing = [&](size_t i, float &ms) {
    current(i);
    Status s = timeOnce(i, params, ms);
    if (!s)
      fail(i, VariantState::Faulted, s, "while timing: ");
    return static_cast<bool>(s);
  };
  // Warm-up, which also estimates how many runs fill min_time_ms.
  std::vector<int> target(outcomes_.size(), 0);
  for (size_t i : active) {
    float ms = 0;
    bool ok = true;
    for (int w = 0; ok && w < std::max(warmup, 1); ++w)
      ok = timing(i, ms);
    if (poisoned_)
      return;
    if (!ok)
      continue;
    int n = ms > 0 ? static_cast<int>(std::ceil(minTime / ms)) : maxReps;
    target[i] = std::clamp(n, reps, maxReps);
  }
  say("timing " + std::to_string(active.size()) +
      " variants, round-robin (each run starts from the initial buffers)");
  // Round-robin, so that clock and thermal drift spread over all variants.
  for (int round = 0;; ++round) {
    bool any = false;
    for (size_t i : active) {
      VariantOutcome &out = outcomes_[i];
      if (out.state != VariantState::Ok || round >= target[i])
        continue;
      any = true;
      float ms = 0;
      if (timing(i, ms))
        out.timesMs.push_back(ms);
      if (poisoned_)
        return;
    }
    if (!any)
      break;
  }
  for (size_t i : active)
    if (outcomes_[i].state == VariantState::Ok)
      report(i);
}

void SweepWorker::run() {
  if (Status s = buffers_.setUp(); !s) {
    channel_.send("fatal", "setting up the buffers: " + s.message);
    return;
  }
  loaded_.assign(outcomes_.size(), Loaded());
  images_.assign(outcomes_.size(), std::string());
  for (size_t i = 0; i < outcomes_.size() && !poisoned_; ++i)
    if (outcomes_[i].state == VariantState::Pending) {
      current(i);
      check(i);
    }
  if (poisoned_)
    return;
  time();
  if (poisoned_)
    return;
  for (Loaded &l : loaded_)
    if (l.module)
      backend_.unloadModule(l.module);
  buffers_.release();
  channel_.send("done", true);
}

//===----------------------------------------------------------------------===//
// The parent: forks workers, reads what they report, restarts after faults.
//===----------------------------------------------------------------------===//

/// Forks a child that runs `body(channel)`; calls `onMessage` for every
/// line it sends. Returns false (with `why`) if the child died or went
/// silent for `timeoutS` (then it is killed).
bool runChild(const std::function<void(Channel &)> &body,
              const std::function<void(const json::Value &)> &onMessage,
              double timeoutS, std::string &why) {
  int fds[2];
  if (pipe(fds) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    why = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    Channel channel(fds[1]);
    body(channel);
    close(fds[1]);
    _exit(0); // no atexit handlers or stdio flushes of the parent's state
  }
  close(fds[1]);
  std::string pending;
  bool silent = false;
  char buf[65536];
  while (true) {
    pollfd p{fds[0], POLLIN, 0};
    int timeoutMs = timeoutS > 0 ? static_cast<int>(timeoutS * 1000) : -1;
    int r = poll(&p, 1, timeoutMs);
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0) {
      silent = true;
      kill(pid, SIGKILL);
      break;
    }
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      json::Value message;
      std::string error;
      if (json::parse(pending.substr(0, nl), message, error))
        onMessage(message);
      pending.erase(0, nl + 1);
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (silent) {
    why = "no progress for " + std::to_string(static_cast<int>(timeoutS)) +
          " s: the worker was killed (a hung kernel?)";
    return false;
  }
  if (WIFSIGNALED(status)) {
    why = std::string("the worker process died of signal ") +
          std::to_string(WTERMSIG(status)) + " (" +
          strsignal(WTERMSIG(status)) + ")";
    return false;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    why = "the worker process exited with status " +
          std::to_string(WEXITSTATUS(status));
    return false;
  }
  return true;
}

} // namespace

OpenResult probeDevice(const BackendFactory &make,
                       int ordinal, DeviceInfo &info, std::string &message) {
  OpenResult result = OpenResult::Error;
  bool answered = false;
  std::string why;
  bool ok = runChild(
      [&](Channel &channel) { openInWorker(make, ordinal, channel); },
      [&](const json::Value &m) {
        if (const json::Value *d = m.get("device")) {
          info = deviceFromJson(*d);
          result = OpenResult::Ok;
          answered = true;
        } else if (const json::Value *f = m.get("open_failed")) {
          result = static_cast<OpenResult>(f->asInteger());
          if (const json::Value *msg = m.get("message"))
            message = msg->asString();
          answered = true;
        }
      },
      120, why);
  if (!answered) {
    message = ok ? "the device probe reported nothing" : "device probe: " + why;
    return OpenResult::Error;
  }
  return result;
}

SweepResult runSweep(const LaunchSpec &spec, const SweepManifest &manifest,
                     const std::string &kernel, const SweepOptions &options) {
  SweepResult result;
  result.kernel = kernel;
  auto say = [&](const std::string &line) {
    if (options.progress)
      options.progress(line);
  };
  auto selected = [&](const ManifestVariant &v) {
    if (options.only.empty())
      return true;
    for (const std::string &s : options.only)
      if (s == v.id || s == std::to_string(v.index))
        return true;
    return false;
  };
  for (const ManifestVariant &v : manifest.variants) {
    VariantOutcome out;
    out.index = v.index;
    out.id = v.id;
    out.hints = v.hints;
    out.hintSet = v.hintSet;
    out.duplicateOf = v.duplicateOf;
    if (!v.ok) {
      out.state = VariantState::NotCompiled;
      out.message = firstLine(v.error);
    } else if (!selected(v)) {
      out.state = VariantState::Skipped;
    } else {
      out.state = VariantState::Pending;
    }
    result.variants.push_back(std::move(out));
  }

  // Inputs and the host reference once, here; workers inherit them.
  std::vector<std::vector<unsigned char>> host(spec.buffers.size());
  for (size_t i = 0; i < spec.buffers.size(); ++i)
    initializeBuffer(spec.buffers[i], host[i]);
  HostReference hostRef;
  if (spec.reference) {
    hostRef = computeHostReference(spec, host);
    result.hostSamples = hostRef.index.size();
    say("host reference: C = A * B in double at " +
        std::to_string(hostRef.index.size()) + " entries");
  }
  SharedOutputs shared;
  for (int o : spec.outputs()) {
    shared.offsets.push_back(shared.bytes);
    shared.bytes += spec.buffers[o].bytes();
  }
  void *mem = mmap(nullptr, std::max<size_t>(shared.bytes, 1),
                   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    result.fatal = std::string("mmap: ") + std::strerror(errno);
    return result;
  }
  shared.base = static_cast<unsigned char *>(mem);

  // One worker, plus one more after each fault; each fault excludes a
  // variant, so this ends.
  const size_t maxWorkers = result.variants.size() + 2;
  while (true) {
    if (result.workers >= static_cast<int>(maxWorkers)) {
      result.fatal = "giving up after " + std::to_string(result.workers) +
                     " worker processes";
      break;
    }
    ++result.workers;
    bool done = false, restart = false;
    int currentVariant = -1;
    std::string why;
    bool exited = runChild(
        [&](Channel &channel) {
          std::unique_ptr<Backend> backend =
              openInWorker(options.makeBackend, options.device, channel);
          if (!backend)
            return;
          SweepWorker worker(*backend, spec, manifest, kernel, options, host,
                             hostRef, result.variants, result.referenceVariant,
                             shared, channel);
          worker.run();
        },
        [&](const json::Value &m) {
          if (const json::Value *d = m.get("device")) {
            result.device = deviceFromJson(*d);
          } else if (const json::Value *f = m.get("open_failed")) {
            result.open = static_cast<OpenResult>(f->asInteger());
            if (const json::Value *msg = m.get("message"))
              result.openMessage = msg->asString();
          } else if (const json::Value *c = m.get("current")) {
            currentVariant = static_cast<int>(c->asInteger());
          } else if (const json::Value *o = m.get("outcome")) {
            const json::Value *index = o->get("i");
            size_t i = index ? static_cast<size_t>(index->asInteger())
                             : result.variants.size();
            if (i < result.variants.size())
              outcomeFromMessage(*o, result.variants[i]);
          } else if (const json::Value *r = m.get("reference")) {
            result.referenceVariant = static_cast<int>(r->asInteger());
          } else if (m.get("restart")) {
            restart = true;
          } else if (const json::Value *fatal = m.get("fatal")) {
            result.fatal = fatal->asString();
          } else if (m.get("done")) {
            done = true;
          }
        },
        options.variantTimeoutS, why);
    if (result.open != OpenResult::Ok || !result.fatal.empty() || done)
      break;
    if (restart)
      continue;
    // The worker died or hung: blame the variant it was running.
    if (!exited && currentVariant >= 0 &&
        currentVariant < static_cast<int>(result.variants.size())) {
      VariantOutcome &out = result.variants[currentVariant];
      out.state = VariantState::Faulted;
      out.message = why;
      out.timesMs.clear();
      say(out.id + ": FAULT: " + why + "; continuing in a fresh worker");
      continue;
    }
    result.fatal = exited ? "the worker process stopped without finishing"
                          : why;
    break;
  }
  munmap(mem, std::max<size_t>(shared.bytes, 1));

  for (VariantOutcome &out : result.variants) {
    if (out.state == VariantState::Pending) {
      out.state = VariantState::Skipped;
      out.message = "not run";
    }
    out.stats = computeStats(out.timesMs);
    if (out.state == VariantState::Ok && out.timesMs.empty() &&
        result.fatal.empty() && result.open == OpenResult::Ok) {
      out.state = VariantState::Faulted;
      out.message = "no timing";
    }
  }
  for (size_t i = 0; i < result.variants.size(); ++i) {
    const VariantOutcome &out = result.variants[i];
    if (out.state != VariantState::Ok || out.timesMs.empty())
      continue;
    if (result.winner < 0 ||
        out.stats.median < result.variants[result.winner].stats.median)
      result.winner = static_cast<int>(i);
  }
  // The baseline is the default hint set: the sweep's first variant.
  if (!result.variants.empty() &&
      result.variants.front().state == VariantState::Ok &&
      !result.variants.front().timesMs.empty())
    result.baseline = 0;
  return result;
}

} // namespace fly::rt
