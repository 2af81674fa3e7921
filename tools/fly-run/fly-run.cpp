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
// Links only the runtime layer and libdl: no MLIR, no LLVM, no CUDA or HIP
// at link time, so it can be copied to a GPU machine on its own.
//
// Exit status: 0 all variants passed; 2 some were excluded (the winner is
// among the rest); 1 error, or no variant passed; 77 no device (skipped).
//
//===----------------------------------------------------------------------===//

#include "fly/Runtime/Backend.h"
#include "fly/Runtime/Json.h"
#include "fly/Runtime/LaunchSpec.h"
#include "fly/Runtime/Sweep.h"
#include "fly/Runtime/SweepManifest.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace fly::rt;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitPartial = 2;
constexpr int kExitNoDevice = 77;

struct Options {
  std::string outDir, specPath;
  std::string backend = "auto";
  int device = 0;
  std::string bestConfig;
  std::string jsonOut;
  bool retune = false;
  bool probe = false;
  bool quiet = false;
  SweepOptions sweep;
};

void usage(FILE *to) {
  std::fprintf(
      to,
      "usage: fly-run <out-dir> <launch-spec.json> [options]\n"
      "       fly-run --probe [--backend=cuda|hip] [--device=N]\n"
      "\n"
      "Loads every variant fly-tune wrote to <out-dir>, checks its outputs,\n"
      "times it and picks the winner.\n"
      "\n"
      "  --backend=auto|cuda|hip  auto: cuda for nvvm targets, hip for rocdl\n"
      "  --device=N               device ordinal (default 0)\n"
      "  --variants=ID,ID,...     run only these variants (ids or indices)\n"
      "  --warmup=N --reps=N --max-reps=N --min-time-ms=X\n"
      "                           override the spec's \"timing\": each variant\n"
      "                           gets N warm-up runs, then at least --reps\n"
      "                           timed runs and as many more as fill\n"
      "                           --min-time-ms, up to --max-reps\n"
      "  --best-config=FILE       where winners are stored (default\n"
      "                           <out-dir>/best-config.json)\n"
      "  --retune                 measure even if a stored winner matches\n"
      "  --json=FILE              write every measurement as JSON\n"
      "  --variant-timeout=S      kill a worker silent for S seconds (a hung\n"
      "                           kernel) and exclude its variant (default 300)\n"
      "  --inject-fault=ID        launch variant ID out of bounds (testing)\n"
      "  --probe                  only report whether a device is there\n"
      "  --quiet                  no progress lines\n"
      "\n"
      "exit status: 0 all passed, 2 some variants excluded, 1 error,\n"
      "77 no device (skipped)\n");
}

bool parseInt(const std::string &text, int &out) {
  char *end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || v < 0 || v > 1000000)
    return false;
  out = static_cast<int>(v);
  return true;
}

