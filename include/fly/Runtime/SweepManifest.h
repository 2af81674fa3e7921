//===- SweepManifest.h - Read fly-tune's manifest.json ----------*- C++ -*-===//
//
// The reading side of lib/Replay/Manifest.cpp. Ids and file names must be
// plain names inside the out-dir; objects are read as regular files of the
// size the manifest records.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_SWEEPMANIFEST_H
#define FLY_RUNTIME_SWEEPMANIFEST_H

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace fly::rt {

struct ManifestKernel {
  std::string name;
  llvm::json::Object metadata;
  /// Registers per thread the compiler reported ("registers" on NVVM,
  /// "vgpr_count" on ROCDL); -1 when absent.
  int64_t registers() const;
  /// Per-thread spill/stack bytes ("frame_bytes" /
  /// "private_segment_fixed_size").
  int64_t localBytes() const;
};

struct ManifestObject {
  std::string gpuModule;
  std::string format; ///< bin, fatbin, isa, offload
  std::string chip;   ///< the target's chip (sm_90, gfx942); "" if unknown
  std::string file;   ///< path of the object file; empty if not written
  uint64_t size = 0;  ///< bytes, as written
  std::vector<ManifestKernel> kernels;
};

struct ManifestVariant {
  int index = 0;
  std::string id;
  std::string hints; ///< canonical "k=v,k=v"; empty is the default
  llvm::json::Value hintSet = nullptr;
  bool ok = false;
  std::string error;
  std::optional<int> duplicateOf;
  std::string objectHash; ///< fly-tune's hash of the variant's objects
  std::vector<ManifestObject> objects;
  std::vector<std::string> files; ///< plain names inside the out-dir

  /// The object holding `kernel` and its metadata, or null.
  const ManifestObject *findKernel(llvm::StringRef kernel,
                                   const ManifestKernel **info = nullptr) const;
};

struct SweepManifest {
  std::string dir;
  std::string target; ///< "nvvm:sm_90"
  std::string family; ///< "nvvm" / "rocdl"
  std::string chip;   ///< "sm_90"; "" when the objects are for several chips
  std::vector<ManifestVariant> variants;

  /// Kernel names found in the variants' objects, first-seen order.
  std::vector<std::string> kernelNames() const;
};

/// Where a variant has objects of one gpu.module for several chips (a
/// gpu.module with several targets), keeps the one whose chip is
/// `deviceChip` (e.g. "sm_90", "gfx942") and returns a line per variant that
/// says which it loads and what else was built. Where none matches, keeps
/// them all and says so. Single-chip manifests are left as they are.
std::vector<std::string> selectObjectsForChip(SweepManifest &manifest,
                                              llvm::StringRef deviceChip,
                                              llvm::StringRef deviceNote);

/// Objects larger than this are refused whatever the manifest says.
constexpr uint64_t kMaxObjectBytes = uint64_t(1) << 30;

llvm::Expected<SweepManifest> parseSweepManifest(llvm::StringRef text,
                                                 llvm::StringRef dir);
llvm::Expected<SweepManifest> readSweepManifest(llvm::StringRef dir);

/// The object's bytes: a regular file of exactly the recorded size.
llvm::Expected<std::string> readObject(const ManifestObject &object);

} // namespace fly::rt

#endif // FLY_RUNTIME_SWEEPMANIFEST_H
