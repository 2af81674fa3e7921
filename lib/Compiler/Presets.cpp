//===- Presets.cpp - Default pipelines and toolkits per target ------------===//

#include "fly/Compiler/Presets.h"

#include "fly/Cache/CacheKey.h"
#include "fly/Pipeline/TargetPresets.h"

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

StringRef getDefaultObjectFormat(StringRef family) {
  return family == "rocdl" ? "fatbin" : "bin";
}

std::string getPresetPipeline(const TargetSpec &target, StringRef toolkit,
                              StringRef format) {
  // The kernel-only preset: what buildPresetPipeline gives an input of
  // gpu.modules without targets.
  std::string features = getPresetFeatures(target, toolkit);
  PresetOptions preset{target.family, target.chip,
                       format.empty() ? getDefaultObjectFormat(target.family)
                                      : format,
                       toolkit, features};
  return buildPresetPipeline(preset, InputShape());
}

std::string getPresetFeatures(const TargetSpec &target, StringRef toolkit) {
  if (target.family != "nvvm" || target.chip != "sm_90" || toolkit.empty())
    return "";
  SmallString<256> ptxas(toolkit);
  sys::path::append(ptxas, "bin", "ptxas");
  if (!sys::fs::can_execute(ptxas))
    return "";
  // "Cuda compilation tools, release 13.0, V13.0.88"
  std::string version = getToolVersion(ptxas);
  size_t at = StringRef(version).find("release ");
  if (at == StringRef::npos)
    return "";
  StringRef release = StringRef(version).substr(at + 8);
  unsigned major = 0;
  if (release.consumeInteger(10, major) || major < 12)
    return "";
  return "+ptx80";
}

static bool hasFile(StringRef dir, StringRef relative) {
  SmallString<256> path(dir);
  sys::path::append(path, relative);
  return sys::fs::exists(path);
}

/// CUDA users' order: $CUDA_HOME, $CUDA_PATH, the ptxas on PATH (its
/// toolkit is the folder above bin/), /usr/local/cuda, and last the toolkit
/// found when fly was configured. A candidate counts if it has bin/ptxas.
static FoundToolkit locateCudaToolkit() {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> env = sys::Process::GetEnv(var))
      if (!env->empty() && hasFile(*env, "bin/ptxas"))
        return {*env, std::string("$") + var};
  if (std::optional<std::string> ptxas =
          sys::Process::FindInEnvPath("PATH", "ptxas")) {
    SmallString<256> real;
    if (sys::fs::real_path(*ptxas, real))
      real = *ptxas;
    StringRef toolkit = sys::path::parent_path(sys::path::parent_path(real));
    if (!toolkit.empty())
      return {toolkit.str(), "ptxas on PATH: " + *ptxas};
  }
  for (StringRef dir :
       {StringRef("/usr/local/cuda"), StringRef(FLY_DEFAULT_CUDA_TOOLKIT)})
    if (!dir.empty() && hasFile(dir, "bin/ptxas"))
      return {dir.str(), dir == "/usr/local/cuda" ? "the default location"
                                                  : "configured at build time"};
  return {};
}

FoundToolkit locateToolkit(StringRef family, StringRef anchorDir) {
  if (family != "rocdl")
    return locateCudaToolkit();
  if (std::optional<std::string> env = sys::Process::GetEnv("FLY_ROCM_TOOLKIT"))
    return {*env, "$FLY_ROCM_TOOLKIT"};
  SmallString<256> parent(sys::path::parent_path(anchorDir));
  SmallString<256> beside(parent), installed(parent);
  sys::path::append(beside, "rocm-toolkit");
  sys::path::append(installed, "share", "fly-snapshot", "rocm-toolkit");
  // ld.lld runs in-process: the device libraries are all a folder needs.
  std::pair<StringRef, StringRef> candidates[] = {
      {beside, "beside the program"},
      {installed, "the installed prefix"},
      {FLY_INSTALL_TOOLKIT_DIR, "the install folder configured at build time"},
      {FLY_BUILD_TOOLKIT_DIR, "the build tree"},
      {"/opt/rocm", "the default location"}};
  for (auto [dir, origin] : candidates)
    if (!dir.empty() && hasFile(dir, "amdgcn/bitcode/ockl.bc"))
      return {dir.str(), origin.str()};
  return {};
}

std::string findToolkit(StringRef family, StringRef anchorDir) {
  return locateToolkit(family, anchorDir).dir;
}

} // namespace fly
