//===- Sweep.cpp - The supervisor: workers, restarts, the winner ----------===//

#include "Runtime/Sweep.h"

#include "Runtime/SweepWorker.h"

#include "llvm/ADT/ScopeExit.h"

#include <sys/mman.h>

using namespace llvm;

namespace fly::rt {

BackendFactory backendFactory(StringRef name) {
  if (name == "hip")
    return [](std::string &why) { return createHipBackend(why); };
  return [](std::string &) { return createCudaBackend(); };
}

OpenResult probeDevice(const BackendFactory &make, int ordinal,
                       DeviceInfo &info, std::string &message) {
  std::optional<OpenResult> result;
  Error error =
      runWorker([&](Channel &channel) { openDevice(make, ordinal, channel); },
                [&](const WorkerMessage &m) {
                  if (m.kind == WorkerMessage::Kind::Device)
                    info = m.device, result = OpenResult::Ok;
                  else if (m.kind == WorkerMessage::Kind::OpenFailed)
                    message = m.text, result = m.open;
                },
                120);
  if (result) {
    consumeError(std::move(error));
    return *result;
  }
  message = error ? "device probe: " + toString(std::move(error))
                  : "the device probe reported nothing";
  return OpenResult::Error;
}

Expected<SweepResult> runSweep(const LaunchSpec &spec,
                               const SweepManifest &manifest,
                               const std::string &kernel,
                               const SweepOptions &options) {
  SweepResult result;
  result.kernel = kernel;
  auto say = [&](const std::string &line) {
    if (options.progress)
      options.progress(line);
  };
  for (const ManifestVariant &v : manifest.variants) {
    VariantOutcome &out = result.variants.emplace_back();
    out.variant = &v;
    const ManifestObject *object = v.findKernel(kernel);
    out.objectFile = object ? object->file : "";
    bool selected = options.only.empty() || is_contained(options.only, v.id) ||
                    is_contained(options.only, std::to_string(v.index));
    out.state = !v.ok       ? VariantState::NotCompiled
                : !selected ? VariantState::Skipped
                            : VariantState::Pending;
    if (!v.ok)
      out.message = StringRef(v.error).split('\n').first.str();
  }

  // Inputs and the host reference once, here; workers inherit them.
  Expected<std::vector<std::string>> host = initializeBuffers(spec);
  if (!host)
    return host.takeError();
  SweepInputs in{spec, manifest, kernel, options, std::move(*host), {}, {}};
  Expected<HostReference> ref = computeHostReference(spec, in.host);
  if (!ref)
    return ref.takeError();
  in.hostRef = std::move(*ref);
  result.hostSamples = in.hostRef.entries;
  if (spec.reference && spec.reference->kind == ReferenceSpec::Kind::Matmul)
    say("host reference: C = A * B in double at " +
        std::to_string(result.hostSamples) + " entries");
  uint64_t sharedBytes = 1;
  for (int o : spec.outputs())
    sharedBytes += spec.buffers[o].bytes();
  void *mem = mmap(nullptr, sharedBytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot map %llu bytes for the reference outputs",
                             (unsigned long long)sharedBytes);
  scope_exit unmap([&] { munmap(mem, sharedBytes); });
  char *next = static_cast<char *>(mem);
  for (int o : spec.outputs()) {
    in.shared.emplace_back(next, spec.buffers[o].bytes());
    next += spec.buffers[o].bytes();
  }

  // One worker, plus one more after each fault; each fault excludes a
  // variant, so this ends.
  for (bool finished = false; !finished && result.fatal.empty();) {
    if (result.workers >= static_cast<int>(result.variants.size()) + 2) {
      result.fatal = "giving up after " + std::to_string(result.workers) +
                     " worker processes";
      break;
    }
    ++result.workers;
    bool restart = false;
    int current = -1;
    std::optional<WorkerMessage> openFailed;
    Error died = runWorker(
        [&](Channel &channel) {
          if (std::unique_ptr<Backend> backend =
                  openDevice(options.makeBackend, options.device, channel))
            runSweepWorker(in, *backend, result.variants,
                           result.referenceVariant, channel);
        },
        [&](const WorkerMessage &m) {
          bool known = m.variant >= 0 &&
                       m.variant < static_cast<int>(result.variants.size());
          using Kind = WorkerMessage::Kind;
          if (m.kind == Kind::Device)
            result.device = m.device;
          else if (m.kind == Kind::OpenFailed)
            openFailed = m;
          else if (m.kind == Kind::Current)
            current = m.variant;
          else if (m.kind == Kind::Outcome && known)
            static_cast<Measurement &>(result.variants[m.variant]) =
                m.measurement;
          else if (m.kind == Kind::Reference)
            result.referenceVariant = known ? m.variant : -1;
          restart |= m.kind == Kind::Restart;
          finished |= m.kind == Kind::Done;
          if (m.kind == Kind::Fatal)
            result.fatal = m.text;
        },
        options.variantTimeoutS);
    if (openFailed) {
      consumeError(std::move(died));
      return createStringError("the device could not be opened for the "
                               "sweep: " +
                               openFailed->text);
    }
    if (finished || restart || !result.fatal.empty()) {
      consumeError(std::move(died));
      continue;
    }
    std::string why = died ? toString(std::move(died))
                           : "the worker process stopped without finishing";
    if (current < 0 || current >= static_cast<int>(result.variants.size())) {
      result.fatal = why;
      break;
    }
    // The worker died or hung: blame the variant it was running.
    VariantOutcome &out = result.variants[current];
    out.state = VariantState::Faulted;
    out.message = why;
    out.timesMs.clear();
    say(out.variant->id + ": FAULT: " + why + "; continuing in a fresh worker");
  }

  for (size_t i = 0; i < result.variants.size(); ++i) {
    VariantOutcome &out = result.variants[i];
    if (out.state == VariantState::Pending)
      out.state = VariantState::Skipped, out.message = "not run";
    out.stats = computeStats(out.timesMs);
    if (out.state == VariantState::Ok && out.timesMs.empty() &&
        result.fatal.empty())
      out.state = VariantState::Faulted, out.message = "no timing";
    if (out.state == VariantState::Ok && !out.timesMs.empty() &&
        (result.winner < 0 ||
         out.stats.median < result.variants[result.winner].stats.median))
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
