//===- Report.h - Table, summary and JSON of a sweep ------------*- C++ -*-===//

#ifndef FLY_RUNTIME_REPORT_H
#define FLY_RUNTIME_REPORT_H

#include "Runtime/Sweep.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace fly::rt {

/// "device ...", "variants: ..." and "launch: ..." before the sweep.
void printHeader(llvm::raw_ostream &os, const DeviceInfo &device,
                 llvm::StringRef backend, const SweepManifest &manifest,
                 const LaunchSpec &spec, llvm::StringRef kernel);

/// "winner: ..., N.NNx vs the default hint set".
void printWinner(llvm::raw_ostream &os, const SweepResult &result);

/// The per-variant table and the summary lines; returns how many variants
/// were excluded (not ok and not skipped).
int printReport(llvm::raw_ostream &os, const SweepResult &result,
                const SweepManifest &manifest, const LaunchSpec &spec);

/// Every measurement, for --json.
llvm::json::Value reportToJSON(const SweepResult &result,
                               const SweepManifest &manifest,
                               const LaunchSpec &spec, llvm::StringRef backend);

} // namespace fly::rt

#endif // FLY_RUNTIME_REPORT_H
