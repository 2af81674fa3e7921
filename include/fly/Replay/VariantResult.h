//===- VariantResult.h - What one hint set compiled to ----------*- C++ -*-===//

#ifndef FLY_REPLAY_VARIANTRESULT_H
#define FLY_REPLAY_VARIANTRESULT_H

#include "fly/Hints/HintSet.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
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

/// One #gpu.object of one gpu.binary.
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
  std::vector<VariantObject> objects;
  /// The gpu.binary ops the replay produced, printed.
  std::string binaryIR;
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
  /// Non-empty when the compile failed: the diagnostics it produced.
  std::string error;

  bool succeeded() const { return error.empty(); }
};

/// Reads the objects and kernel metadata of the gpu.binary ops in `variant`.
std::vector<VariantObject> collectObjects(mlir::ModuleOp variant);

/// Fills `result`'s objects, printed gpu.binary ops and object hash from the
/// gpu.binary ops in `module`.
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
