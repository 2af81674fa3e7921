//===- ToolHelp.h - How fly's tools present their options -------*- C++ -*-===//
//
// fly-tune and fly-opt link all of LLVM and MLIR, whose static llvm::cl
// options (--amdgpu-*, --x86-*, ...) would bury the tool's own in --help.
// These helpers keep a tool's help to its own options and name fly's version
// in --version.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_TOOLHELP_H
#define FLY_SUPPORT_TOOLHELP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

namespace fly {

/// "fly-snapshot 0.1.0 (git 1a2b3c4d5e6f)".
llvm::StringRef getVersionString();

/// Adds fly's version and git revision to --version (after LLVM's).
void addVersionPrinter();

/// Moves every option registered so far that is not in `keep` (nor LLVM's
/// generic --help/--version) behind --help-hidden: the options still work.
/// Options registered later (mlir-opt's, by MlirOptMain) stay visible.
void hideUnrelatedOptions(
    llvm::ArrayRef<const llvm::cl::OptionCategory *> keep);

} // namespace fly

#endif // FLY_SUPPORT_TOOLHELP_H
