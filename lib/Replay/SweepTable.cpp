//===- SweepTable.cpp - What a sweep's variants use, per kernel -----------===//

#include "Replay/SweepTable.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <tuple>

using namespace llvm;

namespace fly {

/// Waves per SIMD an AMDGPU kernel's VGPRs allow: the SIMD's VGPR file
/// divided by the kernel's VGPRs rounded up to the allocation granule, as
/// LLVM's AMDGPU::IsaInfo counts them. gfx90a and gfx94x/gfx950 have one
/// 512-entry file (VGPRs and AGPRs, granule 8, at most 8 waves); gfx908 and
/// earlier gfx9 have 256 VGPRs (granule 4, at most 10), gfx908 its AGPRs in
/// a second file of the same size. gfx10+ count per wave size: 1024 VGPRs
/// (granule 16) in wave32, 512 (8) in wave64, half as much again on the
/// chips with 1.5x VGPRs (gfx1100, gfx1101, gfx1151); at most 16 waves
/// (gfx1010-gfx1013: 20).
static std::optional<Occupancy> getAmdgpuOccupancy(StringRef chip, int64_t vgpr,
                                                   int64_t agpr,
                                                   int64_t waveSize) {
  if (!chip.starts_with("gfx") || chip.size() < 6)
    return std::nullopt;
  int64_t file, granule, maxWaves;
  int64_t used = vgpr;
  if (chip.starts_with("gfx9")) {
    bool unified = chip.starts_with("gfx90a") || chip.starts_with("gfx94") ||
                   chip.starts_with("gfx95");
    file = unified ? 512 : 256;
    granule = unified ? 8 : 4;
    maxWaves = unified ? 8 : 10;
    if (chip.starts_with("gfx908"))
      used = std::max(vgpr, agpr);
  } else if (chip.starts_with("gfx10") || chip.starts_with("gfx11") ||
             chip.starts_with("gfx12")) {
    bool wave32 = waveSize != 64;
    bool wider = chip == "gfx1100" || chip == "gfx1101" || chip == "gfx1151";
    file = (wave32 ? 1024 : 512) * (wider ? 3 : 2) / 2;
    granule = (wave32 ? 16 : 8) * (wider ? 3 : 2) / 2;
    maxWaves = chip.starts_with("gfx101") ? 20 : 16;
  } else {
    return std::nullopt;
  }
  used = alignTo(std::max<int64_t>(used, 1), granule);
  return Occupancy{std::min(maxWaves, file / used), "waves/SIMD"};
}

/// Blocks per SM an NVIDIA kernel's registers allow at its required block
/// size: 64K registers per SM, allocated per warp in units of 256.
static std::optional<Occupancy> getSmOccupancy(StringRef chip, int64_t regs,
                                               int64_t blockSize) {
  unsigned sm = 0;
  if (!chip.consume_front("sm_") ||
      chip.take_while(isDigit).getAsInteger(10, sm) || blockSize <= 0)
    return std::nullopt;
  // Per-SM limits of the compute capability (CUDA programming guide).
  int64_t maxWarps = (sm == 86 || sm == 87 || sm == 89 || sm >= 120) ? 48 : 64;
  int64_t maxBlocks = sm == 86 || sm == 87 ? 16 : sm == 89 ? 24 : 32;
  int64_t warpsPerBlock = divideCeil(blockSize, 32);
  int64_t regsPerWarp = alignTo(std::max<int64_t>(regs, 1) * 32, 256);
  int64_t byRegs = (65536 / regsPerWarp) / warpsPerBlock;
  int64_t byWarps = maxWarps / warpsPerBlock;
  return Occupancy{std::min({maxBlocks, byWarps, byRegs}), "blocks/SM"};
}

KernelResources getKernelResources(const VariantObject &object,
                                   const KernelInfo &kernel) {
  const json::Object &md = kernel.metadata;
  KernelResources r;
  if (object.family == "rocdl") {
    r.vgpr = md.getInteger("vgpr_count");
    r.sgpr = md.getInteger("sgpr_count");
    r.agpr = md.getInteger("agpr_count");
    std::optional<int64_t> vs = md.getInteger("vgpr_spill_count"),
                           ss = md.getInteger("sgpr_spill_count");
    if (vs || ss)
      r.spills = vs.value_or(0) + ss.value_or(0);
    r.scratch = md.getInteger("private_segment_fixed_size");
    r.shared = md.getInteger("group_segment_fixed_size");
    if (r.vgpr)
      r.occupancy =
          getAmdgpuOccupancy(object.chip, *r.vgpr, r.agpr.value_or(0),
                             md.getInteger("wavefront_size").value_or(64));
  } else if (object.family == "nvvm") {
    r.regs = md.getInteger("registers");
    r.scratch = md.getInteger("frame_bytes");
    r.shared = md.getInteger("shared_bytes");
    int64_t block = 0;
    // The block size the kernel requires (.reqntid) or at most allows
    // (.maxntid, what gpu.func's known_block_size becomes).
    const json::Array *dims = md.getArray("reqntid");
    if (!dims)
      dims = md.getArray("maxntid");
    if (dims) {
      block = 1;
      for (const json::Value &dim : *dims)
        block *= dim.getAsInteger().value_or(1);
    }
    if (r.regs)
      r.occupancy = getSmOccupancy(object.chip, *r.regs, block);
  }
  return r;
}

json::Object toJSON(const KernelResources &r) {
  auto orNull = [](std::optional<int64_t> value) {
    return value ? json::Value(*value) : json::Value(nullptr);
  };
  return json::Object{
      {"vgpr", orNull(r.vgpr)},
      {"sgpr", orNull(r.sgpr)},
      {"agpr", orNull(r.agpr)},
      {"registers", orNull(r.regs)},
      {"spills", orNull(r.spills)},
      {"scratch", orNull(r.scratch)},
      {"shared", orNull(r.shared)},
      {"occupancy",
       r.occupancy ? json::Value(r.occupancy->value) : json::Value(nullptr)},
      {"occupancy_unit",
       r.occupancy ? json::Value(r.occupancy->unit) : json::Value(nullptr)},
  };
}

/// Smaller is better. Scratch / stack bytes stand in for spills where the
/// object does not count them (NVIDIA).
static auto rankOf(const KernelResources &r) {
  return std::make_tuple(r.spills.value_or(0), r.scratch.value_or(0),
                         -(r.occupancy ? r.occupancy->value : 0),
                         r.vgpr ? *r.vgpr : r.regs.value_or(0));
}

bool changesNumerics(const HintSet &hints) {
  // Backend flags and function attributes that relax IEEE semantics, as
  // LLVM (AMDGPU, NVPTX) and ptxas spell them.
  static constexpr StringLiteral kNumericsWords[] = {
      "fast",     "unsafe",      "no-nans",       "no-infs", "no-signed-zeros",
      "approx",   "fp-contract", "denormal",      "ftz",     "fmad",
      "prec-div", "prec-sqrt",   "fp32-denormals"};
  for (const TypedHint &hint : hints.hints()) {
    StringRef name = hint.spec->name;
    if (name == "fast_fp_math" || name == "unsafe_fp_math") {
      if (hint.value.getBool())
        return true;
      continue;
    }
    HintType type = hint.value.getType();
    if (type != HintType::String && type != HintType::Attribute)
      continue;
    std::string text =
        StringRef(hint.key + "=" + hint.value.canonical().str()).lower();
    if (name == "target.chip" || name == "target.triple")
      continue;
    if (any_of(kNumericsWords,
               [&](StringRef word) { return StringRef(text).contains(word); }))
      return true;
  }
  return false;
}

std::vector<BestRow> findBestRows(ArrayRef<VariantResult> variants,
                                  bool allowNumericsChanges) {
  std::vector<BestRow> best;
  std::vector<decltype(rankOf(KernelResources()))> ranks;
  for (const VariantResult &variant : variants) {
    if (!variant.succeeded())
      continue;
    if (!allowNumericsChanges && changesNumerics(variant.hints))
      continue;
    for (const VariantObject &object : variant.objects)
      for (const KernelInfo &kernel : object.kernels) {
        KernelResources r = getKernelResources(object, kernel);
        if (!r.vgpr && !r.regs)
          continue;
        auto rank = rankOf(r);
        auto it = find_if(best, [&](const BestRow &row) {
          return row.gpuModule == object.gpuModule && row.chip == object.chip &&
                 row.targetIndex == object.targetIndex &&
                 row.kernel == kernel.name;
        });
        if (it == best.end()) {
          best.push_back({object.gpuModule, object.chip, kernel.name,
                          object.targetIndex, variant.index});
          ranks.push_back(rank);
        } else if (rank < ranks[it - best.begin()]) {
          it->variant = variant.index;
          ranks[it - best.begin()] = rank;
        }
      }
  }
  return best;
}

std::string getFailureSummary(StringRef error) {
  // "... failed. Log:" introduces the tool's own lines: take the first.
  SmallVector<StringRef> lines;
  StringRef(error).split(lines, '\n', -1, /*KeepEmpty=*/false);
  if (lines.empty())
    return "";
  std::string summary = lines.front().trim().str();
  if (StringRef(summary).ends_with(":") && lines.size() > 1)
    summary += " " + lines[1].trim().str();
  return summary;
}

/// The chip, or `chip#<target index>` when another target of the same
/// gpu.module has the same chip.
static std::string targetLabel(const VariantObject &object,
                               ArrayRef<VariantObject> siblings) {
  bool repeated = any_of(siblings, [&](const VariantObject &other) {
    return other.gpuModule == object.gpuModule && other.chip == object.chip &&
           other.targetIndex != object.targetIndex;
  });
  return repeated ? object.chip + "#" + std::to_string(object.targetIndex)
                  : object.chip;
}

static std::string cell(std::optional<int64_t> value) {
  return value ? std::to_string(*value) : "-";
}

void printSweepTable(raw_ostream &os, ArrayRef<VariantResult> variants,
                     const std::vector<bool> &fromCache,
                     bool allowNumericsChanges) {
  std::vector<BestRow> best = findBestRows(variants, allowNumericsChanges);
  bool anyNumerics = false;
  auto isBest = [&](unsigned variant, const VariantObject &object,
                    StringRef kernel) {
    return any_of(best, [&](const BestRow &row) {
      return row.variant == variant && row.gpuModule == object.gpuModule &&
             row.chip == object.chip && row.targetIndex == object.targetIndex &&
             row.kernel == kernel;
    });
  };
  // The column is 30 wide: a longer hint set is cut so the row stays
  // aligned; manifest.json gives it whole.
  constexpr size_t kHintsWidth = 30;
  bool anyCut = false;
  auto hintsOf = [&](const VariantResult &v) {
    std::string hints = v.hints.canonical();
    if (hints.empty())
      return std::string("(default)");
    if (hints.size() > kHintsWidth) {
      anyCut = true;
      hints = hints.substr(0, kHintsWidth - 2) + "..";
    }
    return hints;
  };
  auto noteOf = [&](size_t i, const VariantResult &v) {
    SmallVector<std::string> notes;
    if (i < fromCache.size() && fromCache[i])
      notes.push_back("cached");
    if (v.duplicateOf)
      notes.push_back(formatv("same as #{0}", *v.duplicateOf).str());
    if (changesNumerics(v.hints)) {
      notes.push_back("numerics");
      anyNumerics = true;
    }
    return join(notes, ", ");
  };

  // One section per family, in the order the objects first name them.
  SmallVector<std::string> families;
  for (const VariantResult &v : variants)
    for (const VariantObject &object : v.objects)
      if (!is_contained(families, object.family))
        families.push_back(object.family);
  if (families.empty())
    families.push_back("");

  for (const std::string &family : families) {
    bool amd = family == "rocdl", nv = family == "nvvm";
    os << "\n"
       << (amd  ? "AMDGPU (rocdl) targets"
           : nv ? "NVIDIA (nvvm) targets"
                : "variants")
       << ":\n";
    std::string regHeader =
        amd ? formatv("{0,+5} {1,+5} {2,+5}", "VGPR", "SGPR", "AGPR").str()
            : formatv("{0,+5}", "REGS").str();
    os << formatv("{0,-3} {1,-30} {2,-8} {3,-16} {4,+8} {5} {6,+6} {7,+7} "
                  "{8,+5} {9,+8}  {10}\n",
                  "#", "hint set", "target", "kernel", "ms", regHeader,
                  "spills", amd ? "scratch" : "stack", "occ", "bytes", "note");
    for (auto [i, v] : enumerate(variants)) {
      if (!v.succeeded()) {
        if (&family == &families.front())
          os << formatv("{0,-3} {1,-30} FAILED: {2}\n", i, hintsOf(v),
                        getFailureSummary(v.error));
        continue;
      }
      std::string ms = formatv("{0:f1}", v.replayMs).str();
      for (const VariantObject &object : v.objects) {
        if (object.family != family)
          continue;
        std::string note = noteOf(i, v);
        if (object.kernels.empty()) {
          std::string why = object.registerNote.empty()
                                ? std::string("no kernels listed")
                                : object.registerNote;
          os << formatv(
              "{0,-3} {1,-30} {2,-8} {3,-16} {4,+8} {5} {6,+6} "
              "{7,+7} {8,+5} {9,+8}  {10}\n",
              i, hintsOf(v), targetLabel(object, v.objects), "-", ms,
              amd ? formatv("{0,+5} {1,+5} {2,+5}", "-", "-", "-").str()
                  : formatv("{0,+5}", "-").str(),
              "-", "-", "-", object.bytes.size(),
              note.empty() ? why : note + "; " + why);
          continue;
        }
        for (const KernelInfo &kernel : object.kernels) {
          KernelResources r = getKernelResources(object, kernel);
          std::string regs = amd ? formatv("{0,+5} {1,+5} {2,+5}", cell(r.vgpr),
                                           cell(r.sgpr), cell(r.agpr))
                                       .str()
                                 : formatv("{0,+5}", cell(r.regs)).str();
          std::string rowNote = note;
          if (isBest(v.index, object, kernel.name))
            rowNote = rowNote.empty() ? "best" : "best, " + rowNote;
          os << formatv("{0,-3} {1,-30} {2,-8} {3,-16} {4,+8} {5} {6,+6} "
                        "{7,+7} {8,+5} {9,+8}  {10}\n",
                        i, hintsOf(v), targetLabel(object, v.objects),
                        kernel.name, ms, regs, cell(r.spills), cell(r.scratch),
                        r.occupancy ? std::to_string(r.occupancy->value) : "-",
                        object.bytes.size(), rowNote);
        }
      }
    }
    if (amd)
      os << "VGPR, AGPR: vector registers per lane; SGPR: scalar registers "
            "per wave (AGPR -: the chip has none); spills: VGPR + SGPR spill "
            "count; scratch: private bytes per lane; occ: waves per SIMD the "
            "VGPRs allow (gfx9, gfx10+)\n";
    else if (nv)
      os << "REGS: registers per thread; spills: not in the cubin (see "
            "stack); stack: local bytes per thread (.nv.info frame size, "
            "spills included); occ: blocks per SM the registers allow at the "
            "kernel's required or maximum block size (reqntid / maxntid; - "
            "when "
            "it has neither)\n";
    os << "ms: wall time of the compile that made the variant (0.0: copied, "
          "not compiled); bytes: "
          "object size; best: the best row per kernel and target (fewest "
          "spills, "
          "then least scratch/stack, then highest occupancy, then fewest "
          "registers)\n";
    if (anyCut)
      os << "hint set: cut at " << kHintsWidth
         << " characters (..); manifest.json's \"hints\" holds it whole\n";
    if (anyNumerics)
      os << "numerics: the hint set may change results (fast or unsafe "
         << "math, a flag that relaxes IEEE semantics); "
         << (allowNumericsChanges
                 ? "ranked with the others (--best-allow-numerics-changes)"
                 : "never best unless --best-allow-numerics-changes")
         << "\n";
  }
}

} // namespace fly
