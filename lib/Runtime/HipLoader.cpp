//===- HipLoader.cpp - Find and load the HIP backend plugin ---------------===//

#include "fly/Runtime/Backend.h"
#include "fly/Support/InstallLocation.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace fly::rt {

std::unique_ptr<Backend> createHipBackend(std::string &why,
                                          std::string plugin) {
  const char *env = std::getenv("FLY_HIP_BACKEND");
  std::vector<std::string> candidates;
  if (plugin.empty() && !(env && *env)) {
    // Beside fly-run or in ../lib, else the loader's search path.
    std::string dir = fly::getProgramDir();
    for (const char *place : {"/../lib/", "/"})
      if (!dir.empty())
        candidates.push_back(dir + place + "libFlyRuntimeHip.so");
    candidates.push_back("libFlyRuntimeHip.so");
  } else {
    candidates.push_back(plugin.empty() ? env : plugin);
  }
  std::string errors;
  for (const std::string &candidate : candidates) {
    void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      // A candidate that exists but fails to load (libamdhip64 missing) is
      // the interesting error; "no such file" for the others is noise.
      const char *err = dlerror();
      if (candidates.size() == 1 || candidate.find('/') == std::string::npos ||
          llvm::sys::fs::exists(candidate))
        errors = err ? err : "cannot load " + candidate;
      continue;
    }
    if (auto create = reinterpret_cast<CreateBackendFn>(
            dlsym(handle, FLY_RUNTIME_HIP_ENTRY)))
      return std::unique_ptr<Backend>(create());
    why = candidate + " is not a fly-snapshot HIP backend (no " +
          FLY_RUNTIME_HIP_ENTRY + ")";
    return nullptr;
  }
  why = "the HIP backend plugin libFlyRuntimeHip.so could not be loaded" +
        (errors.empty() ? std::string(" (not built: is libamdhip64-dev "
                                      "installed?)")
                        : ": " + errors);
  return nullptr;
}

} // namespace fly::rt
