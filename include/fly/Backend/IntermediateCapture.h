//===- IntermediateCapture.h - What a binary pass went through -*- C++ -*-===//
//
// The LLVM IR and ISA each target of each gpu.module went through in
// fly-module-to-binary (ModuleToBinary.h), kept for FLY_DUMP_IR.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_INTERMEDIATECAPTURE_H
#define FLY_BACKEND_INTERMEDIATECAPTURE_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <mutex>
#include <string>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace fly {

/// What one target of one gpu.module went through on its way to an object.
struct TargetIntermediates {
  std::string gpuModule;
  /// Position of the target in the gpu.module's target list.
  unsigned targetIndex = 0;
  /// The LLVM IR after optimisation, printed ("" when none was handed over).
  std::string llvmIR;
  /// The ISA text: PTX or AMDGPU assembly ("" for format=offload).
  std::string isa;
};

/// Where fly-module-to-binary hands its intermediates. Thread-safe: the
/// pass runs on several variant modules at once (the context's thread pool)
/// and every instance of one pipeline shares the capture.
class IntermediateCapture {
public:
  enum class Kind { LlvmIR, Isa };
  void add(mlir::Operation *root, llvm::StringRef gpuModule,
           unsigned targetIndex, Kind kind, llvm::StringRef text);
  /// Removes and returns what the pass captured while it ran on `root`, in
  /// serialization order (gpu.modules, then targets).
  std::vector<TargetIntermediates> take(mlir::Operation *root);

private:
  std::mutex mutex;
  llvm::DenseMap<mlir::Operation *, std::vector<TargetIntermediates>> captured;
};

} // namespace fly

#endif // FLY_BACKEND_INTERMEDIATECAPTURE_H
