//===- BinaryPass.h - gpu-module-to-binary's options, typed -----*- C++ -*-===//
//
// The binary pass is read from text once, where it enters fly (a pipeline, a
// plugin option), into upstream's own GpuModuleToBinaryPassOptions; every
// replay, shared-ISA compile, assembly step, dump and check then works on
// that struct and builds the pass from it. Nothing scans printed pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_REPLAY_BINARYPASS_H
#define FLY_REPLAY_BINARYPASS_H

#include "fly/Backend/ModuleToBinary.h" // parseBinaryFormat

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/Location.h"
#include "mlir/Pass/Pass.h"

#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>

namespace fly {

using BinaryPassOptions = mlir::GpuModuleToBinaryPassOptions;

/// Parses `gpu-module-to-binary{...}` (optionally inside `builtin.module(...)`)
/// with MLIR's pass-option parser. Emits a located error for anything else:
/// another pass, several passes, an unknown option or format.
mlir::FailureOr<BinaryPassOptions> parseBinaryPass(llvm::StringRef text,
                                                   mlir::Location loc);

/// The options of a configured gpu-module-to-binary instance (a client's
/// pipeline, seen by an instrumentation). Pass offers no other way to read
/// them than printing: this is the one place that prints a pass and parses
/// it back.
mlir::FailureOr<BinaryPassOptions> readBinaryPassOptions(mlir::Pass &pass,
                                                         mlir::Location loc);

/// Whether `a` and `b` configure the same pass: equal options, the format
/// compared as the CompilationTarget it names (`bin` is `binary`).
bool isSameBinaryPass(const BinaryPassOptions &a, const BinaryPassOptions &b);

/// The pass as it prints itself (printAsTextualPipeline): the spelling
/// manifests and cache keys record.
std::string printBinaryPass(const BinaryPassOptions &options);

/// `options` with `extraOpts` appended to its `opts`.
BinaryPassOptions withExtraOpts(BinaryPassOptions options,
                                llvm::StringRef extraOpts);

/// Whether the pass makes linked objects (bin, fatbin) rather than LLVM IR
/// or ISA.
bool linksObjects(const BinaryPassOptions &options);

llvm::json::Value toJSON(const BinaryPassOptions &options);
bool fromJSON(const llvm::json::Value &value, BinaryPassOptions &options,
              llvm::json::Path path);

} // namespace fly

#endif // FLY_REPLAY_BINARYPASS_H
