//===- BuildId.cpp - The hash of the fly objects this build made ----------===//

#include "BuildId/BuildId.h"

#include "BuildIdValue.inc"

namespace fly {

const char *getBuildId() { return FLY_BUILD_ID; }

} // namespace fly
