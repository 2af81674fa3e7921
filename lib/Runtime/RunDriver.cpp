//===- RunDriver.cpp - fly-run's steps over the sweep runner --------------===//

#include "fly/Runtime/RunDriver.h"

#include "Runtime/BestConfig.h"
#include "Runtime/Report.h"
#include "Runtime/Sweep.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace fly::rt {

namespace {

int fail(const Twine &message) {
  errs() << "fly-run: error: " << message << "\n";
  return kRunError;
}
int fail(Error error) { return fail(toString(std::move(error))); }

StringRef getBackendName(RunBackend backend) {
  switch (backend) {
  case RunBackend::Auto:
    return "auto";
  case RunBackend::Cuda:
    return "cuda";
  case RunBackend::Hip:
    return "hip";
  }
  return "auto";
}

/// --probe: reports the device.
int probe(const RunOptions &o) {
  StringRef label = o.backend == RunBackend::Hip ? "HIP" : "CUDA";
  DeviceInfo d;
  std::string message;
  OpenResult r = probeDevice(backendFactory(getBackendName(o.backend)),
                             o.device, d, message);
  if (r != OpenResult::Ok) {
    outs() << "no " << label << " device: " << message << "\n";
    return r == OpenResult::Error ? kRunError : kRunNoDevice;
  }
  outs() << formatv("{0} device {1}: {2} ({3}, {4:F1} GiB, {5})\n", label,
                    d.ordinal, d.name, d.arch, d.totalMemory / double(1 << 30),
                    d.runtimeVersion);
  return kRunOk;
}

/// Reports a stored winner that still matches; true if it does.
bool reportStored(const BestConfigStore &store, StringRef key, StringRef print,
                  bool retune) {
  const BestConfig *stored = store.find(key);
  if (!stored)
    return false;
  if (retune || stored->fingerprint != print) {
    outs() << "best config: "
           << (retune ? "stored for " + key + "; --retune: measuring again\n"
                      : "the one stored for " + key +
                            " is stale (other objects, hints or launch "
                            "spec): measuring again\n");
    return false;
  }
  outs() << formatv("best config (stored {0} in {1}):\n  {2}: variant {3}, "
                    "hints {4}, {5:F4} ms median, {6:F2}x vs the default "
                    "hint set\npass --retune to measure again\n",
                    stored->tunedAt, store.file(), key, stored->variant,
                    stored->hints.empty() ? "(default)" : stored->hints,
                    stored->medianMs, stored->speedupVsDefault.value_or(0));
  return true;
}

} // namespace

