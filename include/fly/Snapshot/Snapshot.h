//===- Snapshot.h - The checkpoint before gpu-module-to-binary --*- C++ -*-===//
//
// The snapshot is the module as gpu-module-to-binary would see it: every
// gpu.module carries a target attribute and its kernels are llvm.func. It is
// identical for every hint set, so it is computed once and replayed.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SNAPSHOT_SNAPSHOT_H
#define FLY_SNAPSHOT_SNAPSHOT_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

namespace fly {

enum class SnapshotFormat { Bytecode, Text };

/// Parses "bytecode" or "text".
std::optional<SnapshotFormat> parseSnapshotFormat(llvm::StringRef name);

/// The gpu.modules that gpu-module-to-binary will serialise: the immediate
/// children of `module` that carry target attributes.
llvm::SmallVector<mlir::gpu::GPUModuleOp>
getTargetedGpuModules(mlir::ModuleOp module);

/// Checks that `module` is at the checkpoint position (right before
/// gpu-module-to-binary). Emits a located error that says where the
/// checkpoint belongs otherwise. `who` names the caller in messages.
mlir::LogicalResult verifyCheckpointPosition(mlir::ModuleOp module,
                                             llvm::StringRef who);

/// Writes `module` to `path` atomically (temporary file + rename), so a
/// reader never sees a partial snapshot.
mlir::LogicalResult writeSnapshot(mlir::ModuleOp module, llvm::StringRef path,
                                  SnapshotFormat format);

/// Reads a snapshot (bytecode or text) from a buffer already in memory (a
/// work directory's file, a cache entry), verifies it and checks it is at
/// the checkpoint position. Emits located errors and returns null on
/// failure.
mlir::OwningOpRef<mlir::ModuleOp>
readSnapshotBuffer(llvm::StringRef buffer, llvm::StringRef name,
                   mlir::MLIRContext *context);

} // namespace fly

#endif // FLY_SNAPSHOT_SNAPSHOT_H
