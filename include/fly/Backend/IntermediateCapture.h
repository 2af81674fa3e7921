//===- IntermediateCapture.h - What a binary pass went through -*- C++ -*-===//
//
// What fly-module-to-binary (ModuleToBinary.h) went through on its way to
// each variant's objects: the LLVM IR and ISA of each target of each
// gpu.module, kept for FLY_DUMP_IR, and how many of them continued a
// kept code generation (RocdlSharedCodegen.h), for the manifest.
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

/// What the pass went through while it ran on one variant module.
struct CapturedReplay {
  /// With texts captured: in serialization order (gpu.modules, then
  /// targets).
  std::vector<TargetIntermediates> intermediates;
  /// The targets whose ISA continued a kept code generation
  /// instead of compiling whole.
  unsigned codegenContinued = 0;
};

/// Where fly-module-to-binary hands what it went through. Thread-safe: the
/// pass runs on several variant modules at once (the context's thread pool)
/// and every instance of one pipeline shares the capture.
class IntermediateCapture {
public:
  /// `texts`: the LLVM IR and ISA too (printing the IR costs a compile
  /// time); without, only the counts.
  explicit IntermediateCapture(bool texts = true) : texts(texts) {}
  bool capturesTexts() const { return texts; }

  enum class Kind { LlvmIR, Isa };
  void add(mlir::Operation *root, llvm::StringRef gpuModule,
           unsigned targetIndex, Kind kind, llvm::StringRef text);
  void addContinued(mlir::Operation *root);
  /// Removes and returns what the pass captured while it ran on `root`.
  CapturedReplay take(mlir::Operation *root);

private:
  const bool texts;
  std::mutex mutex;
  llvm::DenseMap<mlir::Operation *, CapturedReplay> captured;
};

} // namespace fly

#endif // FLY_BACKEND_INTERMEDIATECAPTURE_H