/// Returns -1 to continue, else an exit code.
int parseArgs(int argc, char **argv, Options &o) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *name, std::string &out) {
      std::string prefix = std::string(name) + "=";
      if (arg.rfind(prefix, 0) != 0)
        return false;
      out = arg.substr(prefix.size());
      return true;
    };
    auto intValue = [&](const char *name, int &out) {
      std::string text;
      if (!value(name, text))
        return false;
      if (!parseInt(text, out)) {
        std::fprintf(stderr, "fly-run: error: %s wants a non-negative "
                             "integer, got '%s'\n", name, text.c_str());
        std::exit(kExitError);
      }
      return true;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return kExitOk;
    } else if (arg == "--retune") {
      o.retune = true;
    } else if (arg == "--probe") {
      o.probe = true;
    } else if (arg == "--quiet") {
      o.quiet = true;
    } else if (value("--backend", o.backend) ||
               intValue("--device", o.device) ||
               value("--best-config", o.bestConfig) ||
               value("--json", o.jsonOut) ||
               value("--inject-fault", o.sweep.injectFault) ||
               intValue("--warmup", o.sweep.warmup) ||
               intValue("--reps", o.sweep.repetitions) ||
               intValue("--max-reps", o.sweep.maxRepetitions)) {
    } else if (value("--variant-timeout", text)) {
      char *end = nullptr;
      o.sweep.variantTimeoutS = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || o.sweep.variantTimeoutS <= 0) {
        std::fprintf(stderr, "fly-run: error: --variant-timeout wants a "
                             "positive number of seconds, got '%s'\n",
                     text.c_str());
        return kExitError;
      }
    } else if (value("--min-time-ms", text)) {
      char *end = nullptr;
      o.sweep.minTimeMs = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || o.sweep.minTimeMs < 0) {
        std::fprintf(stderr, "fly-run: error: --min-time-ms wants a "
                             "non-negative number, got '%s'\n", text.c_str());
        return kExitError;
      }
    } else if (value("--variants", text)) {
      size_t start = 0;
      while (start <= text.size()) {
        size_t comma = text.find(',', start);
        std::string item = text.substr(start, comma - start);
        if (!item.empty())
          o.sweep.only.push_back(item);
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "fly-run: error: unknown option '%s' (see --help)\n",
                   arg.c_str());
      return kExitError;
    } else {
      positional.push_back(arg);
    }
  }
  if (o.backend != "auto" && o.backend != "cuda" && o.backend != "hip") {
    std::fprintf(stderr, "fly-run: error: --backend must be auto, cuda or "
                         "hip, got '%s'\n", o.backend.c_str());
    return kExitError;
  }
  if (o.probe)
    return -1;
  if (positional.size() != 2) {
    std::fprintf(stderr, "fly-run: error: expected <out-dir> and "
                         "<launch-spec.json>, got %zu argument(s)\n",
                 positional.size());
    usage(stderr);
    return kExitError;
  }
  o.outDir = positional[0];
  o.specPath = positional[1];
  if (o.bestConfig.empty())
    o.bestConfig = o.outDir + "/best-config.json";
  return -1;
}

