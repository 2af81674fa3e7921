//===- ToolOptions.cpp - Tool options checked before compiling ------------===//

#include "fly/Support/ToolOptions.h"
#include "Support/Environment.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <climits>

using namespace llvm;

namespace fly {

Error checkObjectFormat(StringRef format) {
  // gpu-module-to-binary's `format` values (mlir/lib/Dialect/GPU).
  static constexpr StringLiteral kFormats[] = {
      "offloading", "llvm", "assembly",  "isa",
      "binary",     "bin",  "fatbinary", "fatbin"};
  if (is_contained(kFormats, format))
    return Error::success();
  return createStringError(
      std::errc::invalid_argument,
      "unknown object format '%s' (expected one of: bin, fatbin, isa, llvm; "
      "or binary, fatbinary, assembly, offloading)",
      format.str().c_str());
}

unsigned getDefaultVariantTimeout() {
  std::optional<uint64_t> seconds = getEnvUnsigned("FLY_VARIANT_TIMEOUT");
  return seconds ? static_cast<unsigned>(std::min<uint64_t>(*seconds, UINT_MAX))
                 : kDefaultVariantTimeoutSeconds;
}

bool isIRPrintingRequested() {
  for (auto &[name, option] : llvm::cl::getRegisteredOptions())
    if (name.starts_with("mlir-print-ir-") && option->getNumOccurrences())
      return true;
  return false;
}

bool isPassInstrumentationRequested() {
  if (isIRPrintingRequested())
    return true;
  auto &options = cl::getRegisteredOptions();
  return llvm::any_of(
      std::initializer_list<StringRef>{"mlir-timing", "mlir-pass-statistics"},
      [&](StringRef name) {
        auto it = options.find(name);
        return it != options.end() && it->second->getNumOccurrences();
      });
}

unsigned clampJobs(unsigned requested, std::string *note) {
  unsigned hardware =
      std::max(1u, hardware_concurrency().compute_thread_count());
  unsigned limit = 4 * hardware;
  if (requested <= limit)
    return requested;
  if (note)
    *note = formatv("--jobs={0} lowered to {1} (4 x {2} hardware threads): "
                    "more threads only cost memory",
                    requested, limit, hardware)
                .str();
  return limit;
}

} // namespace fly
