//===- Presets.cpp - Default pipelines and toolkits per target ------------===//

#include "fly/Compiler/Presets.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#ifndef FLY_INSTALL_TOOLKIT_DIR
#define FLY_INSTALL_TOOLKIT_DIR ""
#endif
#ifndef FLY_BUILD_TOOLKIT_DIR
#define FLY_BUILD_TOOLKIT_DIR ""
#endif
#ifndef FLY_DEFAULT_CUDA_TOOLKIT
#define FLY_DEFAULT_CUDA_TOOLKIT ""
#endif

using namespace llvm;

namespace fly {

Expected<TargetSpec> parseTargetSpec(StringRef target) {
  auto [family, chip] = target.split(':');
  if ((family != "rocdl" && family != "nvvm") || chip.empty())
    return createStringError(inconvertibleErrorCode(),
                             "target must be rocdl:<chip> or nvvm:<sm_XX>, "
                             "got '%s'",
                             target.str().c_str());
  return TargetSpec{family.str(), chip.str()};
}

std::string getPresetPipeline(const TargetSpec &target, StringRef toolkit,
                              StringRef format) {
  bool rocdl = target.family == "rocdl";
  std::string fmt = format.empty() ? (rocdl ? "fatbin" : "bin") : format.str();
  std::string binary =
      formatv("gpu-module-to-binary{{format={0} toolkit={1}}", fmt, toolkit);
  if (rocdl)
    return formatv("builtin.module(canonicalize,cse,"
                   "rocdl-attach-target{{chip={0} O=3},"
                   "gpu.module(convert-scf-to-cf,"
                   "convert-gpu-to-rocdl{{chipset={0}}),"
                   "reconcile-unrealized-casts,{1})",
                   target.chip, binary);
  return formatv("builtin.module(canonicalize,cse,"
                 "nvvm-attach-target{{chip={0} O=3},"
                 "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm),"
                 "reconcile-unrealized-casts,{1})",
                 target.chip, binary);
}

std::string findToolkit(StringRef family, StringRef anchorDir) {
  if (family != "rocdl")
    return FLY_DEFAULT_CUDA_TOOLKIT;
  if (std::optional<std::string> env = sys::Process::GetEnv("FLY_ROCM_TOOLKIT"))
    return *env;
  SmallString<256> parent(sys::path::parent_path(anchorDir));
  SmallString<256> beside(parent), installed(parent);
  sys::path::append(beside, "rocm-toolkit");
  sys::path::append(installed, "share", "fly-snapshot", "rocm-toolkit");
  for (StringRef dir :
       {StringRef(beside), StringRef(installed),
        StringRef(FLY_INSTALL_TOOLKIT_DIR), StringRef(FLY_BUILD_TOOLKIT_DIR),
        StringRef("/opt/rocm")}) {
    if (dir.empty())
      continue;
    SmallString<256> lld(dir);
    sys::path::append(lld, "llvm", "bin", "ld.lld");
    if (sys::fs::exists(lld))
      return dir.str();
  }
  return "";
}

} // namespace fly