std::string fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *format, ...) {
  char buf[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

uint64_t fnv1a(const std::string &text, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : text)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

/// What a stored winner is valid for: the same objects, hints and spec.
std::string fingerprint(const SweepManifest &manifest,
                        const std::string &specText) {
  uint64_t h = fnv1a(specText);
  for (const ManifestVariant &v : manifest.variants)
    h = fnv1a(v.id + "|" + v.hints + "|" + v.objectHash + "\n", h);
  return fmt("%016llx", static_cast<unsigned long long>(h));
}

bool writeText(const std::string &path, const std::string &text,
               std::string &error) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      error = "cannot write '" + path + "': " + std::strerror(errno);
      return false;
    }
    out << text;
    if (!out.flush()) {
      error = "cannot write '" + path + "'";
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

std::string hintsLabel(const std::string &hints) {
  return hints.empty() ? "(default)" : hints;
}

std::string numberOrDash(int64_t v) {
  return v < 0 ? "-" : std::to_string(v);
}

BackendFactory backendFactory(const std::string &name) {
  if (name == "hip")
    return [](std::string &why) { return createHipBackend(why); };
  return [](std::string &) { return createCudaBackend(); };
}

int probe(Options &o) {
  bool hip = o.backend == "hip";
  const char *label = hip ? "HIP" : "CUDA";
  DeviceInfo d;
  std::string message;
  OpenResult r = probeDevice(backendFactory(hip ? "hip" : "cuda"), o.device, d,
                             message);
  if (r != OpenResult::Ok) {
    std::printf("no %s device: %s\n", label, message.c_str());
    return r == OpenResult::Error ? kExitError : kExitNoDevice;
  }
  std::printf("%s device %d: %s (%s, %.1f GiB, %s)\n", label, d.ordinal,
              d.name.c_str(), d.arch.c_str(),
              static_cast<double>(d.totalMemory) / (1u << 30),
              d.runtimeVersion.c_str());
  return kExitOk;
}

json::Value outcomeToJson(const VariantOutcome &v, const SweepResult &r) {
  json::Value out;
  out["index"] = v.index;
  out["id"] = v.id;
  out["hints"] = v.hints;
  out["hint_set"] = v.hintSet;
  out["state"] = stateName(v.state);
  if (!v.message.empty())
    out["message"] = v.message;
  out["object"] = v.objectFile;
  out["registers_manifest"] = v.manifestRegisters;
  out["registers_driver"] = v.driver.registers;
  out["registers_match"] = v.registersMatch();
  out["local_bytes_manifest"] = v.manifestLocalBytes;
  out["local_bytes_driver"] = v.driver.localBytes;
  out["shared_bytes_driver"] = v.driver.sharedBytes;
  if (v.againstHost.checked) {
    json::Value c;
    c["checked"] = v.againstHost.checked;
    c["mismatches"] = v.againstHost.mismatches;
    c["max_abs_error"] = v.againstHost.maxAbsError;
    out["vs_host_reference"] = c;
  }
  if (v.againstVariant.checked) {
    json::Value c;
    c["reference"] = r.variants[r.referenceVariant].id;
    c["checked"] = v.againstVariant.checked;
    c["mismatches"] = v.againstVariant.mismatches;
    c["max_abs_error"] = v.againstVariant.maxAbsError;
    out["vs_reference_variant"] = c;
  }
  if (v.stats.count) {
    json::Value s;
    s["count"] = v.stats.count;
    s["median_ms"] = v.stats.median;
    s["min_ms"] = v.stats.min;
    s["max_ms"] = v.stats.max;
    s["q1_ms"] = v.stats.q1;
    s["q3_ms"] = v.stats.q3;
    s["mean_ms"] = v.stats.mean;
    out["timing"] = s;
    json::Value::Array times;
    for (double t : v.timesMs)
      times.push_back(t);
    out["times_ms"] = times;
  }
  if (r.baseline >= 0 && v.stats.count)
    out["speedup_vs_default"] =
        r.variants[r.baseline].stats.median / v.stats.median;
  return out;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int rc = parseArgs(argc, argv, o); rc >= 0)
    return rc;
  if (o.probe)
    return probe(o);
  auto error = [](const std::string &msg) {
    std::fprintf(stderr, "fly-run: error: %s\n", msg.c_str());
    return kExitError;
  };

  // Everything that can be checked without a device comes first.
  SweepManifest manifest;
  std::string err;
  if (!readSweepManifest(o.outDir, manifest, err))
    return error(err);
  std::string specText;
  LaunchSpec spec;
  if (!readFile(o.specPath, specText, err) ||
      !parseLaunchSpec(specText, o.specPath, spec, err))
    return error(err);
  std::string kernel;
  if (!checkSpecAgainstManifest(spec, manifest, kernel, err))
    return error(err);
  if (!o.sweep.only.empty())
    for (const std::string &want : o.sweep.only) {
      bool found = false;
      for (const ManifestVariant &v : manifest.variants)
        found |= want == v.id || want == std::to_string(v.index);
      if (!found)
        return error("--variants: no variant '" + want + "' in " + o.outDir);
    }

  std::string backendName = o.backend;
  if (backendName == "auto") {
    if (manifest.family == "nvvm")
      backendName = "cuda";
    else if (manifest.family == "rocdl")
      backendName = "hip";
    else
      return error("cannot tell the backend from target '" + manifest.target +
                   "': pass --backend=cuda or --backend=hip");
  }
  const char *label = backendName == "hip" ? "HIP" : "CUDA";
  // This process never touches the GPU (so it can fork workers that do):
  // the device is opened in a child, here and for the sweep.
  DeviceInfo device;
  std::string why;
  OpenResult opened =
      probeDevice(backendFactory(backendName), o.device, device, why);
  if (opened == OpenResult::NoRuntime || opened == OpenResult::NoDevice) {
    std::fprintf(stderr,
                 "fly-run: no %s device: %s\n"
                 "fly-run: skipped: nothing was run (exit status %d)\n",
                 label, why.c_str(), kExitNoDevice);
    return kExitNoDevice;
  }
  if (opened == OpenResult::Error)
    return error(std::string("opening the ") + label + " device: " + why);
  std::printf("device %d: %s (%s, %s backend%s%s)\n", device.ordinal,
              device.name.c_str(), device.arch.c_str(), label,
              device.runtimeVersion.empty() ? "" : ", ",
              device.runtimeVersion.c_str());
  std::printf("variants: %zu of kernel %s for %s in %s\n",
              manifest.variants.size(), kernel.c_str(),
              manifest.target.c_str(), o.outDir.c_str());
  size_t totalBytes = 0;
  for (const BufferSpec &b : spec.buffers)
    totalBytes += b.bytes();
  std::printf("launch: grid %ux%ux%u, block %ux%ux%u, %zu parameters, "
              "%zu buffers (%.1f MiB)\n",
              spec.grid.x, spec.grid.y, spec.grid.z, spec.block.x,
              spec.block.y, spec.block.z, spec.params().size(),
              spec.buffers.size(),
              static_cast<double>(totalBytes) / (1 << 20));
  if (!manifest.chip.empty() && !device.arch.empty() &&
      manifest.chip != device.arch)
    std::fprintf(stderr, "fly-run: warning: the variants were compiled for "
                         "%s, the device is %s\n",
                 manifest.chip.c_str(), device.arch.c_str());

  // A stored winner for this kernel, chip and device?
  std::string key = kernel + "|" + manifest.target + "|" + device.name;
  std::string print = fingerprint(manifest, specText);
  json::Value store;
  {
    std::string text, readError;
    if (readFile(o.bestConfig, text, readError)) {
      std::string parseError;
      if (!json::parse(text, store, parseError) || !store.isObject()) {
        std::fprintf(stderr, "fly-run: warning: ignoring unreadable %s: %s\n",
                     o.bestConfig.c_str(), parseError.c_str());
        store = json::Value();
      }
    }
  }
  if (!store.isObject())
    store = json::Value(json::Value::Object{});
  if (!store.get("configs") || !store.get("configs")->isArray())
    store["configs"] = json::Value(json::Value::Array{});
  for (const json::Value &entry : store["configs"].asArray()) {
    const json::Value *k = entry.get("key");
    if (!k || !k->isString() || k->asString() != key)
      continue;
    const json::Value *fp = entry.get("fingerprint");
    bool fresh = fp && fp->isString() && fp->asString() == print;
    if (o.retune) {
      std::printf("best config: stored for %s; --retune: measuring again\n",
                  key.c_str());
    } else if (!fresh) {
      std::printf("best config: the one stored for %s is stale (other "
                  "objects, hints or launch spec): measuring again\n",
                  key.c_str());
    } else {
      auto str = [&](const char *name) {
        const json::Value *v = entry.get(name);
        return v && v->isString() ? v->asString() : std::string("?");
      };
      auto num = [&](const char *name) {
        const json::Value *v = entry.get(name);
        return v && v->isNumber() ? v->asNumber() : 0.0;
      };
      std::printf("best config (stored %s in %s):\n  %s: variant %s, hints "
                  "%s, %.4f ms median, %.2fx vs the default hint set\n"
                  "pass --retune to measure again\n",
                  str("tuned_at").c_str(), o.bestConfig.c_str(), key.c_str(),
                  str("variant").c_str(), hintsLabel(str("hints")).c_str(),
                  num("median_ms"), num("speedup_vs_default"));
      return kExitOk;
    }
  }

  if (!o.quiet)
    o.sweep.progress = [](const std::string &line) {
      std::fprintf(stderr, "fly-run: %s\n", line.c_str());
    };
  o.sweep.makeBackend = backendFactory(backendName);
  o.sweep.device = o.device;
  std::fflush(stdout);
  SweepResult r = runSweep(spec, manifest, kernel, o.sweep);
  if (r.open != OpenResult::Ok)
    return error(std::string("the ") + label + " device could not be opened "
                 "for the sweep: " + r.openMessage);

  // The table.
  bool nvvm = manifest.family == "nvvm";
  std::printf("\n%-2s %-34s %-22s %5s %5s %6s %6s %10s %10s %10s %6s %5s %8s  %s\n",
              "#", "variant", "hints", "regs", "drv", nvvm ? "spill" : "scrch",
              "local", "median ms", "min ms", "max ms", "IQR%", "runs",
              "speedup", "result");
  for (size_t i = 0; i < r.variants.size(); ++i) {
    const VariantOutcome &v = r.variants[i];
    std::string regs = numberOrDash(v.manifestRegisters);
    std::string drv = numberOrDash(v.driver.registers);
    if (!v.registersMatch())
      drv += "!";
    std::string timing = fmt("%10s %10s %10s %6s %5s %8s", "-", "-", "-", "-",
                             "-", "-");
    if (v.stats.count) {
      std::string speedup =
          r.baseline >= 0
              ? fmt("%.2fx", r.variants[r.baseline].stats.median / v.stats.median)
              : "-";
      timing = fmt("%10.4f %10.4f %10.4f %5.1f%% %5d %8s", v.stats.median,
                   v.stats.min, v.stats.max, v.stats.iqrPercent(),
                   v.stats.count, speedup.c_str());
    }
    std::string result = stateName(v.state);
    if (static_cast<int>(i) == r.winner)
      result += "  <== winner";
    if (v.state != VariantState::Ok && v.state != VariantState::Skipped &&
        !v.message.empty())
      result += ": " + v.message;
    if (v.duplicateOf && v.state == VariantState::Ok)
      result += fmt(" (same object as #%d)", *v.duplicateOf);
    std::printf("%-2s %-34s %-22s %5s %5s %6s %6s %s  %s\n",
                (static_cast<int>(i) == r.winner ? "*" : std::to_string(i)).c_str(),
                v.id.c_str(), hintsLabel(v.hints).c_str(), regs.c_str(),
                drv.c_str(), numberOrDash(v.manifestLocalBytes).c_str(),
                numberOrDash(v.driver.localBytes).c_str(), timing.c_str(),
                result.c_str());
  }
  std::printf("\nregs: compile-time (manifest) registers; drv: what the "
              "driver reports (! = differs); %s: compile-time %s bytes; "
              "local: driver local bytes per thread\n",
              nvvm ? "spill" : "scrch", nvvm ? "frame" : "scratch");

  int excluded = 0, mismatched = 0;
  for (const VariantOutcome &v : r.variants) {
    if (v.state != VariantState::Ok && v.state != VariantState::Skipped)
      ++excluded;
    if (v.state == VariantState::Ok && !v.registersMatch())
      ++mismatched;
  }
  if (excluded) {
    std::string list;
    for (const VariantOutcome &v : r.variants)
      if (v.state != VariantState::Ok && v.state != VariantState::Skipped)
        list += fmt("%s%s (%s)", list.empty() ? "" : ", ", v.id.c_str(),
                    stateName(v.state));
    std::printf("excluded: %d variant(s): %s\n", excluded, list.c_str());
  }
  if (r.workers > 1)
    std::printf("workers: %d processes (a fault or hang ends a worker; the "
                "next one carries on)\n", r.workers);
  if (mismatched)
    std::printf("warning: %d variant(s) run with a register count other than "
                "the compile-time metadata\n", mismatched);
  else
    std::printf("registers: driver == manifest for every variant that loaded\n");
  if (r.referenceVariant >= 0)
    std::printf("outputs: every passing variant matches %s%s\n",
                r.variants[r.referenceVariant].id.c_str(),
                spec.reference ? fmt(" and the host reference (%zu entries)",
                                     r.hostSamples).c_str()
                               : "");
  if (!r.fatal.empty())
    std::fprintf(stderr, "fly-run: error: %s\n", r.fatal.c_str());

  if (!o.jsonOut.empty()) {
    json::Value doc;
    doc["tool"] = "fly-run";
    doc["device"] = device.name;
    doc["device_arch"] = device.arch;
    doc["runtime"] = device.runtimeVersion;
    doc["backend"] = label;
    doc["kernel"] = kernel;
    doc["target"] = manifest.target;
    doc["out_dir"] = o.outDir;
    doc["spec"] = o.specPath;
    doc["winner"] = r.winner >= 0 ? json::Value(r.variants[r.winner].id)
                                  : json::Value();
    doc["baseline"] = r.baseline >= 0 ? json::Value(r.variants[r.baseline].id)
                                      : json::Value();
    doc["reference_variant"] =
        r.referenceVariant >= 0 ? json::Value(r.variants[r.referenceVariant].id)
                                : json::Value();
    doc["host_reference_entries"] = r.hostSamples;
    if (!r.fatal.empty())
      doc["fatal"] = r.fatal;
    json::Value::Array variants;
    for (const VariantOutcome &v : r.variants)
      variants.push_back(outcomeToJson(v, r));
    doc["variants"] = variants;
    if (!writeText(o.jsonOut, json::write(doc) + "\n", err))
      std::fprintf(stderr, "fly-run: warning: %s\n", err.c_str());
  }

  if (r.winner < 0) {
    std::fprintf(stderr, "fly-run: error: no variant passed: nothing to pick\n");
    return kExitError;
  }
  const VariantOutcome &w = r.variants[r.winner];
  double speedup =
      r.baseline >= 0 ? r.variants[r.baseline].stats.median / w.stats.median : 0;
  std::printf("winner: %s (%s): %.4f ms median", w.id.c_str(),
              w.hints.empty() ? "default hints" : w.hints.c_str(),
              w.stats.median);
  if (r.baseline >= 0)
    std::printf(", %.2fx vs the %s hint set (%s, %.4f ms)\n", speedup,
                r.variants[r.baseline].hints.empty() ? "default" : "first",
                r.variants[r.baseline].id.c_str(),
                r.variants[r.baseline].stats.median);
  else
    std::printf(" (the default hint set did not pass: no speedup)\n");

  json::Value entry;
  entry["key"] = key;
  entry["kernel"] = kernel;
  entry["chip"] = manifest.target;
  entry["device"] = device.name;
  entry["variant"] = w.id;
  entry["hints"] = w.hints;
  entry["hint_set"] = w.hintSet;
  entry["median_ms"] = w.stats.median;
  entry["default_median_ms"] =
      r.baseline >= 0 ? json::Value(r.variants[r.baseline].stats.median)
                      : json::Value();
  entry["speedup_vs_default"] = r.baseline >= 0 ? json::Value(speedup)
                                                : json::Value();
  entry["registers"] = w.driver.registers;
  entry["fingerprint"] = print;
  entry["out_dir"] = o.outDir;
  entry["spec"] = o.specPath;
  entry["tuned_at"] = nowUtc();
  json::Value::Array &configs = store["configs"].asArray();
  bool replaced = false;
  for (json::Value &e : configs) {
    const json::Value *k = e.get("key");
    if (k && k->isString() && k->asString() == key) {
      e = entry;
      replaced = true;
    }
  }
  if (!replaced)
    configs.push_back(entry);
  if (writeText(o.bestConfig, json::write(store) + "\n", err))
    std::printf("best config: stored for %s in %s\n", key.c_str(),
                o.bestConfig.c_str());
  else
    std::fprintf(stderr, "fly-run: warning: %s\n", err.c_str());
  if (!r.fatal.empty())
    return kExitError;
  return excluded ? kExitPartial : kExitOk;
}
