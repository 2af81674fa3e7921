//===- AmdgpuLinker.h - In-process ld.lld for AMDGPU ------------*- C++ -*-===//
//
// gpu-module-to-binary with #rocdl.target links the assembled relocatable
// object into a shared code object (hsaco) by spawning
// <toolkit>/llvm/bin/ld.lld -shared in.o -o out.hsaco
// (mlir::ROCDL::linkObjectCode). Starting that process loads libLLVM.so and
// costs tens of milliseconds per variant. linkAmdgpuObject runs the same
// link with lld's ELF driver linked into this process, with the same
// arguments, and gives the same bytes. lld runs one link at a time in a
// process. A child link is fly-tune started as "ld.lld", the same driver, so
// again the same bytes: where lld cannot run again in this process, and on
// request (FLY_AMDGPU_LINK=auto while another link holds lld, or child).
//
// Side effects of lld as a library (lld's own behaviour, not ours):
//  * every link calls llvm::cl::ResetAllOptionOccurrences() (lld/ELF's
//    readConfigs), which would put EVERY registered llvm::cl option of the
//    process back to its default value. Programs linking FlySnapshot get
//    `--wrap` for that symbol (an INTERFACE link option of the target), which
//    makes lld's call a no-op: see AmdgpuLinker.cpp.
//  * it enables llvm::CrashRecoveryContext for the process (lld needs it to
//    turn a fatal error into a return instead of exiting the process).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_AMDGPULINKER_H
#define FLY_BACKEND_AMDGPULINKER_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace fly {

/// Links one AMDGPU relocatable object into a shared code object exactly as
/// mlir::ROCDL::linkObjectCode does (ld.lld -shared), but with lld linked into
/// this process: no process start. Thread-safe: lld keeps global state, so
/// one link runs in the process at a time and the others wait, unless
/// FLY_AMDGPU_LINK=auto (a link that finds lld busy runs in a child: the
/// fly-tune installed beside this code, findChildTool, started as "ld.lld")
/// or child (every link in a child). Errors go to emitError with lld's
/// message.
///
/// Once lld has reported that it cannot run again in this process (a fatal
/// error or a crash inside lld; that call still reports lld's own result),
/// every later call links in a child, or, without a fly-tune beside this
/// code, spawns `<fallbackToolkitPath>/llvm/bin/ld.lld` through
/// mlir::ROCDL::linkObjectCode; `fallbackToolkitPath` is used for nothing
/// else.
mlir::FailureOr<llvm::SmallVector<char, 0>>
linkAmdgpuObject(llvm::ArrayRef<char> objectCode,
                 llvm::StringRef fallbackToolkitPath,
                 llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// False once lld said it cannot run again in this process; from then on
/// linkAmdgpuObject links in a child.
bool isInProcessAmdgpuLinkerAvailable();

/// Whether links need `<toolkit>/llvm/bin/ld.lld`: only once lld cannot run
/// again here and no fly-tune is installed beside this code.
bool amdgpuLinksNeedToolkitLdLld();

/// Whether a program was started as ld.lld (`argv0`'s file name): fly-tune
/// then is lld's ELF driver (runLinker), for linkAmdgpuObject's child links.
bool isLinkerInvocation(llvm::StringRef argv0);

/// lld's ELF driver on `argv` (argv[0] "ld.lld"); its exit code.
int runLinker(int argc, const char **argv);

} // namespace fly

#endif // FLY_BACKEND_AMDGPULINKER_H
