//===- ToolOptions.h - Tool options checked before compiling ----*- C++ -*-===//
//
// Option values that used to be discovered late (or never): an object format
// gpu-module-to-binary does not know, and a --jobs count that starts
// thousands of threads.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_TOOLOPTIONS_H
#define FLY_SUPPORT_TOOLOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace fly {

/// An error unless `format` is one that gpu-module-to-binary accepts
/// (offloading/llvm, assembly/isa, binary/bin, fatbinary/fatbin).
llvm::Error checkObjectFormat(llvm::StringRef format);

/// `requested` threads, at most 4 x the hardware threads (0: unchanged, the
/// tool's default). `note` says why when it was lowered.
unsigned clampJobs(unsigned requested, std::string *note = nullptr);

/// Whether an --mlir-print-ir-* flag was given in this process (fly-opt's or
/// fly-tune's command line).
bool isIRPrintingRequested();

/// Whether a flag was given in this process that makes
/// mlir::applyPassManagerCLOptions or applyDefaultTimingPassManagerCLOptions
/// instrument a PassManager's pass runs: --mlir-print-ir-*, --mlir-timing,
/// --mlir-pass-statistics. A tool whose replays' pass managers it configures
/// with them says so in ReplayPlanOptions::replaysInstrumented.
bool isPassInstrumentationRequested();

/// A hung ptxas or backend ends its variant after this long by default.
constexpr unsigned kDefaultVariantTimeoutSeconds = 600;

/// The per-variant compile limit when none is given: FLY_VARIANT_TIMEOUT
/// (seconds, 0 = no limit), else kDefaultVariantTimeoutSeconds.
unsigned getDefaultVariantTimeout();

} // namespace fly

#endif // FLY_SUPPORT_TOOLOPTIONS_H
