//===- HintSetLimit.h - How many hint sets one compile takes ----*- C++ -*-===//
//
// A sweep of more hint sets than this is a mistake more often than a plan
// (a generated 10 MB hints file holds 655k), and each one costs a compile
// and files in the out-dir: it is refused before anything compiles, with
// the way to raise the limit.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_HINTS_HINTSETLIMIT_H
#define FLY_HINTS_HINTSETLIMIT_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

namespace fly {

/// The default of FLY_MAX_HINT_SETS.
constexpr uint64_t kDefaultMaxHintSets = 10000;

/// FLY_MAX_HINT_SETS, else kDefaultMaxHintSets.
uint64_t getMaxHintSets();

/// An error naming the limit and how to raise it when `count` exceeds it.
llvm::Error checkHintSetCount(size_t count);

} // namespace fly

#endif // FLY_HINTS_HINTSETLIMIT_H
