//===- HintRegistry.h - The one table of hints fly understands --*- C++ -*-===//
//
// Every hint is one HintSpec: its name (or a prefix such as `func.` for a
// family of hints), the type and range of its value, the target families it
// applies to with their limits and docs, whether it takes a `[selector]`,
// and the functions that write it into the IR. Everything else is derived
// from the table: the help text that diagnostics list, the checking and
// canonical spelling of values (HintSet), the per-family checks before
// anything compiles and the application (ApplyHints), the hint table of
// README.md and docs/Passes.md, the hint values of docs/manifest.schema.json
// (fly-hint-doc), and the table as JSON for code outside C++ (the C API's
// flyGetHintSpecsJSON, which the fly_snapshot package reads).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_HINTS_HINTREGISTRY_H
#define FLY_HINTS_HINTREGISTRY_H

#include "fly/Hints/HintValue.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace fly {

/// `int`, `bool`, `attribute`, `string`.
llvm::StringRef stringifyHintType(HintType type);

/// The code generator a gpu.module target attribute selects.
enum class TargetFamily { ROCDL, NVVM, Other };

/// `rocdl`, `nvvm` or `other`.
llvm::StringRef stringifyTargetFamily(TargetFamily family);

// Where the apply functions write (ApplyHints.h), and one checked hint of a
// set (HintSet.h).
struct KernelHintSite;
struct TargetFields;
struct TypedHint;

/// What a hint does on the targets of one family.
struct HintFamilyUse {
  /// Whether the hint applies; elsewhere it is a located error.
  bool applies = false;
  /// A bound tighter than the spec's own maximum there; 0 for none.
  int64_t max = 0;
  /// What it does there, in Markdown (the hint table).
  const char *effect = "";
};

struct HintSpec {
  /// The name, or for a family of hints its prefix with the dot (`func.`).
  const char *name = "";
  /// A family's field, as help and docs show it (`<attr>`); "" otherwise.
  const char *field = "";
  HintType type = HintType::String;
  /// The range of an integer (inclusive).
  int64_t min = 0, max = 0;
  /// The value as help shows it; "" derives it from the type (`<0..20>`).
  const char *syntax = "";
  /// A string kept exactly as given; other values lose surrounding blanks.
  bool verbatim = false;
  /// It rewrites target attributes and so takes a `[selector]`.
  bool selector = false;
  HintFamilyUse rocdl, nvvm;
  /// Targets of other families (neither #rocdl nor #nvvm) accept it.
  bool otherFamilies = false;
  /// A note on the value ("0 leaves it unset"), or "".
  const char *note = "";
  /// The ROCDL backend flag in the binary pass's opts= that means this hint
  /// (`amdgpu-num-vgpr`, BackendOpts.h), or "".
  const char *rocdlFlag = "";
  /// Checks the value for one family of targets it will rewrite; returns
  /// what is wrong ("names chip ..."), "" when nothing is. May be null.
  std::string (*checkForFamily)(TargetFamily family,
                                const TypedHint &hint) = nullptr;
  /// Writes the hint onto the kernels of one gpu.module. Null for hints
  /// that change no kernel.
  void (*applyToKernels)(const KernelHintSite &site,
                         const TypedHint &hint) = nullptr;
  /// Rewrites the fields of one #rocdl.target / #nvvm.target. Null for
  /// hints that change no target.
  void (*applyToTarget)(TargetFields &fields, const TypedHint &hint) = nullptr;

  bool isFamily() const { return llvm::StringRef(name).ends_with("."); }
  /// The use on `family` (Other: `otherFamilies`, no effect text).
  HintFamilyUse getUse(TargetFamily family) const;
  /// The families it applies to: "rocdl", "rocdl, nvvm".
  std::string listFamilies() const;
  /// `waves_per_eu`, `func.<attr>`.
  std::string getDisplayName() const;
  /// `<0..20>`, `<0|1>`, `<attribute literal>`, `<string>`.
  std::string getValueSyntax() const;
  /// Checks `value` (of hint `key`) and returns it typed; errors name `key`.
  llvm::Expected<HintValue> parseValue(llvm::StringRef key,
                                       llvm::StringRef value) const;
};

/// The table, in the order help and docs list it.
llvm::ArrayRef<HintSpec> getHintSpecs();

/// The spec of hint `base` (a hint name without its selector): an exact
/// name, or a family prefix followed by a non-empty field, which is stored
/// in `field`. Null for an unknown hint.
const HintSpec *findHintSpec(llvm::StringRef base,
                             llvm::StringRef *field = nullptr);

/// The error for a hint name `base` that findHintSpec does not know: it
/// lists what is accepted (for `target.arch`, the target fields).
llvm::Error unknownHintError(llvm::StringRef base);

/// The hint names fly understands with their values, for diagnostics.
llvm::StringRef acceptedHintsHelp();

/// The hints that take a selector: "O, fast_fp_math, unsafe_fp_math and
/// target.*" (`lastSeparator` before the last).
std::string listSelectorHints(llvm::StringRef lastSeparator = " and ");

/// Hints that rewrite a target attribute (and so may take a selector).
bool isTargetRewritingHint(llvm::StringRef base);

/// The Markdown table of every hint (README.md's "Hints" table).
std::string printHintTable();
/// A Markdown section with the table and how selectors work
/// (docs/Hints.md, appended to docs/Passes.md).
std::string printHintDocument();

/// Every spec as a JSON array, in table order, one object per hint:
///   {"name": "maxnreg", "prefix": false, "type": "int", "min": 1,
///    "max": 512, "selector": false,
///    "families": {"rocdl": {}, "nvvm": {"max": 255}}}
/// `prefix`: the name is a family's prefix (`func.`); `min`/`max` only for
/// integers; `families`: where it applies (`other`: targets of neither
/// family), with a tighter maximum there. The C API's flyGetHintSpecsJSON
/// and python/fly_snapshot/_hint_specs.json (fly-hint-doc).
std::string printHintSpecsJSON();
/// The JSON Schema of each hint's value in a manifest's `hint_set`, as
/// HintSet::toJSON writes it (integers and booleans as numbers), keyed by
/// the name of every hint that is not a family: the `hint_set.properties`
/// of docs/manifest.schema.json.
std::string printManifestSchemaHintProperties();

} // namespace fly

#endif // FLY_HINTS_HINTREGISTRY_H
