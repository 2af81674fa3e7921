//===- SweepWorker.h - The process that owns the device ---------*- C++ -*-===//
//
// A forked child: checks every pending variant, times the passing ones and
// reports each step; after a sticky fault it asks for a fresh worker.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_SWEEPWORKER_H
#define FLY_RUNTIME_SWEEPWORKER_H

#include "Runtime/Verification.h"
#include "Runtime/WorkerProtocol.h"

namespace fly::rt {

/// What the supervisor prepared once; a forked worker inherits it.
struct SweepInputs {
  const LaunchSpec &spec;
  const SweepManifest &manifest;
  const std::string &kernel;
  const SweepOptions &options;
  std::vector<std::string> host; ///< initial buffer contents
  HostReference hostRef;
  /// The reference variant's outputs, in memory shared with the supervisor
  /// so that later workers compare against them too; per spec.outputs().
  std::vector<llvm::MutableArrayRef<char>> shared;
};

/// Opens the device; null after reporting why not.
std::unique_ptr<Backend> openDevice(const BackendFactory &make, int ordinal,
                                    Channel &channel);

void runSweepWorker(const SweepInputs &inputs, Backend &backend,
                    std::vector<VariantOutcome> outcomes, int referenceVariant,
                    Channel &channel);

} // namespace fly::rt

#endif // FLY_RUNTIME_SWEEPWORKER_H
