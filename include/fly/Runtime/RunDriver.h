//===- RunDriver.h - fly-run's steps over the sweep runner ------*- C++ -*-===//
//
// fly-run parses its flags into RunOptions and runs them here: the checks
// that need no device (manifest, launch spec, --variants), the device opened
// in a child, a stored winner that still matches, else the sweep, its
// report and the winner stored. Links LLVM's support library only.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_RUNDRIVER_H
#define FLY_RUNTIME_RUNDRIVER_H

#include <string>
#include <vector>

namespace fly::rt {

/// fly-run's exit statuses.
enum RunExitStatus {
  kRunOk = 0,
  kRunError = 1,
  /// Some variants were excluded (failed a check, faulted, hung).
  kRunPartial = 2,
  /// No device or runtime: nothing was run (the automake "skip" code).
  kRunNoDevice = 77,
};

/// --backend: the GPU runtime, or Auto: the manifest's family's.
enum class RunBackend { Auto, Cuda, Hip };

/// fly-run's flags, typed; negative timing values keep the launch spec's.
struct RunOptions {
  /// The positional arguments: <out-dir> <launch-spec.json>.
  std::vector<std::string> arguments;
  RunBackend backend = RunBackend::Auto;
  int device = 0;
  /// Variant ids or indices to run; empty: all.
  std::vector<std::string> only;
  int warmup = -1, reps = -1, maxReps = -1;
  double minTimeMs = -1;
  /// The store of winners; "": <out-dir>/best-config.json.
  std::string bestConfigPath;
  bool retune = false;
  /// Where the measurements go as JSON; "": nowhere.
  std::string jsonOut;
  double variantTimeout = 300;
  std::string injectFault;
  /// Only report the device.
  bool probe = false;
  bool quiet = false;
};

/// Runs fly-run as `options` say; returns its exit status (RunExitStatus).
int runFlyRun(const RunOptions &options);

} // namespace fly::rt

#endif // FLY_RUNTIME_RUNDRIVER_H
