//===- HintSet.h - One set of backend hints ---------------------*- C++ -*-===//
//
// A hint set is what an autotuner varies between compiles of one kernel:
// `waves_per_eu=2,maxnreg=128`. It has exactly one canonical printed form
// (sorted keys, normalised values) so that variant ids and cache keys never
// depend on how the user spelled it.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_HINTS_HINTSET_H
#define FLY_HINTS_HINTSET_H

#include "fly/Hints/HintRegistry.h"
#include "fly/Hints/HintValue.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fly {

/// A hint name split into the hint and the targets it is limited to:
/// `target[gfx90a].O` -> {"target.O", "gfx90a"}, `O[nvvm]` -> {"O", "nvvm"},
/// `maxnreg` -> {"maxnreg", ""}. The selector is a family (`rocdl`, `nvvm`)
/// or a chip, as the target names it before any hint rewrites it.
struct HintName {
  std::string base;
  std::string selector;
};
/// Nullopt when the brackets are malformed.
std::optional<HintName> splitHintName(llvm::StringRef key);
/// One hint of a set, checked against its spec.
struct TypedHint {
  /// As given, selector included: `target[gfx90a].O`.
  std::string key;
  const HintSpec *spec;
  /// What follows a family's prefix (`rocdl.x` of `func.rocdl.x`), else "".
  std::string field;
  /// The targets it is limited to (a family or a chip); "" for all.
  std::string selector;
  HintValue value;
};

class HintSet {
public:
  /// Parses `key=value,key=value`. Values may be quoted ("..." or '...') and
  /// may contain bracketed lists (`func.x=[1, 2]`).
  static llvm::Expected<HintSet> parse(llvm::StringRef text);
  /// Builds a hint set from a JSON object whose values are numbers, booleans
  /// or strings.
  static llvm::Expected<HintSet> fromJSON(const llvm::json::Value &value);

  /// Adds one hint after checking its name and value; rejects duplicates.
  llvm::Error add(llvm::StringRef key, llvm::StringRef value);

  /// The hints, typed, sorted by key.
  llvm::ArrayRef<TypedHint> hints() const { return hints_; }
  std::optional<llvm::StringRef> lookup(llvm::StringRef key) const;
  /// The value of hint `key` when the set has it and the registry types it
  /// as an integer (a boolean); nullopt otherwise.
  std::optional<int64_t> getInt(llvm::StringRef key) const;
  std::optional<bool> getBool(llvm::StringRef key) const;
  bool empty() const { return hints_.empty(); }

  /// The hint set as a JSON object, integer and boolean hints as numbers
  /// (`{"maxnreg": 32, "fast_fp_math": 1, "opts": "-O3"}`); fromJSON reads
  /// it back.
  llvm::json::Object toJSON() const;

  /// `a=1,b=2` with keys sorted; the empty set prints as "".
  std::string canonical() const;
  /// A label usable as a symbol and file name: `maxnreg_64.waves_per_eu_2`,
  /// or `default` for the empty set.
  std::string label() const;

  bool operator==(const HintSet &other) const {
    return llvm::equal(hints_, other.hints_,
                       [](const TypedHint &a, const TypedHint &b) {
                         return a.key == b.key && a.value == b.value;
                       });
  }

private:
  const TypedHint *find(llvm::StringRef key) const;

  std::vector<TypedHint> hints_; // Sorted by key.
};

/// Parses `set;set;...`, e.g. `waves_per_eu=1;waves_per_eu=2,maxnreg=64`.
/// An empty segment is the empty hint set (the backend's defaults). A
/// segment may be a cartesian product, `waves_per_eu=1,2,4 x maxnreg=64,128`
/// (a factor is `name=v1,v2,...`; the first varies slowest), expanded here
/// after its count was checked against FLY_MAX_HINT_SETS; its errors name
/// the column.
llvm::Expected<std::vector<HintSet>> parseHintSets(llvm::StringRef text);
/// Parses a JSON list of objects; an object whose values are lists (alone or
/// in the list) is the product of those lists, in the order the text writes
/// them. Errors in a product name the line and column.
llvm::Expected<std::vector<HintSet>> parseHintSetsJSON(llvm::StringRef json);
/// Reads a JSON hint file from disk.
llvm::Expected<std::vector<HintSet>> readHintSetsFile(llvm::StringRef path);

} // namespace fly

#endif // FLY_HINTS_HINTSET_H