int runFlyRun(const RunOptions &o) {
  if (o.device < 0 || o.warmup < -1 || o.reps < -1 || o.maxReps < -1 ||
      !(o.variantTimeout > 0))
    return fail("--device, --warmup, --reps and --max-reps want non-negative "
                "integers, --variant-timeout a positive number of seconds");
  if (o.probe)
    return probe(o);
  if (o.arguments.size() != 2)
    return fail("expected <out-dir> and <launch-spec.json>, got " +
                Twine(o.arguments.size()) + " argument(s) (see --help)");

  // Everything that can be checked without a device comes first.
  Expected<SweepManifest> manifest = readSweepManifest(o.arguments[0]);
  if (!manifest)
    return fail(manifest.takeError());
  Expected<LaunchSpec> spec = readLaunchSpec(o.arguments[1]);
  if (!spec)
    return fail(spec.takeError());
  Expected<std::string> kernel = checkSpecAgainstManifest(*spec, *manifest);
  if (!kernel)
    return fail(kernel.takeError());
  for (const std::string &want : o.only)
    if (none_of(manifest->variants, [&](const ManifestVariant &v) {
          return want == v.id || want == std::to_string(v.index);
        }))
      return fail("--variants: no variant '" + want + "' in " + manifest->dir);
  std::string backend = getBackendName(o.backend).str();
  if (backend == "auto" && manifest->family != "nvvm" &&
      manifest->family != "rocdl")
    return fail("cannot tell the backend from target '" + manifest->target +
                "': pass --backend=cuda or --backend=hip");
  if (backend == "auto")
    backend = manifest->family == "nvvm" ? "cuda" : "hip";
  StringRef label = backend == "hip" ? "HIP" : "CUDA";

  // This process never touches the GPU (so it can fork workers that do):
  // the device is opened in a child, here and for the sweep.
  DeviceInfo dev;
  std::string why;
  OpenResult opened = probeDevice(backendFactory(backend), o.device, dev, why);
  if (opened == OpenResult::NoRuntime || opened == OpenResult::NoDevice) {
    errs() << "fly-run: no " << label << " device: " << why << "\n"
           << "fly-run: skipped: nothing was run (exit status 77)\n";
    return kRunNoDevice;
  }
  if (opened == OpenResult::Error)
    return fail("opening the " + label + " device: " + why);
  printHeader(outs(), dev, label, *manifest, *spec, *kernel);
  // A gpu.module with several targets: each variant loads its object for
  // this device's chip.
  std::string chipNote;
  if (StringRef(dev.arch).starts_with("sm_") && dev.arch.size() >= 5)
    chipNote =
        formatv(", compute capability {0}.{1}",
                StringRef(dev.arch).drop_front(3).drop_back(1), dev.arch.back())
            .str();
  for (const std::string &line :
       selectObjectsForChip(*manifest, dev.arch, chipNote))
    if (!o.quiet)
      errs() << "fly-run: " << line << "\n";

  // A stored winner for this kernel, chip and device?
  // The chip of the objects loaded, not the manifest's list of targets.
  std::string key = *kernel + "|" +
                    (manifest->chip.empty() ? manifest->family + ":" + dev.arch
                                            : manifest->target) +
                    "|" + dev.name;
  std::string print = fingerprint(*manifest, *spec);
  std::string storePath = o.bestConfigPath.empty()
                              ? manifest->dir + "/best-config.json"
                              : o.bestConfigPath;
  Expected<BestConfigStore> store = BestConfigStore::load(storePath);
  if (!store) {
    errs() << "fly-run: warning: ignoring unreadable " << storePath << ": "
           << toString(store.takeError()) << "\n";
    store = BestConfigStore(storePath);
  }
  if (reportStored(*store, key, print, o.retune))
    return kRunOk;

  SweepOptions options{backendFactory(backend),
                       o.device,
                       o.variantTimeout,
                       o.warmup,
                       o.reps,
                       o.maxReps,
                       o.minTimeMs,
                       o.only,
                       o.injectFault};
  if (!o.quiet)
    options.progress = [](const std::string &line) {
      errs() << "fly-run: " << line << "\n";
    };
  Expected<SweepResult> r = runSweep(*spec, *manifest, *kernel, options);
  if (!r)
    return fail(r.takeError());
  int excluded = printReport(outs(), *r, *manifest, *spec);
  if (!r->fatal.empty())
    errs() << "fly-run: error: " << r->fatal << "\n";
  if (!o.jsonOut.empty())
    if (Error e = writeToOutput(o.jsonOut, [&](raw_ostream &os) {
          os << formatv("{0:2}", reportToJSON(*r, *manifest, *spec, label))
             << "\n";
          return Error::success();
        }))
      errs() << "fly-run: warning: " << toString(std::move(e)) << "\n";
  if (r->winner < 0)
    return fail("no variant passed: nothing to pick");
  printWinner(outs(), *r);
  store->put(BestConfig::forWinner(*r, *manifest, *spec, key, print));
  if (Error e = store->save())
    errs() << "fly-run: warning: cannot write " << storePath << ": "
           << toString(std::move(e)) << "\n";
  else
    outs() << "best config: stored for " << key << " in " << storePath << "\n";
  if (!r->fatal.empty())
    return kRunError;
  return excluded ? kRunPartial : kRunOk;
}

} // namespace fly::rt
