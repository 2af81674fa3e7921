//===- HintRegistryTest.cpp - The one table of hints ----------------------===//
//
// Every property here is read from the table, so a hint added to the
// registry is covered without touching this file.
//
//===----------------------------------------------------------------------===//

#include "fly/Hints/HintRegistry.h"
#include "fly/Hints/HintSet.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

#include <optional>
#include <string>

using namespace fly;
using llvm::StringRef;

namespace {

/// A name of `spec` that parses: families get a field.
std::string exampleName(const HintSpec &spec) {
  return spec.isFamily() ? std::string(spec.name) + "x" : spec.name;
}

/// A value of `spec`'s type that it accepts.
std::string exampleValue(const HintSpec &spec) {
  switch (spec.type) {
  case HintType::Int:
    return std::to_string(spec.max);
  case HintType::Bool:
    return "1";
  case HintType::Attribute:
    return "42 : i32";
  case HintType::String:
    return "x";
  }
  return "";
}

/// `name` with selector `[sel]` after its first word.
std::string withSelector(StringRef name, StringRef sel) {
  auto [first, rest] = name.split('.');
  return (first + "[" + sel + "]" + (rest.empty() ? "" : ".") + rest).str();
}

std::string errorOf(llvm::Error err) {
  return err ? llvm::toString(std::move(err)) : "";
}

TEST(HintRegistry, EverySpecIsDocumentedAndApplies) {
  ASSERT_FALSE(getHintSpecs().empty());
  for (const HintSpec &spec : getHintSpecs()) {
    SCOPED_TRACE(spec.name);
    EXPECT_NE(*spec.name, '\0');
    EXPECT_TRUE(spec.rocdl.applies || spec.nvvm.applies);
    for (TargetFamily family : {TargetFamily::ROCDL, TargetFamily::NVVM}) {
      HintFamilyUse use = spec.getUse(family);
      // What it does where it applies is documented; nothing where not.
      EXPECT_EQ(use.applies, *use.effect != '\0')
          << stringifyTargetFamily(family).str();
      if (use.max) {
        EXPECT_EQ(spec.type, HintType::Int);
        EXPECT_LT(use.max, spec.max) << "a family limit must be tighter";
      }
    }
    // A family names its field, an exact name has none.
    EXPECT_EQ(spec.isFamily(), *spec.field != '\0');
    if (spec.type == HintType::Int)
      EXPECT_LE(spec.min, spec.max);
    // Target-rewriting hints (those with a selector) rewrite targets.
    if (spec.selector)
      EXPECT_TRUE(spec.applyToTarget);
    EXPECT_TRUE(spec.applyToKernels || spec.applyToTarget);
    // One spec per name.
    EXPECT_EQ(findHintSpec(exampleName(spec)), &spec);
  }
}

TEST(HintRegistry, FindsExactNamesAndFamilies) {
  StringRef field;
  const HintSpec *spec = findHintSpec("func.rocdl.x", &field);
  ASSERT_TRUE(spec);
  EXPECT_STREQ(spec->name, "func.");
  EXPECT_EQ(field, "rocdl.x");
  spec = findHintSpec("maxnreg", &field);
  ASSERT_TRUE(spec);
  EXPECT_EQ(field, "");
  for (StringRef unknown : {"func.", "func", "target.arch", "maxnreg.x", ""})
    EXPECT_FALSE(findHintSpec(unknown)) << unknown.str();
  // An unknown field of a group lists the group's fields.
  std::string err = errorOf(unknownHintError("target.arch"));
  EXPECT_NE(err.find("unknown target field in hint 'target.arch'; accepted: "
                     "target.O, target.triple, target.chip, "
                     "target.features, target.abi"),
            std::string::npos)
      << err;
}

TEST(HintRegistry, RangesComeFromTheTable) {
  for (const HintSpec &spec : getHintSpecs()) {
    if (spec.type != HintType::Int)
      continue;
    std::string name = exampleName(spec);
    SCOPED_TRACE(name);
    std::string range = "out of range [" + std::to_string(spec.min) + ", " +
                        std::to_string(spec.max) + "]";
    for (int64_t ok : {spec.min, spec.max}) {
      HintSet set;
      EXPECT_EQ(errorOf(set.add(name, std::to_string(ok))), "");
      EXPECT_EQ(set.getInt(name), ok);
    }
    for (int64_t bad : {spec.min - 1, spec.max + 1}) {
      HintSet set;
      std::string err = errorOf(set.add(name, std::to_string(bad)));
      EXPECT_NE(err.find(range), std::string::npos) << err;
    }
    HintSet set;
    std::string err = errorOf(set.add(name, "abc"));
    EXPECT_NE(err.find("expects an integer in [" + std::to_string(spec.min)),
              std::string::npos)
        << err;
  }
}

TEST(HintRegistry, SelectorsOnlyWhereTheTableSaysSo) {
  for (const HintSpec &spec : getHintSpecs()) {
    std::string key = withSelector(exampleName(spec), "rocdl");
    SCOPED_TRACE(key);
    HintSet set;
    std::string err = errorOf(set.add(key, exampleValue(spec)));
    if (spec.selector) {
      EXPECT_EQ(err, "");
      ASSERT_EQ(set.hints().size(), 1u);
      EXPECT_EQ(set.hints()[0].selector, "rocdl");
      EXPECT_EQ(set.hints()[0].spec, &spec);
      EXPECT_TRUE(isTargetRewritingHint(exampleName(spec)));
    } else {
      EXPECT_NE(err.find("cannot be limited to target 'rocdl'"),
                std::string::npos)
          << err;
      EXPECT_FALSE(isTargetRewritingHint(exampleName(spec)));
    }
  }
  EXPECT_EQ(listSelectorHints(),
            "O, fast_fp_math, unsafe_fp_math and target.*");
}

TEST(HintRegistry, HelpAndTableListEveryEntry) {
  std::string help = acceptedHintsHelp().str();
  std::string table = printHintTable();
  std::string document = printHintDocument();
  EXPECT_NE(document.find(table), std::string::npos);
  for (const HintSpec &spec : getHintSpecs()) {
    std::string name = spec.getDisplayName();
    EXPECT_NE(help.find(name + "=" + spec.getValueSyntax()), std::string::npos)
        << name << " missing from: " << help;
    EXPECT_NE(table.find("| `" + name + "` |"), std::string::npos)
        << name << " missing from: " << table;
  }
  // Family limits and exclusions are in both.
  EXPECT_NE(help.find("maxnreg=<1..512> (NVVM at most 255)"), std::string::npos)
      << help;
  EXPECT_NE(help.find("waves_per_eu=<0..20> (ROCDL only; 0 leaves it unset; 1 "
                      "is LLVM's default)"),
            std::string::npos)
      << help;
  EXPECT_NE(table.find("`nvvm.maxnreg` on the kernels (≤ 255)"),
            std::string::npos)
      << table;
}

TEST(HintRegistry, JSONDescribesEveryEntry) {
  // The C API's flyGetHintSpecsJSON (what fly_snapshot types hints by).
  llvm::Expected<llvm::json::Value> specs =
      llvm::json::parse(printHintSpecsJSON());
  ASSERT_TRUE(static_cast<bool>(specs)) << llvm::toString(specs.takeError());
  const llvm::json::Array *array = specs->getAsArray();
  ASSERT_NE(array, nullptr);
  ASSERT_EQ(array->size(), getHintSpecs().size());
  // The manifest schema's hint_set.properties: every hint but the families.
  llvm::Expected<llvm::json::Value> schema =
      llvm::json::parse(printManifestSchemaHintProperties());
  ASSERT_TRUE(static_cast<bool>(schema)) << llvm::toString(schema.takeError());
  const llvm::json::Object *properties = schema->getAsObject();
  ASSERT_NE(properties, nullptr);
  size_t named = 0;
  for (auto [spec, value] : llvm::zip(getHintSpecs(), *array)) {
    const llvm::json::Object *object = value.getAsObject();
    ASSERT_NE(object, nullptr);
    EXPECT_EQ(object->getString("name"), spec.name);
    EXPECT_EQ(object->getBoolean("prefix"), spec.isFamily());
    EXPECT_EQ(object->getString("type"), stringifyHintType(spec.type));
    EXPECT_EQ(object->getBoolean("selector"), spec.selector);
    bool isInt = spec.type == HintType::Int;
    EXPECT_EQ(object->getInteger("min"),
              isInt ? std::optional<int64_t>(spec.min) : std::nullopt);
    EXPECT_EQ(object->getInteger("max"),
              isInt ? std::optional<int64_t>(spec.max) : std::nullopt);
    const llvm::json::Object *families = object->getObject("families");
    ASSERT_NE(families, nullptr);
    for (TargetFamily family :
         {TargetFamily::ROCDL, TargetFamily::NVVM, TargetFamily::Other}) {
      HintFamilyUse use = spec.getUse(family);
      const llvm::json::Object *there =
          families->getObject(stringifyTargetFamily(family));
      EXPECT_EQ(there != nullptr, use.applies) << spec.name;
      if (there)
        EXPECT_EQ(there->getInteger("max"),
                  use.max ? std::optional<int64_t>(use.max) : std::nullopt);
    }
    const llvm::json::Object *property = properties->getObject(spec.name);
    EXPECT_EQ(property != nullptr, !spec.isFamily()) << spec.name;
    if (!property)
      continue;
    ++named;
    if (isInt) {
      EXPECT_EQ(property->getString("type"), "integer");
      EXPECT_EQ(property->getInteger("minimum"), spec.min);
      EXPECT_EQ(property->getInteger("maximum"), spec.max);
    } else if (spec.type == HintType::Bool) {
      EXPECT_EQ(*property->get("enum"),
                llvm::json::Value(llvm::json::Array{0, 1}));
    } else {
      EXPECT_EQ(property->getString("type"), "string");
    }
  }
  EXPECT_EQ(properties->size(), named);
}

TEST(HintRegistry, ValuesAreTyped) {
  llvm::Expected<HintSet> parsed = HintSet::parse(
      "maxnreg=064,fast_fp_math=on,func.x=42 : i32,target[gfx90a].O=2");
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  HintSet &set = *parsed;
  ASSERT_EQ(errorOf(set.add("opts", " -v ")), "");
  ASSERT_EQ(errorOf(set.add("target.chip", " gfx90a ")), "");
  EXPECT_EQ(set.getInt("maxnreg"), 64);
  EXPECT_EQ(set.getBool("fast_fp_math"), true);
  EXPECT_EQ(set.getInt("target[gfx90a].O"), 2);
  // The accessors follow the registry's type and are empty otherwise.
  EXPECT_EQ(set.getInt("fast_fp_math"), std::nullopt);
  EXPECT_EQ(set.getBool("maxnreg"), std::nullopt);
  EXPECT_EQ(set.getInt("waves_per_eu"), std::nullopt);
  EXPECT_EQ(set.getInt("opts"), std::nullopt);
  for (const TypedHint &hint : set.hints()) {
    EXPECT_EQ(hint.value.getType(), hint.spec->type) << hint.key;
    EXPECT_EQ(*set.lookup(hint.key), hint.value.canonical()) << hint.key;
  }
  // Strings keep their blanks when the table says so.
  EXPECT_EQ(*set.lookup("opts"), " -v ");
  EXPECT_EQ(*set.lookup("target.chip"), "gfx90a");
  EXPECT_EQ(*set.lookup("func.x"), "42 : i32");
  // JSON: integers and booleans are numbers, selected ones too.
  llvm::json::Object json = set.toJSON();
  EXPECT_EQ(json.getInteger("maxnreg"), 64);
  EXPECT_EQ(json.getInteger("fast_fp_math"), 1);
  EXPECT_EQ(json.getInteger("target[gfx90a].O"), 2);
  EXPECT_EQ(json.getString("func.x"), "42 : i32");
  llvm::Expected<HintSet> back =
      HintSet::fromJSON(llvm::json::Value(llvm::json::Object(set.toJSON())));
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(*back, set);
}

} // namespace
