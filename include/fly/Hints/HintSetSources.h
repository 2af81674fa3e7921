//===- HintSetSources.h - A front end's hint sets, collected ----*- C++ -*-===//
//
// The flags, file, environment variable or C API argument a front end takes
// hint sets from, parsed by the one collector (HintSet.h's parsers).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_HINTS_HINTSETSOURCES_H
#define FLY_HINTS_HINTSETSOURCES_H

#include "fly/Hints/HintSet.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace fly {

/// Where a front end's hint sets come from; each is parsed once, in this
/// order, and an error is prefixed with its source's name ("--hints: ...")
/// when that name is not empty.
struct HintSetSources {
  /// `set;set;...` (parseHintSets); given but empty: the one empty hint set
  /// (the backend's defaults).
  std::optional<std::string> text;
  std::string textName;
  /// A JSON hint file (readHintSetsFile; its errors name the file); "" =
  /// none.
  std::string file;
  std::string fileName;
  /// A JSON list of hint sets (parseHintSetsJSON); "" = none.
  std::string json;
  std::string jsonName;
};

/// The hint sets of `sources`: text, then file, then JSON. fly-tune, fly-opt
/// (its flags and FLY_HINT_SETS), the pass and the C API collect theirs here.
llvm::Expected<std::vector<HintSet>>
collectHintSets(const HintSetSources &sources);

} // namespace fly

#endif // FLY_HINTS_HINTSETSOURCES_H
