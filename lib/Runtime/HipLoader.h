//===- HipLoader.h - Find and load the HIP backend plugin -------*- C++ -*-===//
//
// The one dlopen of libFlyRuntimeHip.so, for fly-run (createHipBackend) and
// the runtime C API. No LLVM: libFlyRuntimeCAPI.so links none.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_HIPLOADER_H
#define FLY_RUNTIME_HIPLOADER_H

#include "fly/Runtime/Backend.h"

#include <memory>
#include <string>
#include <vector>

namespace fly::rt {

/// Where the plugin is looked for: $FLY_HIP_BACKEND alone when set, else
/// libFlyRuntimeHip.so in each of `dirs` (each ending in '/'), then the bare
/// name for the loader's search path.
std::vector<std::string>
getHipPluginCandidates(const std::vector<std::string> &dirs);

/// The backend of the first of `candidates` that loads and exports
/// FLY_RUNTIME_HIP_ENTRY. Else null, and `why` names every candidate's
/// error, in order.
std::unique_ptr<Backend>
loadHipBackend(const std::vector<std::string> &candidates, std::string &why);

} // namespace fly::rt

#endif // FLY_RUNTIME_HIPLOADER_H
