//===- Report.cpp - The table, the summary and the JSON of a sweep --------===//

#include "Runtime/Report.h"

#include "Runtime/WorkerProtocol.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace fly::rt {

static std::string orDash(int64_t v) { return v < 0 ? "-" : std::to_string(v); }
static std::string hintsLabel(StringRef hints) {
  return hints.empty() ? "(default)" : hints.str();
}

void printHeader(raw_ostream &os, const DeviceInfo &dev, StringRef backend,
                 const SweepManifest &manifest, const LaunchSpec &spec,
                 StringRef kernel) {
  os << formatv("device {0}: {1} ({2}, {3} backend{4}{5})\n", dev.ordinal,
                dev.name, dev.arch, backend,
                dev.runtimeVersion.empty() ? "" : ", ", dev.runtimeVersion)
     << formatv("variants: {0} of kernel {1} for {2} in {3}\n",
                manifest.variants.size(), kernel, manifest.target, manifest.dir)
     << formatv("launch: grid {0}x{1}x{2}, block {3}x{4}x{5}, {6} parameters, "
                "{7} buffers ({8:F1} MiB)\n",
                spec.grid.x, spec.grid.y, spec.grid.z, spec.block.x,
                spec.block.y, spec.block.z, spec.params().size(),
                spec.buffers.size(), spec.totalBytes() / double(1 << 20));
  if (!manifest.chip.empty() && !dev.arch.empty() && manifest.chip != dev.arch)
    errs() << "fly-run: warning: the variants were compiled for "
           << manifest.chip << ", the device is " << dev.arch << "\n";
}

void printWinner(raw_ostream &os, const SweepResult &r) {
  const VariantOutcome &w = r.variants[r.winner];
  os << formatv("winner: {0} ({1}): {2:F4} ms median", w.variant->id,
                w.variant->hints.empty() ? "default hints" : w.variant->hints,
                w.stats.median);
  if (r.baseline < 0) {
    os << " (the default hint set did not pass: no speedup)\n";
    return;
  }
  const VariantOutcome &b = r.variants[r.baseline];
  os << formatv(", {0:F2}x vs the {1} hint set ({2}, {3:F4} ms)\n",
                b.stats.median / w.stats.median,
                b.variant->hints.empty() ? "default" : "first", b.variant->id,
                b.stats.median);
}

