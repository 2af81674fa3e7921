//===- fly-run.cpp - Launch, check and time every variant of a sweep ------===//
//
//   fly-run <out-dir> <launch-spec.json> [options]
//
// Loads, checks and times every variant fly-tune wrote to <out-dir> on a GPU
// and stores the winner (README.md, "fly-run"). Links LLVM's support
// libraries statically and CUDA/HIP not at all: it can travel on its own.
//
//===----------------------------------------------------------------------===//

#include "fly/Runtime/BestConfig.h"
#include "fly/Runtime/Report.h"
#include "fly/Runtime/Sweep.h"
#include "fly/Support/ToolHelp.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace fly::rt;

namespace {

constexpr int kExitOk = 0, kExitError = 1, kExitPartial = 2, kExitNoDevice = 77;

// Only fly-run's options and LLVM's generic ones (--help, --version) are
// registered: the static support libraries bring no others.
cl::list<std::string> positional(cl::Positional,
                                 cl::desc("<out-dir> <launch-spec.json>"));
cl::opt<std::string> backendOpt("backend", cl::init("auto"),
                                cl::desc("auto, cuda or hip"));
cl::opt<int> device("device", cl::desc("device ordinal"));
cl::list<std::string> only("variants", cl::CommaSeparated,
                           cl::desc("run only these variants (ids, indices)"));
cl::opt<int> warmup("warmup", cl::init(-1), cl::desc("warm-up runs"));
cl::opt<int> reps("reps", cl::init(-1), cl::desc("at least N timed runs"));
cl::opt<int> maxReps("max-reps", cl::init(-1),
                     cl::desc("at most N timed runs"));
cl::opt<double> minTimeMs("min-time-ms", cl::init(-1),
                          cl::desc("time each variant >= this many ms"));
cl::opt<std::string> bestConfigPath("best-config", cl::desc("stored winners"));
cl::opt<bool> retune("retune", cl::desc("measure even if a winner is stored"));
cl::opt<std::string> jsonOut("json", cl::desc("write the measurements here"));
cl::opt<double> variantTimeout("variant-timeout", cl::init(300),
                               cl::desc("seconds until a hung worker dies"));
cl::opt<std::string> injectFault("inject-fault", cl::desc("fault this one"));
cl::opt<bool> probeOnly("probe", cl::desc("only report the device"));
cl::opt<bool> quiet("quiet", cl::desc("no progress lines"));

int fail(const Twine &message) {
  errs() << "fly-run: error: " << message << "\n";
  return kExitError;
}
int fail(Error error) { return fail(toString(std::move(error))); }

int probe() {
  StringRef label = backendOpt == "hip" ? "HIP" : "CUDA";
  DeviceInfo d;
  std::string message;
  OpenResult r = probeDevice(backendFactory(backendOpt), device, d, message);
  if (r != OpenResult::Ok) {
    outs() << "no " << label << " device: " << message << "\n";
    return r == OpenResult::Error ? kExitError : kExitNoDevice;
  }
  outs() << formatv("{0} device {1}: {2} ({3}, {4:F1} GiB, {5})\n", label,
                    d.ordinal, d.name, d.arch, d.totalMemory / double(1 << 30),
                    d.runtimeVersion);
  return kExitOk;
}

/// Reports a stored winner that still matches; true if it does.
bool reportStored(const BestConfigStore &store, StringRef key,
                  StringRef print) {
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

int main(int argc, char **argv) {
  fly::addVersionPrinter();
  cl::ParseCommandLineOptions(argc, argv,
                              "fly-run: load, check and time every variant of "
                              "a fly-tune out-dir\n\nexit status: 0 all "
                              "passed, 2 some variants excluded, 1 error, 77 "
                              "no device (skipped)\n");
  if (backendOpt != "auto" && backendOpt != "cuda" && backendOpt != "hip")
    return fail("--backend must be auto, cuda or hip, got '" + backendOpt +
                "'");
  if (device < 0 || warmup < -1 || reps < -1 || maxReps < -1 ||
      !(variantTimeout > 0))
    return fail("--device, --warmup, --reps and --max-reps want non-negative "
                "integers, --variant-timeout a positive number of seconds");
  if (probeOnly)
    return probe();
  if (positional.size() != 2)
    return fail("expected <out-dir> and <launch-spec.json>, got " +
                Twine(positional.size()) + " argument(s) (see --help)");

  // Everything that can be checked without a device comes first.
  Expected<SweepManifest> manifest = readSweepManifest(positional[0]);
  if (!manifest)
    return fail(manifest.takeError());
  Expected<LaunchSpec> spec = readLaunchSpec(positional[1]);
  if (!spec)
    return fail(spec.takeError());
  Expected<std::string> kernel = checkSpecAgainstManifest(*spec, *manifest);
  if (!kernel)
    return fail(kernel.takeError());
  for (const std::string &want : only)
    if (none_of(manifest->variants, [&](const ManifestVariant &v) {
          return want == v.id || want == std::to_string(v.index);
        }))
      return fail("--variants: no variant '" + want + "' in " + manifest->dir);
  std::string backend = backendOpt;
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
  OpenResult opened = probeDevice(backendFactory(backend), device, dev, why);
  if (opened == OpenResult::NoRuntime || opened == OpenResult::NoDevice) {
    errs() << "fly-run: no " << label << " device: " << why << "\n"
           << "fly-run: skipped: nothing was run (exit status 77)\n";
    return kExitNoDevice;
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
    if (!quiet)
      errs() << "fly-run: " << line << "\n";

  // A stored winner for this kernel, chip and device?
  // The chip of the objects loaded, not the manifest's list of targets.
  std::string key = *kernel + "|" +
                    (manifest->chip.empty() ? manifest->family + ":" + dev.arch
                                            : manifest->target) +
                    "|" + dev.name;
  std::string print = fingerprint(*manifest, *spec);
  std::string storePath = bestConfigPath.empty()
                              ? manifest->dir + "/best-config.json"
                              : bestConfigPath.getValue();
  Expected<BestConfigStore> store = BestConfigStore::load(storePath);
  if (!store) {
    errs() << "fly-run: warning: ignoring unreadable " << storePath << ": "
           << toString(store.takeError()) << "\n";
    store = BestConfigStore(storePath);
  }
  if (reportStored(*store, key, print))
    return kExitOk;

  SweepOptions options{backendFactory(backend),
                       device,
                       variantTimeout,
                       warmup,
                       reps,
                       maxReps,
                       minTimeMs,
                       only,
                       injectFault};
  if (!quiet)
    options.progress = [](const std::string &line) {
      errs() << "fly-run: " << line << "\n";
    };
  Expected<SweepResult> r = runSweep(*spec, *manifest, *kernel, options);
  if (!r)
    return fail(r.takeError());
  int excluded = printReport(outs(), *r, *manifest, *spec);
  if (!r->fatal.empty())
    errs() << "fly-run: error: " << r->fatal << "\n";
  if (!jsonOut.empty())
    if (Error e = writeToOutput(jsonOut, [&](raw_ostream &os) {
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
    return kExitError;
  return excluded ? kExitPartial : kExitOk;
}
