//===- CompileObserved.h - Whether LLVM's compile is watched ----*- C++ -*-===//
//
// Shared ROCDL optimisation and code generation run LLVM passes once for many
// variants, and the first continuation on a target checks itself by running
// some of them again. Whoever watches those passes through LLVM's options
// would see them once per shared module, or twice, instead of once per
// variant: then every variant compiles alone, as stock gpu-module-to-binary
// would.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_COMPILEOBSERVED_H
#define FLY_BACKEND_COMPILEOBSERVED_H

#include "llvm/ADT/StringRef.h"

namespace llvm {
class LLVMContext;
} // namespace llvm

namespace fly {

/// Whether a compile in `context` is watched or limited through LLVM: remarks
/// enabled in its diagnostic handler, statistics, -time-passes,
/// -print-before/-after, -start-/-stop-before/-after, or any LLVM option
/// given whose name has one of the words print, dump, view, verify, stats,
/// debug or trace (-amdgpu-dump-hsa-metadata, -print-after-isel,
/// -verify-machineinstrs, -debug-pass, ...).
bool isLlvmCompileObserved(const llvm::LLVMContext &context);

/// Whether an option of that name, given, watches LLVM's compile (the word
/// rule above; MLIR's and the tools' own options never do).
bool isObservingOptionName(llvm::StringRef name);

} // namespace fly

#endif // FLY_BACKEND_COMPILEOBSERVED_H
