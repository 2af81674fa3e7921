//===- SweepWorker.cpp - The process that owns the device -----------------===//

#include "Runtime/SweepWorker.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace llvm;

namespace fly::rt {

std::unique_ptr<Backend> openDevice(const BackendFactory &make, int ordinal,
                                    Channel &channel) {
  WorkerMessage m;
  std::unique_ptr<Backend> backend = make ? make(m.text) : nullptr;
  m.open = backend ? backend->open(ordinal, m.text) : OpenResult::NoRuntime;
  m.kind = m.open == OpenResult::Ok ? WorkerMessage::Kind::Device
                                    : WorkerMessage::Kind::OpenFailed;
  if (backend && m.open == OpenResult::Ok)
    m.device = backend->info();
  channel.send(m);
  return m.open == OpenResult::Ok ? std::move(backend) : nullptr;
}

namespace {

/// The spec's buffers on the device: a working copy that kernels see and a
/// pristine copy each run is restored from (device to device: cheap).
/// Nothing is freed: the worker process ends after the sweep.
class DeviceBuffers {
public:
  DeviceBuffers(Backend &backend, const SweepInputs &in)
      : backend(backend), in(in) {}

  Status setUp() {
    for (size_t i = 0; i < in.host.size(); ++i) {
      size_t bytes = in.host[i].size();
      DevicePtr &w = work.emplace_back(), &p = pristine.emplace_back();
      if (Status s = backend.allocate(bytes, w); !s)
        return work.pop_back(), s;
      if (Status s = backend.copyToDevice(w, in.host[i].data(), bytes); !s)
        return s;
      // Without room for a pristine copy, restore from the host instead.
      if (!backend.allocate(bytes, p))
        p = 0;
      else if (Status s = backend.copyOnDevice(p, w, bytes); !s)
        return s;
    }
    return backend.synchronize();
  }

  Status restore() {
    for (size_t i = 0; i < work.size(); ++i) {
      size_t bytes = in.host[i].size();
      Status s = pristine[i]
                     ? backend.copyOnDevice(work[i], pristine[i], bytes)
                     : backend.copyToDevice(work[i], in.host[i].data(), bytes);
      if (!s)
        return s;
    }
    return {};
  }

  Status read(int buffer, std::string &out) {
    out.resize(in.host[buffer].size());
    return backend.copyToHost(out.data(), work[buffer], out.size());
  }

  /// The kernel parameter values and the pointer array the launch APIs take.
  /// With `outOfBounds` every pointer is moved 1 TiB past the buffers (the
  /// injected fault): a kernel compiled for a statically shaped memref reads
  /// only the aligned pointer, not the offset field.
  void params(bool outOfBounds, std::vector<uint64_t> &values,
              std::vector<void *> &pointers) const {
    const uint64_t away = outOfBounds ? uint64_t(1) << 40 : 0;
    values.clear();
    for (const ArgSpec &a : in.spec.args) {
      if (a.kind == ArgSpec::Kind::Scalar) {
        values.push_back(static_cast<uint64_t>(a.intValue)); // the type's bits
        continue;
      }
      uint64_t base = work[a.buffer] + away;
      if (a.kind == ArgSpec::Kind::Buffer) {
        values.push_back(base +
                         static_cast<uint64_t>(a.offset) *
                             elementSize(in.spec.buffers[a.buffer].type));
        continue;
      }
      values.insert(values.end(),
                    {base, base, static_cast<uint64_t>(a.offset)});
      values.insert(values.end(), a.sizes.begin(), a.sizes.end());
      values.insert(values.end(), a.strides.begin(), a.strides.end());
    }
    pointers.clear();
    for (uint64_t &v : values)
      pointers.push_back(&v);
  }

private:
  Backend &backend;
  const SweepInputs &in;
  std::vector<DevicePtr> work, pristine;
};

struct Loaded {
  ModuleHandle module = nullptr;
  FunctionHandle function = nullptr;
  std::string image;
};

class SweepWorker {
public:
  SweepWorker(const SweepInputs &in, Backend &backend,
              std::vector<VariantOutcome> outcomes, int referenceVariant,
              Channel &channel)
      : in(in), backend(backend), buffers(backend, in),
        outcomes(std::move(outcomes)), loaded(this->outcomes.size()),
        referenceVariant(referenceVariant), channel(channel) {}
  void run();

private:
  const SweepInputs &in;
  Backend &backend;
  DeviceBuffers buffers;
  std::vector<VariantOutcome> outcomes;
  std::vector<Loaded> loaded;
  int referenceVariant;
  Channel &channel;
  bool poisoned = false; ///< a sticky fault: this process is done

