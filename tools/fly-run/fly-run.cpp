//===- fly-run.cpp - Launch, check and time every variant of a sweep ------===//
//
//   fly-run <out-dir> <launch-spec.json> [options]
//
// Loads each variant fly-tune wrote to <out-dir> on a real GPU (CUDA driver
// API for nvvm targets, HIP for rocdl), cross-checks the driver's register
// count with the compile-time metadata, checks every variant's outputs
// against the reference, times the ones that pass and prints a table with
// the winner. The winner is stored per (kernel, chip, device) in a
// best-config file and reused on the next run unless --retune.
//
// Links LLVM's support libraries statically and CUDA/HIP not at all, so it
// can be copied to a GPU machine on its own.
//
// Exit status: 0 all variants passed; 2 some were excluded (the winner is
// among the rest); 1 error, or no variant passed; 77 no device (skipped).
//
//===----------------------------------------------------------------------===//

#include "fly/Runtime/BestConfig.h"
#include "fly/Runtime/Report.h"
#include "fly/Runtime/Sweep.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <ctime>

using namespace llvm;
using namespace fly::rt;

namespace {

constexpr int kExitOk = 0, kExitError = 1, kExitPartial = 2, kExitNoDevice = 77;

cl::OptionCategory category("fly-run options");
cl::list<std::string> positional(cl::Positional,
                                 cl::desc("<out-dir> <launch-spec.json>"),
                                 cl::cat(category));
cl::opt<std::string> backendOpt(
    "backend", cl::init("auto"), cl::cat(category),
    cl::desc("auto (cuda for nvvm targets, hip for rocdl), cuda or hip"));
cl::opt<int> device("device", cl::init(0), cl::desc("device ordinal"),
                    cl::cat(category));
cl::list<std::string>
    only("variants", cl::CommaSeparated, cl::cat(category),
         cl::desc("run only these variants (ids or indices)"));
cl::opt<int> warmup("warmup", cl::init(-1), cl::cat(category),
                    cl::desc("warm-up runs per variant (default: the spec's)"));
cl::opt<int> reps("reps", cl::init(-1), cl::cat(category),
                  cl::desc("at least this many timed runs per variant"));
cl::opt<int> maxReps("max-reps", cl::init(-1), cl::cat(category),
                     cl::desc("at most this many timed runs per variant"));
cl::opt<double> minTimeMs("min-time-ms", cl::init(-1), cl::cat(category),
                          cl::desc("time each variant at least this long"));
cl::opt<std::string> bestConfigPath(
    "best-config", cl::cat(category),
    cl::desc("where winners are stored (default <out-dir>/best-config.json)"));
cl::opt<bool> retune("retune", cl::cat(category),
                     cl::desc("measure even if a stored winner matches"));
cl::opt<std::string>
    jsonOut("json", cl::cat(category),
            cl::desc("write every measurement as JSON to this file"));
cl::opt<double>
    variantTimeout("variant-timeout", cl::init(300), cl::cat(category),
                   cl::desc("kill a worker silent for this many seconds (a "
                            "hung kernel) and exclude its variant"));
cl::opt<std::string>
    injectFault("inject-fault", cl::cat(category),
                cl::desc("launch this variant out of bounds (testing)"));
cl::opt<bool> probeOnly("probe", cl::cat(category),
                        cl::desc("only report whether a device is there"));
cl::opt<bool> quiet("quiet", cl::cat(category), cl::desc("no progress lines"));

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

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

BestConfig winnerEntry(const SweepResult &r, const SweepManifest &manifest,
                       const LaunchSpec &spec, std::string key,
                       std::string print) {
  const VariantOutcome &w = r.variants[r.winner];
  BestConfig c{std::move(key),    r.kernel,      manifest.target,
               r.device.name,     w.variant->id, w.variant->hints,
               w.variant->hintSet};
  c.medianMs = w.stats.median;
  if (r.baseline >= 0) {
    c.defaultMedianMs = r.variants[r.baseline].stats.median;
    c.speedupVsDefault = *c.defaultMedianMs / w.stats.median;
  }
  c.registers = w.driver.registers;
  c.fingerprint = std::move(print);
  c.outDir = manifest.dir, c.spec = spec.path, c.tunedAt = nowUtc();
  return c;
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "fly-run: load, check and time every "
                              "variant of a fly-tune out-dir\n\nexit status: 0 "
                              "all passed, 2 some variants excluded, 1 error, "
                              "77 no device (skipped)\n");
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
  outs() << formatv("device {0}: {1} ({2}, {3} backend{4}{5})\n", dev.ordinal,
                    dev.name, dev.arch, label,
                    dev.runtimeVersion.empty() ? "" : ", ", dev.runtimeVersion)
         << formatv("variants: {0} of kernel {1} for {2} in {3}\n",
                    manifest->variants.size(), *kernel, manifest->target,
                    manifest->dir)
         << formatv(
                "launch: grid {0}x{1}x{2}, block {3}x{4}x{5}, {6} parameters, "
                "{7} buffers ({8:F1} MiB)\n",
                spec->grid.x, spec->grid.y, spec->grid.z, spec->block.x,
                spec->block.y, spec->block.z, spec->params().size(),
                spec->buffers.size(), spec->totalBytes() / double(1 << 20));
  if (!manifest->chip.empty() && !dev.arch.empty() &&
      manifest->chip != dev.arch)
    errs() << "fly-run: warning: the variants were compiled for "
           << manifest->chip << ", the device is " << dev.arch << "\n";

  // A stored winner for this kernel, chip and device?
  std::string key = *kernel + "|" + manifest->target + "|" + dev.name;
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
  if (const BestConfig *stored = store->find(key)) {
    if (retune)
      outs() << "best config: stored for " << key
             << "; --retune: measuring again\n";
    else if (stored->fingerprint != print)
      outs() << "best config: the one stored for " << key << " is stale (other "
             << "objects, hints or launch spec): measuring again\n";
    else {
      outs() << formatv("best config (stored {0} in {1}):\n  {2}: variant {3}, "
                        "hints {4}, {5:F4} ms median, {6:F2}x vs the default "
                        "hint set\npass --retune to measure again\n",
                        stored->tunedAt, storePath, key, stored->variant,
                        stored->hints.empty() ? "(default)" : stored->hints,
                        stored->medianMs, stored->speedupVsDefault.value_or(0));
      return kExitOk;
    }
  }

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
  outs().flush();
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

  const VariantOutcome &w = r->variants[r->winner];
  outs() << formatv("winner: {0} ({1}): {2:F4} ms median", w.variant->id,
                    w.variant->hints.empty() ? "default hints"
                                             : w.variant->hints,
                    w.stats.median);
  if (r->baseline >= 0) {
    const VariantOutcome &b = r->variants[r->baseline];
    outs() << formatv(", {0:F2}x vs the {1} hint set ({2}, {3:F4} ms)\n",
                      b.stats.median / w.stats.median,
                      b.variant->hints.empty() ? "default" : "first",
                      b.variant->id, b.stats.median);
  } else {
    outs() << " (the default hint set did not pass: no speedup)\n";
  }
  store->put(winnerEntry(*r, *manifest, *spec, key, print));
  if (Error e = store->save())
    errs() << "fly-run: warning: cannot write " << storePath << ": "
           << toString(std::move(e)) << "\n";
  else
    outs() << "best config: stored for " << key << " in " << storePath << "\n";
  if (!r->fatal.empty())
    return kExitError;
  return excluded ? kExitPartial : kExitOk;
}
