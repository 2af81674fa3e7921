//===- AmdgpuMetadata.h - Kernel resources from AMDGPU metadata -*- C++ -*-===//
//
// Every AMDGPU code object carries its kernels' resource use (.vgpr_count,
// .sgpr_count, spills, scratch, ...) as code object metadata: a msgpack
// NT_AMDGPU_METADATA note in the ELF, and the same map as YAML between
// .amdgpu_metadata and .end_amdgpu_metadata in the assembly. Upstream fills
// #gpu.kernel_metadata from it for format=fatbin only; these read it for bin
// and isa too.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_REPLAY_AMDGPUMETADATA_H
#define FLY_REPLAY_AMDGPUMETADATA_H

#include "fly/Replay/VariantResult.h"

#include "llvm/Support/Error.h"

namespace fly {

/// The kernels listed in the NT_AMDGPU_METADATA note of `hsaco`, with their
/// scalar fields under the note's names less the leading dot (vgpr_count,
/// sgpr_count, agpr_count, vgpr_spill_count, private_segment_fixed_size...).
llvm::Expected<std::vector<KernelInfo>>
readAmdgpuNoteKernelInfo(llvm::StringRef hsaco);

/// The same from the .amdgpu_metadata block of AMDGPU assembly.
llvm::Expected<std::vector<KernelInfo>>
readAmdgpuAsmKernelInfo(llvm::StringRef assembly);

} // namespace fly

#endif // FLY_REPLAY_AMDGPUMETADATA_H
