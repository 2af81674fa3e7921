//===- PtxAssembler.h - PTX to cubin/fatbin as upstream does it -*- C++ -*-===//
//
// The second half of upstream's NVVM serialization (NVPTXSerializer::
// compileToBinary), callable on PTX that was generated earlier: the same
// tool lookup and the same ptxas and fatbinary command lines, so the bytes
// equal those gpu-module-to-binary{format=bin|fatbin} makes from that PTX.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_PTXASSEMBLER_H
#define FLY_BACKEND_PTXASSEMBLER_H

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Location.h"

#include <optional>
#include <string>

namespace fly {

/// Where upstream's NVVM serializer finds `tool` (ptxas, fatbinary):
/// <toolkit>/bin, PATH, NVVM::getCUDAToolkitPath()/bin; none if nowhere.
std::optional<std::string> findCudaTool(llvm::StringRef tool,
                                        llvm::StringRef toolkit);

/// Compiles `ptx` with ptxas for `target` (chip, O, flags["ptxas-cmd-options"])
/// plus `options`' cmd options; with a fatbin compilation target, wraps the
/// cubin and the PTX with fatbinary. `moduleName` names the temporary files
/// as upstream does. Tool errors are emitted at `loc`, with their log. A
/// tool still running after `timeoutSeconds` (0 = no limit) is killed, with
/// everything it started, and the error names the limit.
mlir::FailureOr<llvm::SmallVector<char, 0>>
assemblePtx(llvm::StringRef ptx, mlir::NVVM::NVVMTargetAttr target,
            const mlir::gpu::TargetOptions &options, llvm::StringRef moduleName,
            mlir::Location loc, unsigned timeoutSeconds = 0);

} // namespace fly

#endif // FLY_BACKEND_PTXASSEMBLER_H