int printReport(raw_ostream &os, const SweepResult &r,
                const SweepManifest &manifest, const LaunchSpec &spec) {
  bool nvvm = manifest.family == "nvvm";
  auto speedup = [&](const VariantOutcome &v) {
    return r.variants[r.baseline].stats.median / v.stats.median;
  };
  os << format(
      "\n%-2s %-34s %-22s %5s %5s %6s %6s %10s %10s %10s %6s %5s %8s  %s\n",
      "#", "variant", "hints", "regs", "drv", nvvm ? "spill" : "scrch", "local",
      "median ms", "min ms", "max ms", "IQR%", "runs", "speedup", "result");
  int excluded = 0, mismatched = 0;
  std::vector<std::string> excludedList;
  for (size_t i = 0; i < r.variants.size(); ++i) {
    const VariantOutcome &v = r.variants[i];
    bool winner = static_cast<int>(i) == r.winner;
    std::string timing;
    raw_string_ostream t(timing);
    if (v.stats.count)
      t << format("%10.4f %10.4f %10.4f %5.1f%% %5d %8s", v.stats.median,
                  v.stats.min, v.stats.max, v.stats.iqrPercent(), v.stats.count,
                  r.baseline >= 0 ? formatv("{0:F2}x", speedup(v)).str().c_str()
                                  : "-");
    else
      t << format("%10s %10s %10s %6s %5s %8s", "-", "-", "-", "-", "-", "-");
    std::string result = stateName(v.state);
    if (winner)
      result += "  <== winner";
    bool bad = v.state != VariantState::Ok && v.state != VariantState::Skipped;
    if (bad && !v.message.empty())
      result += ": " + v.message;
    if (v.variant->duplicateOf && v.state == VariantState::Ok)
      result +=
          " (same object as #" + std::to_string(*v.variant->duplicateOf) + ")";
    os << format(
        "%-2s %-34s %-22s %5s %5s %6s %6s %s  %s\n",
        winner ? "*" : std::to_string(i).c_str(), v.variant->id.c_str(),
        hintsLabel(v.variant->hints).c_str(),
        orDash(v.manifestRegisters).c_str(),
        (orDash(v.driver.registers) + (v.registersMatch() ? "" : "!")).c_str(),
        orDash(v.manifestLocalBytes).c_str(),
        orDash(v.driver.localBytes).c_str(), timing.c_str(), result.c_str());
    if (bad)
      ++excluded, excludedList.push_back(v.variant->id + " (" +
                                         stateName(v.state) + ")");
    mismatched += v.state == VariantState::Ok && !v.registersMatch();
  }
  os << "\nregs: compile-time (manifest) registers; drv: what the driver "
        "reports (! = differs); "
     << (nvvm ? "spill: compile-time frame" : "scrch: compile-time scratch")
     << " bytes; local: driver local bytes per thread\n";
  if (excluded)
    os << "excluded: " << excluded
       << " variant(s): " << join(excludedList, ", ") << "\n";
  if (r.workers > 1)
    os << "workers: " << r.workers << " processes (a fault or hang ends a "
       << "worker; the next one carries on)\n";
  if (mismatched)
    os << "warning: " << mismatched << " variant(s) run with a register count "
       << "other than the compile-time metadata\n";
  else
    os << "registers: driver == manifest for every variant that loaded\n";
  if (r.referenceVariant >= 0) {
    os << "outputs: every passing variant matches "
       << r.variants[r.referenceVariant].variant->id;
    if (spec.reference)
      os << " and the host reference (" << r.hostSamples << " entries)";
    os << "\n";
  }
  return excluded;
}

json::Value reportToJSON(const SweepResult &r, const SweepManifest &manifest,
                         const LaunchSpec &spec, StringRef backend) {
  auto id = [&](int i) {
    return i >= 0 ? json::Value(r.variants[i].variant->id)
                  : json::Value(nullptr);
  };
  json::Array variants;
  for (const VariantOutcome &v : r.variants) {
    json::Object out = std::move(*toJSON(Measurement(v)).getAsObject());
    out["index"] = v.variant->index;
    out["id"] = v.variant->id;
    out["hints"] = v.variant->hints;
    out["hint_set"] = v.variant->hintSet;
    out["object"] = v.objectFile;
    out["registers_match"] = v.registersMatch();
    out["reference_variant"] = id(r.referenceVariant);
    if (v.stats.count) {
      const Stats &s = v.stats;
      out["timing"] = json::Object{{"count", s.count}, {"median_ms", s.median},
                                   {"min_ms", s.min},  {"max_ms", s.max},
                                   {"q1_ms", s.q1},    {"q3_ms", s.q3},
                                   {"mean_ms", s.mean}};
      if (r.baseline >= 0)
        out["speedup_vs_default"] =
            r.variants[r.baseline].stats.median / s.median;
    }
    variants.push_back(std::move(out));
  }
  json::Object doc{
      {"tool", "fly-run"},
      {"device", r.device.name},
      {"device_arch", r.device.arch},
      {"runtime", r.device.runtimeVersion},
      {"backend", backend},
      {"kernel", r.kernel},
      {"target", manifest.target},
      {"out_dir", manifest.dir},
      {"spec", spec.path},
      {"winner", id(r.winner)},
      {"baseline", id(r.baseline)},
      {"reference_variant", id(r.referenceVariant)},
      {"host_reference_entries", static_cast<int64_t>(r.hostSamples)},
      {"variants", std::move(variants)}};
  if (!r.fatal.empty())
    doc["fatal"] = r.fatal;
  return doc;
}

} // namespace fly::rt
