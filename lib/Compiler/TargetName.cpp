//===- TargetName.cpp - "rocdl:gfx942", "nvvm:sm_90" ----------------------===//

#include "fly/Compiler/TargetName.h"

#include "Hints/TargetChips.h"

using namespace llvm;

namespace fly {

Expected<TargetSpec> parseTargetSpec(StringRef target) {
  auto [family, chip] = target.split(':');
  if ((family != "rocdl" && family != "nvvm") || chip.empty())
    return createStringError("target '%s' must be rocdl:<chip> (e.g. "
                             "rocdl:gfx942) or nvvm:<sm_NN> (e.g. nvvm:sm_90)",
                             target.str().c_str());
  // One check of chips, against LLVM's own processor tables (TargetChips).
  TargetFamily targetFamily =
      family == "rocdl" ? TargetFamily::ROCDL : TargetFamily::NVVM;
  if (isKnownChip(targetFamily, chip))
    return TargetSpec{family.str(), chip.str()};
  return createStringError("LLVM's %s backend does not know chip '%s'; %s",
                           family == "rocdl" ? "AMDGPU" : "NVPTX",
                           chip.str().c_str(),
                           suggestChips(targetFamily, chip).c_str());
}

} // namespace fly
