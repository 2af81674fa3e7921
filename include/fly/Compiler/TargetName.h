//===- TargetName.h - "rocdl:gfx942", "nvvm:sm_90" --------------*- C++ -*-===//
//
// The target a tool or the C API compiles for, written family:chip. It is
// part of the cache key, so a typo must be an error, not a new cache slot.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_COMPILER_TARGETNAME_H
#define FLY_COMPILER_TARGETNAME_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace fly {

/// A target spelled `<family>:<chip>`, family `rocdl` or `nvvm`.
struct TargetSpec {
  std::string family, chip;
};

/// Parses `target`: rocdl:<an AMDGPU chip LLVM knows, e.g. gfx942> or
/// nvvm:<sm_NN, optionally with an a/f suffix>; the error says what is
/// accepted. Every front end (fly-tune, the C API's compile and preset)
/// reads a target name through this one.
llvm::Expected<TargetSpec> parseTargetSpec(llvm::StringRef target);

} // namespace fly

#endif // FLY_COMPILER_TARGETNAME_H
