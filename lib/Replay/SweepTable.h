//===- SweepTable.h - What a sweep's variants use, per kernel ---*- C++ -*-===//
//
// One row per variant, object (target) and kernel, with register columns
// named as the target family names them (AMDGPU: VGPR, SGPR, AGPR; NVIDIA:
// REGS), spills, scratch / stack, and occupancy where it follows from the
// registers alone. fly-tune prints it; the manifest carries the same
// occupancy and best rows, which examples/print_manifest.py shows.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_REPLAY_SWEEPTABLE_H
#define FLY_REPLAY_SWEEPTABLE_H

#include "fly/Replay/VariantResult.h"

#include "llvm/Support/raw_ostream.h"

namespace fly {

/// Occupancy one kernel's resources allow, as far as registers decide it.
struct Occupancy {
  int64_t value = 0;
  /// "waves/SIMD" (AMDGPU gfx9, from VGPRs) or "blocks/SM" (NVIDIA, from
  /// registers and the required block size).
  std::string unit;
};

/// The register-derived columns of one kernel of `object`.
struct KernelResources {
  std::optional<int64_t> vgpr, sgpr, agpr; // AMDGPU.
  std::optional<int64_t> regs;             // NVIDIA, per thread.
  /// AMDGPU: VGPR + SGPR spill count. NVIDIA: none in the cubin.
  std::optional<int64_t> spills;
  /// AMDGPU: private segment bytes per lane. NVIDIA: stack frame bytes per
  /// thread (.nv.info; spills land there).
  std::optional<int64_t> scratch;
  /// Static LDS (AMDGPU group segment) / shared memory bytes per block.
  std::optional<int64_t> shared;
  std::optional<Occupancy> occupancy;
};

/// The one place the backends' kernel metadata become these columns; the
/// manifest writes them (`resources` of each kernel) for every other reader.
KernelResources getKernelResources(const VariantObject &object,
                                   const KernelInfo &kernel);

/// `resources` of a manifest kernel: every field, null where unknown.
llvm::json::Object toJSON(const KernelResources &resources);

/// The best variant per (gpu.module, chip, kernel): fewest spills, then
/// least scratch / stack, then highest occupancy, then fewest registers;
/// the lowest variant index among equals.
struct BestRow {
  std::string gpuModule, chip, kernel;
  /// Which target of the gpu.module (two may share a chip).
  unsigned targetIndex = 0;
  unsigned variant = 0;
};
/// Variants whose hints may change numerics (changesNumerics) are left out
/// unless `allowNumericsChanges`.
std::vector<BestRow> findBestRows(llvm::ArrayRef<VariantResult> variants,
                                  bool allowNumericsChanges = false);

/// Whether a hint set may change a kernel's results, not only its speed:
/// fast_fp_math / unsafe_fp_math on, or an `opts`, passthrough or function
/// attribute hint that relaxes IEEE semantics (fast / unsafe math, no-nans,
/// no-infs, approximations, contraction, denormal flushing, ptxas --fmad,
/// --prec-div, -ftz, ...).
bool changesNumerics(const HintSet &hints);

/// Prints the table: one section per target family, a legend with units.
/// `fromCache[i]` marks variant i as loaded from the cache (may be empty).
/// A failed variant's error on one line, as its table row shows it: the
/// first line, and the next one when the first only introduces it
/// ("`ptxas` invocation failed. Log:").
std::string getFailureSummary(llvm::StringRef error);

/// Rows of hint sets that may change numerics say `numerics`.
void printSweepTable(llvm::raw_ostream &os,
                     llvm::ArrayRef<VariantResult> variants,
                     const std::vector<bool> &fromCache,
                     bool allowNumericsChanges = false);

} // namespace fly

#endif // FLY_REPLAY_SWEEPTABLE_H