  void say(const std::string &line) {
    if (in.options.progress)
      in.options.progress(line);
  }
  void report(size_t i) {
    WorkerMessage m;
    m.kind = WorkerMessage::Kind::Outcome, m.variant = static_cast<int>(i);
    m.measurement = outcomes[i];
    channel.send(m);
  }
  Status load(size_t i) {
    Loaded &l = loaded[i];
    if (l.function)
      return {};
    if (l.image.empty()) {
      const ManifestObject *object = outcomes[i].variant->findKernel(in.kernel);
      Expected<std::string> image = readObject(*object);
      if (!image)
        return Status::error(toString(image.takeError()));
      l.image = std::move(*image);
    }
    if (Status s = backend.loadModule(l.image, l.module); !s)
      return s;
    return backend.getFunction(l.module, in.kernel, l.function);
  }
  Status launch(size_t i, bool outOfBounds, float *ms) {
    std::vector<uint64_t> values;
    std::vector<void *> pointers;
    buffers.params(outOfBounds, values, pointers);
    if (Status s = buffers.restore(); !s)
      return s;
    const LaunchSpec &spec = in.spec;
    if (ms)
      return backend.timedLaunch(loaded[i].function, spec.grid, spec.block,
                                 spec.sharedBytes, pointers.data(), *ms);
    if (Status s = backend.launch(loaded[i].function, spec.grid, spec.block,
                                  spec.sharedBytes, pointers.data());
        !s)
      return s;
    return backend.synchronize();
  }
  void done(size_t i, VariantState state, const std::string &message) {
    outcomes[i].state = state;
    outcomes[i].message = message;
    if (state != VariantState::Ok)
      say(outcomes[i].variant->id + ": " + stateName(state) + ": " + message);
    report(i);
  }
  void fail(size_t i, VariantState state, const Status &s,
            const std::string &what = "") {
    outcomes[i].timesMs.clear();
    done(i, state, what + s.message);
    if (!s.fault)
      return;
    poisoned = true;
    say("a fault poisons the device context of the whole process: "
        "continuing in a fresh worker process");
    channel.send(WorkerMessage::Kind::Restart);
  }
  void check(size_t i);
  void time();
};

void SweepWorker::check(size_t i) {
  VariantOutcome &out = outcomes[i];
  const ManifestVariant &v = *out.variant;
  const ManifestKernel *info = nullptr;
  const ManifestObject *object = v.findKernel(in.kernel, &info);
  if (!object)
    return done(i, VariantState::LoadFailed,
                "no object of this variant holds kernel '" + in.kernel + "'");
  if (info) {
    out.manifestRegisters = info->registers();
    out.manifestLocalBytes = info->localBytes();
  }
  if (object->file.empty())
    return done(i, VariantState::LoadFailed,
                "the manifest names no object file");
  if (object->format == "offload")
    return done(i, VariantState::LoadFailed,
                "format 'offload' (LLVM bitcode) cannot be loaded");
  if (Status s = load(i); !s)
    return fail(i, VariantState::LoadFailed, s);
  if (Status s = backend.getAttributes(loaded[i].function, out.driver); !s)
    return fail(i, VariantState::LoadFailed, s);
  report(i); // still pending, but the supervisor has the attributes if it hangs
  const Dim3 &block = in.spec.block;
  uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (out.driver.maxThreadsPerBlock > 0 &&
      threads > static_cast<uint64_t>(out.driver.maxThreadsPerBlock))
    return done(i, VariantState::LoadFailed,
                "cannot launch: a block of " + std::to_string(threads) +
                    " threads is more than the " +
                    std::to_string(out.driver.maxThreadsPerBlock) +
                    " the driver allows this kernel (" +
                    std::to_string(out.driver.registers) + " registers)");
  const std::string &inject = in.options.injectFault;
  if (Status s = launch(i, inject == v.id || inject == std::to_string(v.index),
                        nullptr);
      !s)
    return fail(i, VariantState::Faulted, s);

  std::vector<int> outputs = in.spec.outputs();
  std::vector<std::string> got(outputs.size());
  const Tolerance &tol = in.spec.tolerance;
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (Status s = buffers.read(outputs[o], got[o]); !s)
      return fail(i, VariantState::Faulted, s, "reading outputs: ");
    if (outputs[o] == in.hostRef.buffer)
      compareWithHost(in.hostRef, in.spec.buffers[outputs[o]], got[o], tol,
                      out.againstHost);
  }
  auto wrong = [&](const Comparison &c, const Twine &what) {
    done(i, VariantState::Wrong,
         formatv("{0} of {1} {2}; first: {3}", c.mismatches, c.checked,
                 what.str(), c.firstMismatch));
  };
  if (out.againstHost.mismatches)
    return wrong(out.againstHost,
                 (in.hostRef.bytes.empty() ? "sampled " : "") +
                     Twine("entries differ from the host reference"));
  bool first = referenceVariant < 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    MutableArrayRef<char> shared = in.shared[o];
    if (first)
      std::memcpy(shared.data(), got[o].data(), got[o].size());
    else
      compareBuffers(in.spec.buffers[outputs[o]], got[o],
                     StringRef(shared.data(), shared.size()), tol,
                     out.againstVariant);
  }
  const std::string &refId = outcomes[first ? i : referenceVariant].variant->id;
  if (out.againstVariant.mismatches)
    return wrong(out.againstVariant, "output elements differ from " + refId);
  if (first) {
    referenceVariant = static_cast<int>(i);
    channel.send(WorkerMessage::Kind::Reference, referenceVariant);
  }
  std::string line =
      formatv("{0}: loaded, {1} registers", v.id, out.driver.registers);
  if (out.manifestRegisters >= 0)
    line += out.registersMatch()
                ? " (= manifest)"
                : " (MISMATCH: manifest says " +
                      std::to_string(out.manifestRegisters) + ")";
  line += ", outputs ";
  if (in.hostRef.buffer >= 0)
    line += "match the host reference (" +
            std::to_string(out.againstHost.checked) + " entries)";
  if (!first)
    line +=
        std::string(in.hostRef.buffer >= 0 ? " and " : "") + "match " + refId;
  else if (in.hostRef.buffer < 0)
    line += "kept as the reference";
  say(line);
  done(i, VariantState::Ok, "");
}

