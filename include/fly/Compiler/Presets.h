//===- Presets.h - Default pipelines and toolkits per target ----*- C++ -*-===//
//
// What a front end gets when it names only a target ("rocdl:gfx942"): the
// lowering preset for plain gpu-dialect input and the toolkit folder that
// gpu-module-to-binary needs. fly-tune and the C API share these.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_COMPILER_PRESETS_H
#define FLY_COMPILER_PRESETS_H

#include "fly/Compiler/TargetName.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace fly {

/// The object format a preset compiles to by default: fatbin on ROCDL (its
/// kernel table carries register counts), bin on NVVM (fly reads registers
/// from the cubin).
llvm::StringRef getDefaultObjectFormat(llvm::StringRef family);

/// The lowering preset for plain gpu-dialect input (buildPresetPipeline,
/// TargetPresets.h, for kernel-only gpu.modules without targets), ending in
/// `gpu-module-to-binary{format=<format> toolkit=<toolkit>}`; an empty
/// `format` is getDefaultObjectFormat's.
std::string getPresetPipeline(const TargetSpec &target, llvm::StringRef toolkit,
                              llvm::StringRef format = "");

/// The attach-target `features` a preset gives `target` with `toolkit`:
/// NVVM sm_90 gets +ptx80 (its TMA and mbarrier instructions need PTX 8.0;
/// LLVM's default for sm_90 is 7.8) when the toolkit's ptxas reads PTX 8.0
/// (CUDA 12 or later); "" otherwise (LLVM's default PTX for the chip).
std::string getPresetFeatures(const TargetSpec &target,
                              llvm::StringRef toolkit);

/// A toolkit folder and where it came from ("$CUDA_HOME", "ptxas on PATH:
/// /x/bin/ptxas", ...), for the line that tells the user which one is used.
struct FoundToolkit {
  std::string dir, origin;
};

/// The toolkit for `family`. ROCDL: $FLY_ROCM_TOOLKIT, else the first folder
/// with the device libraries (amdgcn/bitcode; ld.lld runs in-process) among
/// `<anchor>/../rocm-toolkit` (the build tree, a self-contained folder, the
/// wheel), `<anchor>/../share/fly-snapshot/rocm-toolkit` (an installed
/// prefix), the install and build folders this library was configured with,
/// and /opt/rocm; `anchor` is the directory of the running tool or library.
/// NVVM: the first with bin/ptxas of $CUDA_HOME, $CUDA_PATH, the folder above
/// the ptxas on PATH, /usr/local/cuda and the toolkit found at configure
/// time. An empty dir if none.
FoundToolkit locateToolkit(llvm::StringRef family, llvm::StringRef anchorDir);

/// locateToolkit(family, anchorDir).dir.
std::string findToolkit(llvm::StringRef family, llvm::StringRef anchorDir);

} // namespace fly

#endif // FLY_COMPILER_PRESETS_H
