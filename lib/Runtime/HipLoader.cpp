//===- HipLoader.cpp - Find and load the HIP backend plugin ---------------===//

#include "fly/Runtime/Backend.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace fly::rt {

static std::string executableDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return "";
  std::string path(buf, static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::unique_ptr<Backend> createHipBackend(std::string &why,
                                          std::string plugin) {
  std::vector<std::string> candidates;
  if (!plugin.empty()) {
    candidates.push_back(plugin);
  } else if (const char *env = std::getenv("FLY_HIP_BACKEND"); env && *env) {
    candidates.push_back(env);
  } else {
    std::string dir = executableDir();
    if (!dir.empty()) {
      candidates.push_back(dir + "/../lib/libFlyRuntimeHip.so");
      candidates.push_back(dir + "/libFlyRuntimeHip.so");
    }
    candidates.push_back("libFlyRuntimeHip.so");
  }
  std::string errors;
  for (const std::string &candidate : candidates) {
    // A candidate that exists but fails to load (libamdhip64 missing) is the
    // interesting error; "no such file" for the others is noise.
    bool exists = candidate.find('/') == std::string::npos ||
                  access(candidate.c_str(), F_OK) == 0;
    void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *err = dlerror();
      if (exists || candidates.size() == 1)
        errors = err ? err : ("cannot load " + candidate);
      continue;
    }
    auto create =
        reinterpret_cast<CreateBackendFn>(dlsym(handle, FLY_RUNTIME_HIP_ENTRY));
    if (!create) {
      why = candidate + " is not a fly-snapshot HIP backend (no " +
            FLY_RUNTIME_HIP_ENTRY + ")";
      return nullptr;
    }
    return std::unique_ptr<Backend>(create());
  }
  why = "the HIP backend plugin libFlyRuntimeHip.so could not be loaded" +
        (errors.empty() ? std::string(" (not built: is libamdhip64-dev "
                                      "installed?)")
                        : ": " + errors);
  return nullptr;
}

} // namespace fly::rt
