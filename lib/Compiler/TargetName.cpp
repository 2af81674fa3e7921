//===- TargetName.cpp - "rocdl:gfx942", "nvvm:sm_90" ----------------------===//

#include "fly/Compiler/TargetName.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/TargetParser/TargetParser.h"

using namespace llvm;

namespace fly {

static bool isNvvmChip(StringRef chip) {
  if (!chip.consume_front("sm_") || chip.empty())
    return false;
  if (chip.back() == 'a' || chip.back() == 'f')
    chip = chip.drop_back();
  return !chip.empty() && all_of(chip, isDigit);
}

Error checkTargetName(StringRef target) {
  auto [family, chip] = target.split(':');
  if (family == "rocdl") {
    if (AMDGPU::parseArchAMDGCN(chip) != AMDGPU::GK_NONE)
      return Error::success();
    return createStringError("unknown AMDGPU chip '%s' in target '%s'; "
                             "expected rocdl:<chip> such as rocdl:gfx942",
                             chip.str().c_str(), target.str().c_str());
  }
  if (family == "nvvm") {
    if (isNvvmChip(chip))
      return Error::success();
    return createStringError("unknown NVIDIA chip '%s' in target '%s'; "
                             "expected nvvm:sm_<NN> such as nvvm:sm_90",
                             chip.str().c_str(), target.str().c_str());
  }
  return createStringError("target '%s' must be rocdl:<chip> (e.g. "
                           "rocdl:gfx942) or nvvm:<sm_NN> (e.g. nvvm:sm_90)",
                           target.str().c_str());
}

} // namespace fly
