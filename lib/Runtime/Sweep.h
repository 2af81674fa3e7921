//===- Sweep.h - Load, check and time every variant of a sweep --*- C++ -*-===//
//
// Per variant: load its object, read the driver's kernel attributes, run it
// once from the spec's initial buffers, compare the outputs with the host
// reference and the first passing variant, then time the passing ones. A
// variant that fails to load, faults or differs is excluded; the sweep goes
// on. Only worker processes touch the device: a fault poisons CUDA for the
// whole process, so a fresh worker carries on; a worker that dies or hangs
// is killed and its variant excluded.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_SWEEP_H
#define FLY_RUNTIME_SWEEP_H

#include "fly/Runtime/Backend.h"
#include "fly/Runtime/LaunchSpec.h"
#include "fly/Runtime/SweepManifest.h"

#include <functional>
#include <string>
#include <vector>

namespace fly::rt {

using BackendFactory =
    std::function<std::unique_ptr<Backend>(std::string &why)>;
BackendFactory backendFactory(llvm::StringRef name); ///< "cuda" or "hip"

struct SweepOptions {
  /// Makes the backend; called in the worker processes only.
  BackendFactory makeBackend;
  int device = 0;
  /// A worker silent for this long is killed (its variant excluded as hung).
  double variantTimeoutS = 300;
  /// Overrides of the spec's timing (negative: keep the spec's).
  int warmup = -1, repetitions = -1, maxRepetitions = -1;
  double minTimeMs = -1;
  /// Variant ids (or indices) to run; empty: all.
  std::vector<std::string> only;
  /// Testing aid: launch this variant with out-of-bounds pointers so that it
  /// faults, to show the sweep survives it.
  std::string injectFault;
  std::function<void(const std::string &)> progress;
};

struct Stats {
  int count = 0;
  double median = 0, min = 0, max = 0, q1 = 0, q3 = 0, mean = 0;
  /// Interquartile range relative to the median, in percent.
  double iqrPercent() const {
    return median > 0 ? 100 * (q3 - q1) / median : 0;
  }
};
Stats computeStats(std::vector<double> samples);

enum class VariantState {
  Pending,     ///< not run yet (only during a sweep)
  Ok,          ///< checked and timed
  NotCompiled, ///< fly-tune reported it failed
  Skipped,     ///< not selected
  LoadFailed,  ///< object missing, or module / function load failed
  Faulted,     ///< the launch failed or the kernel faulted
  Wrong,       ///< outputs differ from the reference
};
const char *stateName(VariantState state);

struct Comparison {
  uint64_t checked = 0, mismatches = 0;
  double maxAbsError = 0;
  std::string firstMismatch; ///< "C[12345]: 1.5, expected 1.25"
};

/// What a worker measures of one variant (the part that crosses processes).
struct Measurement {
  VariantState state = VariantState::Pending;
  std::string message;
  int64_t manifestRegisters = -1, manifestLocalBytes = -1;
  KernelAttributes driver;
  Comparison againstHost, againstVariant;
  std::vector<double> timesMs;
};

struct VariantOutcome : Measurement {
  const ManifestVariant *variant = nullptr;
  std::string objectFile;
  Stats stats;
  bool registersMatch() const {
    return manifestRegisters < 0 || driver.registers < 0 ||
           manifestRegisters == driver.registers;
  }
};

struct SweepResult {
  DeviceInfo device;
  int workers = 0; ///< worker processes used (1 + restarts after faults)
  std::string kernel;
  std::vector<VariantOutcome> variants;
  int referenceVariant = -1; ///< index into variants
  int baseline = -1;         ///< the default (first) hint set, if it passed
  int winner = -1;
  size_t hostSamples = 0;
  std::string fatal; ///< set when the sweep stopped early
};

/// Picks the kernel and, for cubins, compares the expanded parameter list
/// with the kernel's own parameter table, before any device is touched.
llvm::Expected<std::string>
checkSpecAgainstManifest(const LaunchSpec &spec, const SweepManifest &manifest);

/// The sweep; an error only when the device could not be opened for it.
llvm::Expected<SweepResult> runSweep(const LaunchSpec &spec,
                                     const SweepManifest &manifest,
                                     const std::string &kernel,
                                     const SweepOptions &options);

/// Opens the device in a short-lived child process (so that this process
/// never initialises the GPU runtime, and can fork workers) and reports it.
OpenResult probeDevice(const BackendFactory &make, int ordinal,
                       DeviceInfo &info, std::string &message);

} // namespace fly::rt

#endif // FLY_RUNTIME_SWEEP_H
