//===- VariantResult.h - What one hint set compiled to ----------*- C++ -*-===//

#ifndef FLY_REPLAY_VARIANTRESULT_H
#define FLY_REPLAY_VARIANTRESULT_H

#include "fly/Backend/IntermediateCapture.h"
#include "fly/Hints/HintSet.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
class OpBuilder;
namespace gpu {
class BinaryOp;
} // namespace gpu
} // namespace mlir

namespace fly {

/// Resource use of one kernel as the object reports it.
struct KernelInfo {
  std::string name;
  /// ROCDL: #gpu.kernel_metadata (vgpr_count, sgpr_count, agpr_count, spill
  /// counts, LDS and scratch sizes). NVVM cubin: registers, shared memory,
  /// stack frame read from the ELF's .nv.info records.
  llvm::json::Object metadata;
};

/// One gpu.binary a replay made of a gpu.module, typed: what the main module
/// is built from (gpu::BinaryOp builders) and cache entries and results
/// files store. The attributes belong to the MLIRContext the variant was
/// compiled or decoded in, and are valid only while it lives.
struct VariantBinary {
  std::string name;
  /// The gpu.binary's offloading handler; null for none (the default).
  mlir::Attribute offloadingHandler;
  /// Its #gpu.object attributes, one per target of the gpu.module, in order.
  mlir::ArrayAttr objects;
  /// Where the replay's op was (printBinaries, as the op printed itself);
  /// null after decoding: locations are not stored.
  mlir::LocationAttr loc;
};

/// One #gpu.object of one gpu.binary, as manifests, tables and the C API
/// read it (derived from VariantResult::binaries).
struct VariantObject {
  std::string gpuModule;
  std::string target; // Printed target attribute.
  std::string family; // rocdl | nvvm | other
  std::string chip;   // The target's chip: gfx942, sm_90 ("" for others).
  /// Position of the target in its gpu.module's target list.
  unsigned targetIndex = 0;
  std::string format; // offload | isa | bin | fatbin
  std::string extension;
  std::string bytes;
  std::vector<KernelInfo> kernels;
  /// Where `kernels` was read from ("kernel table", "AMDGPU metadata note",
  /// "AMDGPU assembly metadata", "cubin .nv.info", "cubin in fatbin"), or
  /// why there is no register data ("PTX only: no register data in PTX").
  std::string registerSource, registerNote;
  llvm::json::Object properties;
};

/// The file name of `object` in a sweep's output: `<id>.<gpu.module>.<chip>
/// <ext>`, with `.t<target index>` before the extension when another target
/// of the same gpu.module has the same chip (e.g. two gfx942 targets that
/// differ in features).
std::string getObjectFileName(llvm::StringRef variantId,
                              const VariantObject &object,
                              llvm::ArrayRef<VariantObject> siblings);

struct VariantResult {
  unsigned index = 0;
  std::string id;
  HintSet hints;
  /// The binary pass exactly as it ran, options included.
  std::string binaryPass;
  /// The gpu.binary ops the replay produced, typed.
  std::vector<VariantBinary> binaries;
  /// The same ops printed (the `.mlir` file), for a caller that keeps the
  /// result after the context is gone (fly-opt's MlirOptMain, C API
  /// results): keepBinaryIR renders it. Empty otherwise: printBinaryIR
  /// prints the ops themselves, and a big sweep does not hold every
  /// variant's text at once. Nothing parses it.
  std::string binaryIR;
  /// Their objects, one per (gpu.binary, target), in that order.
  std::vector<VariantObject> objects;
  /// With ReplayPlan::captureIntermediates: each target's LLVM IR and ISA
  /// as its replay saw them (FLY_DUMP_IR's `.ll` and `.s`), in object order.
  std::vector<TargetIntermediates> intermediates;
  /// Wall time of the compile this variant was part of, and how many variants
  /// shared it (compiled in parallel); exact per variant when 1.
  double replayMs = 0;
  unsigned replayedWith = 1;
  /// Hash over all object bytes; equal hashes mean the hints made no
  /// difference.
  uint64_t objectHash = 0;
  std::optional<unsigned> duplicateOf;
  /// With ReplayPlan::reuseIsa: the variant whose ISA compile this one's
  /// objects were assembled from (itself when it ran it).
  std::optional<unsigned> isaFrom;
  /// How many of its objects (gpu.module x ROCDL target) were compiled from
  /// a kept code generation (RocdlSharedCodegen.h), through their ISA
  /// compile, not whole; a copy or a variant finished from another's ISA
  /// repeats that compile's count. 0 for a result from the cache.
  unsigned codegenContinued = 0;
  /// Never compiled: the sweep's time budget was spent, or the sweep was
  /// cancelled, before it started (`error` says which).
  bool skipped = false;
  /// Non-empty when the compile failed: the diagnostics it produced.
  std::string error;

  bool succeeded() const { return error.empty(); }
};

/// The gpu.binary ops directly in `module`, typed.
std::vector<VariantBinary> readBinaries(mlir::ModuleOp module);

/// The gpu.binary op `binary` describes, created at `builder`'s insertion
/// point as gpu-module-to-binary creates it.
mlir::gpu::BinaryOp createBinaryOp(mlir::OpBuilder &builder, mlir::Location loc,
                                   const VariantBinary &binary);

/// The gpu.binary ops, printed one a line as they print inside a module:
/// the variant's `.mlir` file.
std::string printBinaries(llvm::ArrayRef<VariantBinary> binaries);
void printBinaries(llvm::raw_ostream &os,
                   llvm::ArrayRef<VariantBinary> binaries);

/// The variant's `.mlir` text: its binaryIR where rendered, else its
/// binaries printed (the context must be alive then).
void printBinaryIR(llvm::raw_ostream &os, const VariantResult &result);
std::string printBinaryIR(const VariantResult &result);

/// Renders `result.binaryIR` from its binaries, for use after the context
/// is gone.
void keepBinaryIR(VariantResult &result);

/// Reads the objects and kernel metadata of `binaries`.
std::vector<VariantObject>
collectObjects(llvm::ArrayRef<VariantBinary> binaries);

/// Hash over the objects' gpu.modules and bytes (VariantResult::objectHash).
uint64_t hashObjects(llvm::ArrayRef<VariantObject> objects);

/// Sets `result`'s binaries, and the objects and object hash read from them.
void setBinaries(VariantResult &result, std::vector<VariantBinary> binaries);

/// setBinaries with the gpu.binary ops in `module`.
void recordBinaries(VariantResult &result, mlir::ModuleOp module);

/// [{"name": ..., "metadata": {...}}, ...] for manifests and cache entries.
llvm::json::Array kernelsToJSON(const std::vector<KernelInfo> &kernels);

/// Reads per-kernel registers, shared memory and stack from an NVIDIA cubin.
std::vector<KernelInfo> readCubinKernelInfo(llvm::StringRef cubin);

/// Fills `object.kernels`, `registerSource` and `registerNote` from its
/// bytes, for every format: ROCDL objects from their AMDGPU metadata (note
/// or assembly block), NVVM cubins from .nv.info, NVVM fatbins from the
/// cubin inside. Keeps a kernel table already there.
void readObjectKernelInfo(VariantObject &object);

} // namespace fly

#endif // FLY_REPLAY_VARIANTRESULT_H
