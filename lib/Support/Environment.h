//===- Environment.h - FLY_* variables, parsed strictly ---------*- C++ -*-===//
//
// Every FLY_* switch is read through these, so "FLY_ENABLE_CACHE=no" means
// no, and a value that means nothing ("FLY_CACHE_MAX_MB=abc") is a warning
// that says what is accepted instead of a silent default. README.md lists
// all variables in one table.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_ENVIRONMENT_H
#define FLY_SUPPORT_ENVIRONMENT_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace fly {

/// A boolean switch: 1/true/yes/on or 0/false/no/off (any case). Unset or
/// empty: nullopt. Anything else: nullopt and a warning (once per process).
std::optional<bool> getEnvFlag(llvm::StringRef name);

/// A switch as getEnvFlag, or `word` (any case): "1", "0" or `word`. Unset
/// or empty: nullopt. Anything else: nullopt and a warning (once per
/// process).
std::optional<std::string> getEnvFlagOrWord(llvm::StringRef name,
                                            llvm::StringRef word);

/// A non-negative integer. Unset or empty: nullopt. Anything else: nullopt
/// and a warning (once per process).
std::optional<uint64_t> getEnvUnsigned(llvm::StringRef name);

/// Prints "warning: <message>" on stderr, once per `key` in this process.
void warnOnce(llvm::StringRef key, llvm::StringRef message);

/// This machine's host name ("localhost" if it has none), as lock and
/// owner files record it beside a pid.
std::string getHostName();

} // namespace fly

#endif // FLY_SUPPORT_ENVIRONMENT_H
