//===- HintRegistry.cpp - The one table of hints fly understands ----------===//

#include "fly/Hints/HintRegistry.h"
#include "Hints/TargetChips.h"
#include "Support/LLVMCompat.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/HintSet.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace llvm;

namespace fly {

StringRef stringifyTargetFamily(TargetFamily family) {
  switch (family) {
  case TargetFamily::ROCDL:
    return "rocdl";
  case TargetFamily::NVVM:
    return "nvvm";
  case TargetFamily::Other:
    return "other";
  }
  llvm_unreachable("unknown target family");
}

StringRef stringifyHintType(HintType type) {
  switch (type) {
  case HintType::Int:
    return "int";
  case HintType::Bool:
    return "bool";
  case HintType::Attribute:
    return "attribute";
  case HintType::String:
    return "string";
  }
  llvm_unreachable("unknown hint type");
}

namespace {
/// Builds one HintSpec of the table.
class Spec {
public:
  constexpr Spec(const char *name, HintType type) {
    spec.name = name;
    spec.type = type;
  }
  constexpr Spec &field(const char *field) {
    spec.field = field;
    return *this;
  }
  constexpr Spec &range(int64_t min, int64_t max) {
    spec.min = min;
    spec.max = max;
    return *this;
  }
  constexpr Spec &syntax(const char *syntax) {
    spec.syntax = syntax;
    return *this;
  }
  constexpr Spec &verbatim() {
    spec.verbatim = true;
    return *this;
  }
  constexpr Spec &selector() {
    spec.selector = true;
    return *this;
  }
  constexpr Spec &rocdl(const char *effect) {
    spec.rocdl = {true, 0, effect};
    return *this;
  }
  constexpr Spec &nvvm(const char *effect, int64_t max = 0) {
    spec.nvvm = {true, max, effect};
    return *this;
  }
  /// The same effect on both families.
  constexpr Spec &both(const char *effect) {
    return rocdl(effect).nvvm(effect);
  }
  constexpr Spec &otherFamilies() {
    spec.otherFamilies = true;
    return *this;
  }
  constexpr Spec &note(const char *note) {
    spec.note = note;
    return *this;
  }
  constexpr Spec &rocdlFlag(const char *flag) {
    spec.rocdlFlag = flag;
    return *this;
  }
  constexpr Spec &check(std::string (*fn)(TargetFamily, const TypedHint &)) {
    spec.checkForFamily = fn;
    return *this;
  }
  constexpr Spec &kernels(void (*fn)(const KernelHintSite &,
                                     const TypedHint &)) {
    spec.applyToKernels = fn;
    return *this;
  }
  constexpr Spec &target(void (*fn)(TargetFields &, const TypedHint &)) {
    spec.applyToTarget = fn;
    return *this;
  }
  constexpr operator HintSpec() const { return spec; }

private:
  HintSpec spec;
};
} // namespace

static std::string checkChip(TargetFamily family, const TypedHint &hint) {
  const HintValue &value = hint.value;
  if (family == TargetFamily::Other || isKnownChip(family, value.getText()))
    return "";
  return formatv("names chip '{0}', which LLVM's {1} backend does not know; "
                 "{2}",
                 value.getText(),
                 family == TargetFamily::ROCDL ? "AMDGPU" : "NVPTX",
                 suggestChips(family, value.getText()))
      .str();
}

/// The AMDGPU function attributes whose value the backend parses as
/// integers; a value it cannot parse is an LLVM error in the middle of code
/// generation, so it is refused before anything compiles.
static std::string checkPassthrough(TargetFamily family,
                                    const TypedHint &hint) {
  if (family != TargetFamily::ROCDL)
    return "";
  // Integers as AMDGPU's getIntegerPairAttribute reads them (radix 0).
  auto isInteger = [](StringRef text) {
    unsigned value;
    return !text.trim().getAsInteger(0, value);
  };
  StringRef value = hint.value.getText();
  auto [first, second] = value.split(',');
  bool pair = value.contains(',');
  StringRef expected;
  bool ok = true;
  if (hint.field == "amdgpu-flat-work-group-size") {
    expected = "'<min>,<max>', two integers (e.g. 64,256)";
    ok = pair && isInteger(first) && isInteger(second);
  } else if (hint.field == "amdgpu-waves-per-eu") {
    expected = "'<min>[,<max>]', integers (e.g. 2 or 2,4)";
    ok = isInteger(first) && (!pair || isInteger(second));
  } else if (hint.field == "amdgpu-num-vgpr" ||
             hint.field == "amdgpu-num-sgpr") {
    expected = "one integer";
    ok = !pair && isInteger(value);
  }
  if (ok)
    return "";
  return formatv("has the value '{0}', but the AMDGPU backend reads {1} as "
                 "{2}",
                 value, hint.field, expected)
      .str();
}

static void setOptLevel(TargetFields &f, const TypedHint &hint) {
  f.optLevel = hint.value.getInt();
}

template <std::string TargetFields::*field>
static void setTargetField(TargetFields &f, const TypedHint &hint) {
  f.*field = hint.value.getText().str();
}

using HT = HintType;

// The order is the order of help and docs.
static constexpr HintSpec kHintSpecs[] = {
    Spec("waves_per_eu", HT::Int)
        .range(0, 20)
        .rocdl("`rocdl.waves_per_eu` on the kernels")
        .note("0 leaves it unset; 1 is LLVM's default")
        .rocdlFlag("--amdgpu-waves-per-eu")
        .kernels([](const KernelHintSite &site, const TypedHint &hint) {
          if (hint.value.getInt() == 0)
            site.removeAttr("rocdl.waves_per_eu");
          else
            site.setI32("rocdl.waves_per_eu", hint.value.getInt());
        }),
    Spec("maxnreg", HT::Int)
        .range(1, 512)
        .rocdl("passthrough `amdgpu-num-vgpr` on the kernels; 256 or more is "
               "LLVM's default (the whole budget) except on gfx1250")
        .nvvm("`nvvm.maxnreg` on the kernels", 255)
        .rocdlFlag("--amdgpu-num-vgpr")
        .kernels([](const KernelHintSite &site, const TypedHint &hint) {
          if (site.rocdl)
            site.setPassthrough("amdgpu-num-vgpr", hint.value.canonical());
          if (site.nvvm)
            site.setI32("nvvm.maxnreg", hint.value.getInt());
        }),
    Spec("O", HT::Int)
        .range(0, 3)
        .selector()
        .both("the target's `O`")
        .rocdlFlag("-O")
        .target(setOptLevel),
    Spec("fast_fp_math", HT::Bool)
        .selector()
        .both("target flag `fast`")
        .target([](TargetFields &f, const TypedHint &hint) {
          f.setFlag("fast", hint.value.getBool());
        }),
    Spec("unsafe_fp_math", HT::Bool)
        .selector()
        .rocdl("target flag `unsafe-math`")
        .nvvm("target flag `ftz`")
        .target([](TargetFields &f, const TypedHint &hint) {
          f.setFlag(f.family == TargetFamily::ROCDL ? "unsafe-math" : "ftz",
                    hint.value.getBool());
        }),
    Spec("func.", HT::Attribute)
        .field("<attr>")
        .otherFamilies()
        .both("the attribute `<attr>` on the kernels")
        .kernels([](const KernelHintSite &site, const TypedHint &hint) {
          site.setAttr(hint.field, site.attribute);
        }),
    Spec("passthrough.", HT::String)
        .field("<llvm-fn-attr>")
        .verbatim()
        .otherFamilies()
        .both("the LLVM function attribute `<llvm-fn-attr>` on the kernels "
              "(empty: the attribute without a value)")
        .kernels([](const KernelHintSite &site, const TypedHint &hint) {
          site.setPassthrough(hint.field, hint.value.getText());
        })
        .check(checkPassthrough),
    Spec("target.O", HT::Int)
        .range(0, 3)
        .selector()
        .both("the target's `O`")
        .target(setOptLevel),
    Spec("target.triple", HT::String)
        .syntax("<triple>")
        .selector()
        .both("the target's `triple`")
        .target(setTargetField<&TargetFields::triple>),
    Spec("target.chip", HT::String)
        .syntax("<chip>")
        .selector()
        .rocdl("the target's `chip`, one LLVM's AMDGPU backend knows")
        .nvvm("the target's `chip`, one LLVM's NVPTX backend knows")
        .rocdlFlag("-mcpu")
        .check(checkChip)
        .target(setTargetField<&TargetFields::chip>),
    Spec("target.features", HT::String)
        .syntax("<features>")
        .selector()
        .both("the target's `features`")
        .rocdlFlag("-mattr")
        .target(setTargetField<&TargetFields::features>),
    Spec("target.abi", HT::String)
        .syntax("<abi>")
        .selector()
        .rocdl("the target's `abi`")
        .target(setTargetField<&TargetFields::abi>),
    Spec("opts", HT::String)
        .verbatim()
        .otherFamilies()
        .rocdl("appended to the binary pass's `opts`, which upstream ignores: "
               "known backend flags become IR hints, others get a warning "
               "(see \"Backend flags in `opts=`\")")
        .nvvm("passed to ptxas, written as the target's `flags = "
              "{\"ptxas-cmd-options\" = [...]}` so it needs no pass instance "
              "(or batch) of its own; `-32` stays a pass option")
        .target([](TargetFields &f, const TypedHint &hint) {
          if (f.optsIntoTarget)
            f.appendPtxasOptions(hint.value.getText());
        }),
};

ArrayRef<HintSpec> getHintSpecs() { return kHintSpecs; }

HintFamilyUse HintSpec::getUse(TargetFamily family) const {
  switch (family) {
  case TargetFamily::ROCDL:
    return rocdl;
  case TargetFamily::NVVM:
    return nvvm;
  case TargetFamily::Other:
    return {otherFamilies, 0, ""};
  }
  llvm_unreachable("unknown target family");
}

std::string HintSpec::listFamilies() const {
  SmallVector<StringRef> families;
  for (TargetFamily family : {TargetFamily::ROCDL, TargetFamily::NVVM})
    if (getUse(family).applies)
      families.push_back(stringifyTargetFamily(family));
  return join(families, ", ");
}

std::string HintSpec::getDisplayName() const {
  return (Twine(name) + field).str();
}

std::string HintSpec::getValueSyntax() const {
  if (*syntax)
    return syntax;
  switch (type) {
  case HintType::Int:
    return formatv("<{0}..{1}>", min, max).str();
  case HintType::Bool:
    return "<0|1>";
  case HintType::Attribute:
    return "<attribute literal>";
  case HintType::String:
    return "<string>";
  }
  llvm_unreachable("unknown hint type");
}

static Error hintError(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

Expected<HintValue> HintSpec::parseValue(StringRef key, StringRef value) const {
  switch (type) {
  case HintType::Int: {
    int64_t v;
    if (value.trim().getAsInteger(10, v))
      return hintError(formatv("hint '{0}' expects an integer in [{1}, {2}], "
                               "got '{3}'",
                               key, min, max, value));
    if (v < min || v > max)
      return hintError(formatv("hint '{0}' = {1} is out of range [{2}, {3}]",
                               key, v, min, max));
    return HintValue::ofInt(v);
  }
  case HintType::Bool: {
    std::optional<bool> b = StringSwitch<std::optional<bool>>(value.trim())
                                .Cases({"1", "true", "on"}, true)
                                .Cases({"0", "false", "off"}, false)
                                .Default(std::nullopt);
    if (!b)
      return hintError(
          formatv("hint '{0}' expects 0 or 1, got '{1}'", key, value));
    return HintValue::ofBool(*b);
  }
  case HintType::Attribute:
    if (value.trim().empty())
      return hintError(formatv("hint '{0}' needs an attribute literal, "
                               "e.g. {0}=42 : i32",
                               key));
    return HintValue::ofAttribute(value.trim().str());
  case HintType::String:
    return HintValue::ofString(verbatim ? value.str() : value.trim().str());
  }
  llvm_unreachable("unknown hint type");
}

const HintSpec *findHintSpec(StringRef base, StringRef *field) {
  for (const HintSpec &spec : kHintSpecs) {
    StringRef rest = base;
    if (spec.isFamily() ? rest.consume_front(spec.name) && !rest.empty()
                        : base == spec.name) {
      if (field)
        *field = spec.isFamily() ? rest : StringRef();
      return &spec;
    }
  }
  return nullptr;
}

Error unknownHintError(StringRef base) {
  // `target.arch`: the fields of `target.` are listed.
  auto [prefix, rest] = base.split('.');
  if (!rest.empty()) {
    SmallVector<StringRef> fields;
    for (const HintSpec &spec : kHintSpecs)
      if (!spec.isFamily() &&
          StringRef(spec.name).starts_with((prefix + ".").str()))
        fields.push_back(spec.name);
    if (!fields.empty())
      return hintError(formatv("unknown {0} field in hint '{1}'; accepted: "
                               "{2}",
                               prefix, base, join(fields, ", ")));
  }
  return hintError(
      formatv("unknown hint '{0}'; accepted: {1}", base, acceptedHintsHelp()));
}

std::string listSelectorHints(StringRef lastSeparator) {
  // Names with a dot stand as their group: target.O, target.chip -> target.*.
  SmallVector<std::string> names;
  for (const HintSpec &spec : kHintSpecs) {
    if (!spec.selector)
      continue;
    auto [prefix, rest] = StringRef(spec.name).split('.');
    std::string name = rest.empty() ? prefix.str() : (prefix + ".*").str();
    if (!is_contained(names, name))
      names.push_back(name);
  }
  std::string out;
  for (auto [i, name] : enumerate(names)) {
    if (i)
      out += i + 1 == names.size() ? lastSeparator.str() : ", ";
    out += name;
  }
  return out;
}

/// "ROCDL only; 0 leaves it unset", "NVVM at most 255": what help says
/// after a hint's value, "" for nothing.
static std::string describeLimits(const HintSpec &spec) {
  SmallVector<std::string> parts;
  if (!spec.otherFamilies && spec.rocdl.applies != spec.nvvm.applies)
    parts.push_back(StringRef(spec.listFamilies()).upper() + " only");
  for (TargetFamily family : {TargetFamily::ROCDL, TargetFamily::NVVM})
    if (int64_t max = spec.getUse(family).max)
      parts.push_back(formatv("{0} at most {1}",
                              stringifyTargetFamily(family).upper(), max));
  if (*spec.note)
    parts.push_back(spec.note);
  return join(parts, "; ");
}

StringRef acceptedHintsHelp() {
  static const std::string help = [] {
    std::string out;
    raw_string_ostream os(out);
    interleaveComma(kHintSpecs, os, [&](const HintSpec &spec) {
      os << spec.getDisplayName() << '=' << spec.getValueSyntax();
      std::string limits = describeLimits(spec);
      if (!limits.empty())
        os << " (" << limits << ')';
    });
    os << "; target-rewriting hints (" << listSelectorHints(", ")
       << ") take a selector after their first word to apply to one family "
          "or chip only: O[gfx90a]=2, target[sm_90].features=+ptx80, "
          "fast_fp_math[rocdl]=1";
    return out;
  }();
  return help;
}

bool isTargetRewritingHint(StringRef base) {
  const HintSpec *spec = findHintSpec(base);
  return spec && spec->selector;
}

/// A Markdown table cell: `|` escaped.
static std::string cell(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += '\\';
    out += c;
  }
  return out;
}

std::string printHintTable() {
  std::string out;
  raw_string_ostream os(out);
  os << "| hint | value | `[sel]` | ROCDL (AMDGPU) | NVVM |\n"
     << "|---|---|---|---|---|\n";
  for (const HintSpec &spec : kHintSpecs) {
    std::string value;
    switch (spec.type) {
    case HintType::Int:
      value = formatv("integer {0}..{1}", spec.min, spec.max).str();
      break;
    case HintType::Bool:
      value = "0 or 1 (`true`/`false`, `on`/`off`)";
      break;
    case HintType::Attribute:
      value = "MLIR attribute literal";
      break;
    case HintType::String:
      value = spec.verbatim ? "string, kept as given" : "string";
      break;
    }
    if (*spec.note)
      value += (Twine("; ") + spec.note).str();
    auto effect = [&](TargetFamily family) -> std::string {
      HintFamilyUse use = spec.getUse(family);
      if (!use.applies)
        return "rejected";
      std::string text = use.effect;
      if (use.max)
        text += formatv(" (≤ {0})", use.max).str();
      return text;
    };
    std::string rocdl = effect(TargetFamily::ROCDL);
    std::string nvvm = effect(TargetFamily::NVVM);
    os << "| `" << spec.getDisplayName() << "` | " << cell(value) << " | "
       << (spec.selector ? "yes" : "") << " | " << cell(rocdl) << " | "
       << (nvvm == rocdl ? "same" : cell(nvvm)) << " |\n";
  }
  return out;
}

std::string printHintDocument() {
  std::string out;
  raw_string_ostream os(out);
  // After the pass docs (docs/Passes.md): a blank line first.
  os << "\n### Hints\n\n"
     << "What each hint of a hint set writes into the IR "
        "(`hints=\"waves_per_eu=2,maxnreg=128;waves_per_eu=4\"`, or a JSON "
        "list of objects in `hints-file`), generated from the hint registry "
        "(`include/fly/Hints/HintRegistry.h`) by `fly-hint-doc`.\n\n"
     << printHintTable() << "\n"
     << "Hints marked `[sel]` rewrite the target attribute and take a "
        "selector in brackets after their first word, a family (`rocdl`, "
        "`nvvm`) or a chip as the target names it before rewriting: "
        "`target[gfx90a].O=2`, `O[gfx942]=1`, "
        "`target[sm_90].features=+ptx80`. Unqualified, they apply to every "
        "target; the others change the kernels all targets compile from. A "
        "hint that does not apply to a target of the module (\"rejected\"), "
        "a value out of range and an unknown name are errors before "
        "anything compiles.\n";
  return out;
}

std::string printHintSpecsJSON() {
  std::string out;
  raw_string_ostream os(out);
  json::OStream json(os, 2);
  json.array([&] {
    for (const HintSpec &spec : kHintSpecs) {
      json.object([&] {
        json.attribute("name", spec.name);
        json.attribute("prefix", spec.isFamily());
        json.attribute("type", stringifyHintType(spec.type));
        if (spec.type == HintType::Int) {
          json.attribute("min", spec.min);
          json.attribute("max", spec.max);
        }
        json.attribute("selector", spec.selector);
        json.attributeObject("families", [&] {
          for (TargetFamily family :
               {TargetFamily::ROCDL, TargetFamily::NVVM, TargetFamily::Other}) {
            HintFamilyUse use = spec.getUse(family);
            if (!use.applies)
              continue;
            json.attributeObject(stringifyTargetFamily(family), [&] {
              if (use.max)
                json.attribute("max", use.max);
            });
          }
        });
      });
    }
  });
  os << "\n";
  return out;
}

std::string printManifestSchemaHintProperties() {
  std::string out;
  raw_string_ostream os(out);
  json::OStream json(os, 2);
  json.object([&] {
    for (const HintSpec &spec : kHintSpecs) {
      if (spec.isFamily())
        continue;
      json.attributeObject(spec.name, [&] {
        switch (spec.type) {
        case HintType::Int:
          json.attribute("type", "integer");
          json.attribute("minimum", spec.min);
          json.attribute("maximum", spec.max);
          break;
        case HintType::Bool:
          json.attribute("enum", json::Array{0, 1});
          break;
        case HintType::Attribute:
        case HintType::String:
          json.attribute("type", "string");
          break;
        }
      });
    }
  });
  os << "\n";
  return out;
}

} // namespace fly