void SweepWorker::time() {
  const TimingSpec &t = in.spec.timing;
  const SweepOptions &o = in.options;
  int warmup = o.warmup >= 0 ? o.warmup : t.warmup;
  int reps = o.repetitions > 0 ? o.repetitions : t.repetitions;
  int maxReps = std::max(
      o.maxRepetitions > 0 ? o.maxRepetitions : t.maxRepetitions, reps);
  double minTime = o.minTimeMs >= 0 ? o.minTimeMs : t.minTimeMs;

  std::vector<size_t> active;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].state != VariantState::Ok)
      continue;
    outcomes[i].timesMs.clear();
    // Variants checked by an earlier worker are loaded here.
    if (Status s = load(i); !s)
      fail(i, VariantState::LoadFailed, s);
    else
      active.push_back(i);
    if (poisoned)
      return;
  }
  auto timing = [&](size_t i, float &ms) {
    channel.send(WorkerMessage::Kind::Current, static_cast<int>(i));
    Status s = launch(i, false, &ms);
    if (!s)
      fail(i, VariantState::Faulted, s, "while timing: ");
    return static_cast<bool>(s);
  };
  // Warm-up, which also estimates how many runs fill min_time_ms.
  std::vector<int> target(outcomes.size(), 0);
  for (size_t i : active) {
    float ms = 0;
    bool ok = true;
    for (int w = 0; ok && w < std::max(warmup, 1); ++w)
      ok = timing(i, ms);
    if (poisoned)
      return;
    int n = ms > 0 ? static_cast<int>(std::min(std::ceil(minTime / ms), 1e9))
                   : maxReps;
    target[i] = ok ? std::clamp(n, reps, maxReps) : 0;
  }
  say("timing " + std::to_string(active.size()) +
      " variants, round-robin (each run starts from the initial buffers)");
  // Round-robin, so that clock and thermal drift spread over all variants.
  for (int round = 0; round < maxReps; ++round)
    for (size_t i : active) {
      float ms = 0;
      if (outcomes[i].state != VariantState::Ok || round >= target[i])
        continue;
      if (timing(i, ms))
        outcomes[i].timesMs.push_back(ms);
      if (poisoned)
        return;
    }
  for (size_t i : active)
    if (outcomes[i].state == VariantState::Ok)
      report(i);
}

void SweepWorker::run() {
  if (Status s = buffers.setUp(); !s)
    return channel.send(WorkerMessage::Kind::Fatal, -1,
                        "setting up the buffers: " + s.message);
  for (size_t i = 0; i < outcomes.size() && !poisoned; ++i)
    if (outcomes[i].state == VariantState::Pending) {
      channel.send(WorkerMessage::Kind::Current, static_cast<int>(i));
      check(i);
    }
  if (!poisoned)
    time();
  if (!poisoned)
    channel.send(WorkerMessage::Kind::Done);
}

} // namespace

void runSweepWorker(const SweepInputs &inputs, Backend &backend,
                    std::vector<VariantOutcome> outcomes, int referenceVariant,
                    Channel &channel) {
  SweepWorker(inputs, backend, std::move(outcomes), referenceVariant, channel)
      .run();
}

} // namespace fly::rt
