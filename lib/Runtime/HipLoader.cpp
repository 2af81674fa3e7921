//===- HipLoader.cpp - Find and load the HIP backend plugin ---------------===//

#include "Runtime/HipLoader.h"

#include "Location/CodeFile.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace fly::rt {

static const char *const PluginName = "libFlyRuntimeHip.so";

std::vector<std::string>
getHipPluginCandidates(const std::vector<std::string> &dirs) {
  if (const char *env = std::getenv("FLY_HIP_BACKEND"); env && *env)
    return {env};
  std::vector<std::string> candidates;
  for (const std::string &dir : dirs)
    if (!dir.empty())
      candidates.push_back(dir + PluginName);
  candidates.push_back(PluginName);
  return candidates;
}

std::unique_ptr<Backend>
loadHipBackend(const std::vector<std::string> &candidates, std::string &why) {
  std::string errors;
  bool anyFile = false;
  for (const std::string &candidate : candidates) {
    bool path = candidate.find('/') != std::string::npos;
    anyFile |= path && access(candidate.c_str(), F_OK) == 0;
    void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      // dlerror names the candidate ("<path>: cannot open shared object
      // file: ..."); a bare name's failure is the loader's search path.
      const char *err = dlerror();
      errors += (errors.empty() ? "" : "; ") +
                std::string(err ? err : candidate + ": cannot load");
      continue;
    }
    if (auto create = reinterpret_cast<CreateBackendFn>(
            dlsym(handle, FLY_RUNTIME_HIP_ENTRY)))
      return std::unique_ptr<Backend>(create());
    why = candidate + " is not a fly-snapshot HIP backend (no " +
          FLY_RUNTIME_HIP_ENTRY + ")";
    return nullptr;
  }
  why = std::string("the HIP backend plugin ") + PluginName +
        " could not be loaded: " + errors +
        (anyFile || candidates.size() == 1
             ? ""
             : " (not built: is libamdhip64-dev installed?)");
  return nullptr;
}

std::unique_ptr<Backend> createHipBackend(std::string &why,
                                          std::string plugin) {
  if (!plugin.empty())
    return loadHipBackend({plugin}, why);
  // Beside fly-run or in ../lib, else the loader's search path.
  std::string dir = location::getDirectoryOf(location::getExecutablePath());
  return loadHipBackend(
      getHipPluginCandidates({dir.empty() ? "" : dir + "../lib/", dir}), why);
}

} // namespace fly::rt
