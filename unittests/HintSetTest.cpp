//===- HintSetTest.cpp - Parsing and printing hint sets -------------------===//

#include "fly/Hints/HintSet.h"
#include "fly/Hints/HintSetSources.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace fly {
// Lets gtest print hint sets in failure messages.
void PrintTo(const HintSet &set, std::ostream *os) {
  *os << "{" << set.canonical() << "}";
}
} // namespace fly

using namespace fly;
using llvm::Expected;
using llvm::StringRef;

namespace {

/// Parses `text`, failing the test (with the error) if it does not parse.
HintSet parseOK(StringRef text) {
  Expected<HintSet> set = HintSet::parse(text);
  if (!set) {
    ADD_FAILURE() << "'" << text.str()
                  << "' should parse: " << llvm::toString(set.takeError());
    return HintSet();
  }
  return std::move(*set);
}

/// Parses `text` expecting failure and returns the error message.
template <typename T> std::string errorOf(Expected<T> result) {
  if (result) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(result.takeError());
}

std::string parseError(StringRef text) { return errorOf(HintSet::parse(text)); }

//===----------------------------------------------------------------------===//
// HintSet::parse and the canonical form
//===----------------------------------------------------------------------===//

TEST(HintSetParse, EmptyIsTheDefaultSet) {
  for (StringRef text : {"", "   ", ",", " , "}) {
    HintSet set = parseOK(text);
    EXPECT_TRUE(set.empty()) << text.str();
    EXPECT_EQ(set.canonical(), "");
    EXPECT_EQ(set.label(), "default");
  }
}

TEST(HintSetParse, KeysAreSorted) {
  HintSet set = parseOK("waves_per_eu=2,maxnreg=128,O=3");
  ASSERT_EQ(set.hints().size(), 3u);
  EXPECT_EQ(set.hints()[0].key, "O");
  EXPECT_EQ(set.hints()[1].key, "maxnreg");
  EXPECT_EQ(set.hints()[2].key, "waves_per_eu");
  EXPECT_EQ(set.canonical(), "O=3,maxnreg=128,waves_per_eu=2");
}

TEST(HintSetParse, SpellingDoesNotMatter) {
  HintSet a = parseOK("waves_per_eu=2,maxnreg=128");
  HintSet b = parseOK("  maxnreg = 128 ,  waves_per_eu=02 ");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.canonical(), b.canonical());
  EXPECT_EQ(a.label(), b.label());
  EXPECT_EQ(b.canonical(), "maxnreg=128,waves_per_eu=2");
}

TEST(HintSetParse, Lookup) {
  HintSet set = parseOK("waves_per_eu=4,O=1");
  ASSERT_TRUE(set.lookup("waves_per_eu").has_value());
  EXPECT_EQ(*set.lookup("waves_per_eu"), "4");
  EXPECT_EQ(*set.lookup("O"), "1");
  EXPECT_FALSE(set.lookup("maxnreg").has_value());
  EXPECT_FALSE(set.lookup("waves").has_value());
}

TEST(HintSetParse, BooleansAreNormalised) {
  for (StringRef on : {"1", "true", "on"}) {
    HintSet set = parseOK(("fast_fp_math=" + on).str());
    EXPECT_EQ(set.canonical(), "fast_fp_math=1") << on.str();
  }
  for (StringRef off : {"0", "false", "off"}) {
    HintSet set = parseOK(("unsafe_fp_math=" + off).str());
    EXPECT_EQ(set.canonical(), "unsafe_fp_math=0") << off.str();
  }
  EXPECT_EQ(parseOK("fast_fp_math=true"), parseOK("fast_fp_math=1"));
  std::string err = parseError("fast_fp_math=yes");
  EXPECT_NE(err.find("'fast_fp_math' expects 0 or 1"), std::string::npos)
      << err;
  EXPECT_NE(err.find("'yes'"), std::string::npos) << err;
}

TEST(HintSetParse, IntegersAreNormalised) {
  EXPECT_EQ(parseOK("waves_per_eu=004").canonical(), "waves_per_eu=4");
  EXPECT_EQ(parseOK("target.O= 2").canonical(), "target.O=2");
}

TEST(HintSetParse, QuotedValues) {
  // Quotes protect separators; the value is stored without them.
  HintSet set = parseOK("opts=\"-O1 -v\",passthrough.foo='a,b;c'");
  EXPECT_EQ(*set.lookup("opts"), "-O1 -v");
  EXPECT_EQ(*set.lookup("passthrough.foo"), "a,b;c");
  // The canonical form quotes values that need it, and parses back.
  EXPECT_EQ(set.canonical(), "opts=\"-O1 -v\",passthrough.foo=\"a,b;c\"");
  EXPECT_EQ(parseOK(set.canonical()), set);

  // Escaped quotes inside quotes.
  HintSet escaped = parseOK(R"(opts="say \"hi\"")");
  EXPECT_EQ(*escaped.lookup("opts"), "say \"hi\"");
  EXPECT_EQ(escaped.canonical(), R"(opts="say \"hi\"")");
  EXPECT_EQ(parseOK(escaped.canonical()), escaped);

  // Separators inside quotes do not split hint sets either.
  Expected<std::vector<HintSet>> sets = parseHintSets("opts='-a;-b',O=1;O=2");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  ASSERT_EQ(sets->size(), 2u);
  EXPECT_EQ(*(*sets)[0].lookup("opts"), "-a;-b");
}

TEST(HintSetParse, UnquotedCommaSplits) {
  // Unquoted, a comma ends the value: "-xnack" is then a hint with no value.
  std::string err = parseError("target.features=+sramecc,-xnack");
  EXPECT_NE(err.find("'-xnack' has no value"), std::string::npos) << err;
}

TEST(HintSetParse, UnterminatedQuote) {
  std::string err = parseError("opts=\"-O1");
  EXPECT_NE(err.find("unterminated quote"), std::string::npos) << err;
}

TEST(HintSetParse, BracketedFuncValues) {
  // Commas inside [], <>, {} and () belong to the value.
  HintSet set = parseOK("func.rocdl.reqd_work_group_size=array<i32: 64, 1, 1>,"
                        "func.fly.list=[1, 2, 3],"
                        "func.fly.dict={a = 1 : i32, b = \"x\"},"
                        "waves_per_eu=2");
  ASSERT_EQ(set.hints().size(), 4u);
  EXPECT_EQ(*set.lookup("func.rocdl.reqd_work_group_size"),
            "array<i32: 64, 1, 1>");
  EXPECT_EQ(*set.lookup("func.fly.list"), "[1, 2, 3]");
  EXPECT_EQ(*set.lookup("func.fly.dict"), "{a = 1 : i32, b = \"x\"}");
  // Values outside [A-Za-z0-9_.:+/-] print quoted (quotes and backslashes
  // escaped), and the canonical form parses back to the same set.
  EXPECT_EQ(set.canonical(),
            "func.fly.dict=\"{a = 1 : i32, b = \\\"x\\\"}\","
            "func.fly.list=\"[1, 2, 3]\","
            "func.rocdl.reqd_work_group_size=\"array<i32: 64, 1, 1>\","
            "waves_per_eu=2");
  EXPECT_EQ(parseOK(set.canonical()), set);
}

TEST(HintSetParse, FuncValueWithTypeAndString) {
  HintSet set = parseOK("func.fly.n=42 : i32");
  EXPECT_EQ(*set.lookup("func.fly.n"), "42 : i32");
  EXPECT_EQ(parseOK(set.canonical()), set);

  // A string attribute must keep its quotes: written quoted once more.
  HintSet str;
  ASSERT_FALSE(static_cast<bool>(
      str.add("func.rocdl.flat_work_group_size", "\"1,256\"")));
  EXPECT_EQ(*str.lookup("func.rocdl.flat_work_group_size"), "\"1,256\"");
  EXPECT_EQ(str.canonical(), R"(func.rocdl.flat_work_group_size="\"1,256\"")");
  EXPECT_EQ(parseOK(str.canonical()), str) << str.canonical();
  EXPECT_EQ(parseOK("func.rocdl.flat_work_group_size='\"1,256\"'"), str);
}

TEST(HintSetParse, EmptyFuncValueIsAnError) {
  std::string err = parseError("func.fly.x=");
  EXPECT_NE(err.find("needs an attribute literal"), std::string::npos) << err;
}

TEST(HintSetParse, DuplicateKey) {
  std::string err = parseError("waves_per_eu=1,maxnreg=64,waves_per_eu=2");
  EXPECT_NE(err.find("'waves_per_eu' is given twice"), std::string::npos)
      << err;
  // Spelt differently, still the same key.
  err = parseError("O=1, O =1");
  EXPECT_NE(err.find("given twice"), std::string::npos) << err;
  // add() reports it too, and leaves the set as it was.
  HintSet set = parseOK("O=1");
  llvm::Error e = set.add("O", "2");
  ASSERT_TRUE(static_cast<bool>(e));
  llvm::consumeError(std::move(e));
  EXPECT_EQ(set.canonical(), "O=1");
}

TEST(HintSetParse, UnknownHintListsAcceptedNames) {
  std::string err = parseError("wave_per_eu=2");
  EXPECT_NE(err.find("unknown hint 'wave_per_eu'"), std::string::npos) << err;
  for (StringRef name :
       {"waves_per_eu", "maxnreg", "O=", "fast_fp_math", "unsafe_fp_math",
        "func.", "passthrough.", "target.", "opts"})
    EXPECT_NE(err.find(name.str()), std::string::npos)
        << "'" << name.str() << "' missing from: " << err;
  EXPECT_NE(err.find(acceptedHintsHelp().str()), std::string::npos) << err;

  err = parseError("target.arch=gfx942");
  EXPECT_NE(err.find("unknown target field in hint 'target.arch'"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("target.chip"), std::string::npos) << err;

  // A prefix alone is no hint.
  err = parseError("func=1");
  EXPECT_NE(err.find("unknown hint 'func'"), std::string::npos) << err;
}

TEST(HintSetParse, MissingValue) {
  std::string err = parseError("waves_per_eu");
  EXPECT_NE(err.find("'waves_per_eu' has no value"), std::string::npos) << err;
  err = parseError("=4");
  EXPECT_NE(err.find("empty hint name"), std::string::npos) << err;
}

TEST(HintSetParse, OutOfRange) {
  struct Case {
    const char *text, *expected;
  } cases[] = {
      {"waves_per_eu=21", "'waves_per_eu' = 21 is out of range [0, 20]"},
      {"waves_per_eu=-1", "'waves_per_eu' = -1 is out of range [0, 20]"},
      {"maxnreg=0", "'maxnreg' = 0 is out of range [1, 512]"},
      {"maxnreg=513", "'maxnreg' = 513 is out of range [1, 512]"},
      {"O=4", "'O' = 4 is out of range [0, 3]"},
      {"target.O=9", "'target.O' = 9 is out of range [0, 3]"},
  };
  for (const Case &c : cases) {
    std::string err = parseError(c.text);
    EXPECT_NE(err.find(c.expected), std::string::npos)
        << c.text << " -> " << err;
  }
  // Bounds are inclusive.
  EXPECT_EQ(parseOK("waves_per_eu=20,maxnreg=512,O=0").canonical(),
            "O=0,maxnreg=512,waves_per_eu=20");
}

TEST(HintSetParse, IllTyped) {
  for (const char *text : {"maxnreg=abc", "waves_per_eu=1.5", "O=", "O=0x1"}) {
    std::string err = parseError(text);
    EXPECT_NE(err.find("expects an integer"), std::string::npos)
        << text << " -> " << err;
  }
}

//===----------------------------------------------------------------------===//
// label()
//===----------------------------------------------------------------------===//

bool isSymbolSafe(StringRef label) {
  if (label.empty() || !(llvm::isAlpha(label.front()) || label.front() == '_'))
    return false;
  return llvm::all_of(
      label, [](char c) { return llvm::isAlnum(c) || c == '_' || c == '.'; });
}

TEST(HintSetLabel, Examples) {
  EXPECT_EQ(HintSet().label(), "default");
  EXPECT_EQ(parseOK("waves_per_eu=2,maxnreg=64").label(),
            "maxnreg_64.waves_per_eu_2");
  EXPECT_EQ(parseOK("waves_per_eu=2").label(), "waves_per_eu_2");
}

TEST(HintSetLabel, SymbolSafeAndDistinct) {
  const char *texts[] = {
      "",
      "waves_per_eu=0",
      "waves_per_eu=1",
      "waves_per_eu=2",
      "waves_per_eu=4",
      "waves_per_eu=8",
      "maxnreg=32",
      "maxnreg=64",
      "maxnreg=96",
      "maxnreg=128",
      "maxnreg=255",
      "waves_per_eu=4,maxnreg=64",
      "waves_per_eu=2,maxnreg=128",
      "O=1",
      "O=1,maxnreg=64",
      "target.O=1",
      "fast_fp_math=1",
      "fast_fp_math=0",
      "unsafe_fp_math=1",
      "opts=-O1",
      "opts=\"-O1 -v\"",
      "opts=\"-O3 --opt-level=3\"",
      "target.chip=gfx90a",
      "target.chip=gfx942",
      "target.features=\"+sramecc,-xnack\"",
      "func.rocdl.reqd_work_group_size=array<i32: 64, 1, 1>",
      "func.rocdl.reqd_work_group_size=array<i32: 128, 1, 1>",
      "func.rocdl.flat_work_group_size='\"1,256\"'",
      "passthrough.amdgpu-unroll-threshold=100",
      // Long sets are truncated: the hash suffix keeps them apart.
      "waves_per_eu=4,maxnreg=64,O=3,fast_fp_math=1,unsafe_fp_math=1,"
      "opts=-O3",
      "waves_per_eu=4,maxnreg=64,O=3,fast_fp_math=1,unsafe_fp_math=1,"
      "opts=-O2",
      "waves_per_eu=4,maxnreg=64,O=3,fast_fp_math=1,unsafe_fp_math=0,"
      "opts=-O3",
  };
  std::set<std::string> labels, canonicals;
  for (const char *text : texts) {
    Expected<HintSet> set = HintSet::parse(text);
    if (!set) {
      ADD_FAILURE() << text << ": " << llvm::toString(set.takeError());
      continue;
    }
    std::string label = set->label();
    EXPECT_TRUE(isSymbolSafe(label)) << text << " -> " << label;
    EXPECT_LE(label.size(), 48u) << text << " -> " << label;
    // The canonical form (what fly.hints and the manifest show) parses back
    // to the same set.
    EXPECT_EQ(parseOK(set->canonical()), *set) << text;
    canonicals.insert(set->canonical());
    labels.insert(label);
  }
  // Every text above is a distinct set, so every label is distinct.
  EXPECT_EQ(canonicals.size(), std::size(texts));
  EXPECT_EQ(labels.size(), canonicals.size());
}

TEST(HintSetLabel, TruncatedLabelsAreStable) {
  HintSet a = parseOK("waves_per_eu=4,maxnreg=64,O=3,fast_fp_math=1,"
                      "unsafe_fp_math=1,opts=-O3");
  HintSet b = parseOK("opts=-O3,unsafe_fp_math=on,fast_fp_math=true,O=3,"
                      "maxnreg=64,waves_per_eu=4");
  EXPECT_EQ(a.label(), b.label());
  EXPECT_EQ(a.label().size(), 48u);
}

//===----------------------------------------------------------------------===//
// parseHintSets
//===----------------------------------------------------------------------===//

std::vector<std::string> canonicalsOf(const std::vector<HintSet> &sets) {
  std::vector<std::string> out;
  for (const HintSet &set : sets)
    out.push_back(set.canonical());
  return out;
}

TEST(ParseHintSets, Semicolons) {
  Expected<std::vector<HintSet>> sets =
      parseHintSets("waves_per_eu=1;waves_per_eu=2,maxnreg=64; O=1 ");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  EXPECT_EQ(canonicalsOf(*sets),
            (std::vector<std::string>{"waves_per_eu=1",
                                      "maxnreg=64,waves_per_eu=2", "O=1"}));
}

TEST(ParseHintSets, EmptySegmentIsTheDefault) {
  Expected<std::vector<HintSet>> sets = parseHintSets("waves_per_eu=0;");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  ASSERT_EQ(sets->size(), 2u);
  EXPECT_FALSE((*sets)[0].empty());
  EXPECT_TRUE((*sets)[1].empty());

  sets = parseHintSets(";maxnreg=64;;");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  EXPECT_EQ(canonicalsOf(*sets),
            (std::vector<std::string>{"", "maxnreg=64", "", ""}));

  sets = parseHintSets(";");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  EXPECT_EQ(sets->size(), 2u);
}

TEST(ParseHintSets, ErrorNamesTheSet) {
  std::string err = errorOf(parseHintSets("waves_per_eu=1;maxnreg=abc;O=1"));
  EXPECT_NE(err.find("hint set #1 ('maxnreg=abc')"), std::string::npos) << err;
  EXPECT_NE(err.find("expects an integer"), std::string::npos) << err;

  err = errorOf(parseHintSets("O=1;opts='x"));
  EXPECT_NE(err.find("unterminated quote"), std::string::npos) << err;
}

TEST(ParseHintSets, CartesianProduct) {
  Expected<std::vector<HintSet>> sets =
      parseHintSets("waves_per_eu=1,2,4 x maxnreg=64,128");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  // The first factor varies slowest, as itertools.product.
  EXPECT_EQ(canonicalsOf(*sets),
            (std::vector<std::string>{
                "maxnreg=64,waves_per_eu=1", "maxnreg=128,waves_per_eu=1",
                "maxnreg=64,waves_per_eu=2", "maxnreg=128,waves_per_eu=2",
                "maxnreg=64,waves_per_eu=4", "maxnreg=128,waves_per_eu=4"}));
}

TEST(ParseHintSets, ProductBesideExplicitSets) {
  // One factor alone, quoted values, and explicit sets around a product.
  Expected<std::vector<HintSet>> sets =
      parseHintSets("O=1;waves_per_eu=1,2;opts='-a,b',\"-c\" x O=2;maxnreg=64");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  EXPECT_EQ(canonicalsOf(*sets),
            (std::vector<std::string>{"O=1", "waves_per_eu=1", "waves_per_eu=2",
                                      "O=2,opts=\"-a,b\"", "O=2,opts=-c",
                                      "maxnreg=64"}));
  // The explicit syntax is unchanged: every item names its hint.
  sets = parseHintSets("waves_per_eu=2,maxnreg=64");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  EXPECT_EQ(canonicalsOf(*sets),
            (std::vector<std::string>{"maxnreg=64,waves_per_eu=2"}));
}

TEST(ParseHintSets, ProductErrorsNameTheColumn) {
  //                                  1234567890123456789012345678
  std::string err = errorOf(parseHintSets("waves_per_eu=1,2 x maxnreg=64,x"));
  EXPECT_NE(err.find("column 31:"), std::string::npos) << err;
  EXPECT_NE(err.find("expects an integer"), std::string::npos) << err;

  err = errorOf(parseHintSets("O=1;waves_per_eu=1,2 x bogus=1"));
  EXPECT_NE(err.find("column 24:"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown hint 'bogus'"), std::string::npos) << err;

  err = errorOf(parseHintSets("waves_per_eu=1,maxnreg=64,128"));
  EXPECT_NE(err.find("column 16: 'maxnreg=64' starts a second hint"),
            std::string::npos)
      << err;

  err = errorOf(parseHintSets("maxnreg=32 x maxnreg=64"));
  EXPECT_NE(err.find("column 14: hint 'maxnreg' is in two factors"),
            std::string::npos)
      << err;

  err = errorOf(parseHintSets("waves_per_eu=1,2 x 64,128"));
  EXPECT_NE(err.find("column 20: factor '64,128' names no hint"),
            std::string::npos)
      << err;
}

TEST(ParseHintSets, ProductCountedBeforeExpanding) {
  // 10^12 sets: refused from the factor sizes, nothing is built.
  std::string factor = "=1,2,3,4,5,6,7,8,9,10";
  std::string text;
  for (const char *key : {"waves_per_eu", "maxnreg", "func.a", "func.b",
                          "func.c", "func.d", "func.e", "func.f"})
    text += std::string(text.empty() ? "" : " x ") + key + factor;
  std::string err = errorOf(parseHintSets(text));
  EXPECT_NE(err.find("more than the 10000 allowed"), std::string::npos) << err;

  // The cap counts the expanded sets, explicit ones included.
  ::setenv("FLY_MAX_HINT_SETS", "6", 1);
  bool six =
      static_cast<bool>(parseHintSets("waves_per_eu=1,2,4 x maxnreg=64,128"));
  err = errorOf(parseHintSets("O=1;waves_per_eu=1,2,4 x maxnreg=64,128"));
  ::unsetenv("FLY_MAX_HINT_SETS");
  EXPECT_TRUE(six);
  EXPECT_NE(err.find("column 5: the product of 2 factor(s) makes 6 hint "
                     "set(s): 7 hint sets are more than the 6 allowed"),
            std::string::npos)
      << err;
}

TEST(ParseHintSetsJSON, ObjectOfListsIsAProduct) {
  // Factors in the order the text has them, not llvm::json's.
  Expected<std::vector<HintSet>> sets =
      parseHintSetsJSON(R"({"waves_per_eu": [1, 2, 4], "maxnreg": [64, 128]})");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  EXPECT_EQ(canonicalsOf(*sets), canonicalsOf(cantFail(parseHintSets(
                                     "waves_per_eu=1,2,4 x maxnreg=64,128"))));

  // Inside a list: explicit sets and products side by side; a scalar in a
  // product is a factor of one value.
  sets = parseHintSetsJSON(
      R"([{"O": 1}, {"maxnreg": [32, 64], "fast_fp_math": true}, {}])");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  EXPECT_EQ(canonicalsOf(*sets),
            (std::vector<std::string>{"O=1", "fast_fp_math=1,maxnreg=32",
                                      "fast_fp_math=1,maxnreg=64", ""}));
}

TEST(ParseHintSetsJSON, ProductErrorsNameLineAndColumn) {
  std::string err = errorOf(parseHintSetsJSON("[{\"O\": 1},\n"
                                              " {\"waves_per_eu\": [1, 2],\n"
                                              "  \"maxnreg\": [64, \"x\"]}]"));
  EXPECT_NE(err.find("hint set #1: line 3, column 19:"), std::string::npos)
      << err;
  EXPECT_NE(err.find("expects an integer"), std::string::npos) << err;

  err = errorOf(parseHintSetsJSON("{\"maxnreg\": [64, true]}"));
  EXPECT_NE(err.find("line 1, column 18: hint 'maxnreg' takes an integer"),
            std::string::npos)
      << err;

  err = errorOf(parseHintSetsJSON("{\"waves_per_eu\": [1],\n \"bogus\": [1]}"));
  EXPECT_NE(err.find("line 2, column 2:"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown hint 'bogus'"), std::string::npos) << err;

  err = errorOf(parseHintSetsJSON("{\"waves_per_eu\": []}"));
  EXPECT_NE(err.find("line 1, column 2: hint 'waves_per_eu' has no values"),
            std::string::npos)
      << err;
}

//===----------------------------------------------------------------------===//
// parseHintSetsJSON
//===----------------------------------------------------------------------===//

// Found by fuzz/HintSetFuzzer: canonical forms that did not parse back, or
// that two different sets shared (they are cache keys).
TEST(HintSetCanonical, RoundTripsAndIsInjective) {
  Expected<std::vector<HintSet>> sets = parseHintSetsJSON(R"json([
    {"opts": "(", "passthrough.z": "1"},
    {"func.a": "1,func.b=2"},
    {"opts": "x\\", "passthrough.q": "\"y"}
  ])json");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  for (const HintSet &set : *sets) {
    HintSet back = parseOK(set.canonical());
    EXPECT_EQ(back, set) << set.canonical();
  }
  HintSet text = parseOK("func.a=1,func.b=2");
  EXPECT_EQ(text.hints().size(), 2u);
  EXPECT_NE(text.canonical(), (*sets)[1].canonical());
  Expected<HintSet> badName = HintSet::parse("func.a(=1");
  ASSERT_FALSE(static_cast<bool>(badName));
  EXPECT_NE(llvm::toString(badName.takeError()).find("may only use letters"),
            std::string::npos);
}

TEST(ParseHintSetsJSON, Valid) {
  Expected<std::vector<HintSet>> sets = parseHintSetsJSON(R"json([
    {},
    {"waves_per_eu": 4},
    {"maxnreg": 64, "waves_per_eu": 2},
    {"fast_fp_math": true, "unsafe_fp_math": false},
    {"opts": "-O1 -v", "maxnreg": "96"},
    {"func.rocdl.reqd_work_group_size": "array<i32: 64, 1, 1>"}
  ])json");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  EXPECT_EQ(canonicalsOf(*sets),
            (std::vector<std::string>{
                "",
                "waves_per_eu=4",
                "maxnreg=64,waves_per_eu=2",
                "fast_fp_math=1,unsafe_fp_math=0",
                "maxnreg=96,opts=\"-O1 -v\"",
                "func.rocdl.reqd_work_group_size=\"array<i32: 64, 1, 1>\"",
            }));
  // The same sets as the textual syntax.
  EXPECT_EQ((*sets)[2], parseOK("waves_per_eu=2,maxnreg=64"));
  // JSON strings are taken as they are: no second unquoting.
  Expected<std::vector<HintSet>> str = parseHintSetsJSON(
      R"json([{"func.rocdl.flat_work_group_size": "\"1,256\""}])json");
  ASSERT_TRUE(static_cast<bool>(str)) << llvm::toString(str.takeError());
  ASSERT_EQ(str->size(), 1u);
  EXPECT_EQ(*(*str)[0].lookup("func.rocdl.flat_work_group_size"), "\"1,256\"");
  EXPECT_EQ(parseOK((*str)[0].canonical()), (*str)[0]);

  Expected<std::vector<HintSet>> none = parseHintSetsJSON("[]");
  ASSERT_TRUE(static_cast<bool>(none)) << llvm::toString(none.takeError());
  EXPECT_TRUE(none->empty());
}

TEST(ParseHintSetsJSON, Malformed) {
  for (StringRef text : {"[{", "", "[{\"O\": 1},]", "not json"}) {
    std::string err = errorOf(parseHintSetsJSON(text));
    EXPECT_NE(err.find("malformed hints JSON"), std::string::npos)
        << text.str() << " -> " << err;
  }
}

// Issue 23 finding 12: json::parse keeps the last of two equal keys, so
// {"maxnreg":64,"maxnreg":32} compiled as maxnreg=32; --hints rejects the
// same repeat.
TEST(ParseHintSetsJSON, DuplicateKeysAreRejectedWithALocation) {
  std::string err = errorOf(
      parseHintSetsJSON("[{\"O\": 1},\n {\"maxnreg\": 64, \"maxnreg\": 32}]"));
  EXPECT_NE(err.find("line 2, column 18: key \"maxnreg\" appears twice"),
            std::string::npos)
      << err;
  // The same key in two objects, or as a string value, is no repeat.
  Expected<std::vector<HintSet>> sets = parseHintSetsJSON(
      R"([{"maxnreg": 64}, {"maxnreg": 32, "opts": "maxnreg"}])");
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  EXPECT_EQ(sets->size(), 2u);
}

// Issue 23 finding 12: true is no integer (it compiled as maxnreg=1).
TEST(ParseHintSetsJSON, BooleanForAnIntegerHintIsRejected) {
  std::string err = errorOf(parseHintSetsJSON(R"([{"maxnreg": true}])"));
  EXPECT_NE(err.find("'maxnreg' takes an integer, not the boolean true"),
            std::string::npos)
      << err;
  EXPECT_TRUE(
      static_cast<bool>(parseHintSetsJSON(R"([{"fast_fp_math": true}])")));
}

TEST(ParseHintSetsJSON, WrongTypes) {
  std::string err = errorOf(parseHintSetsJSON(R"({"waves_per_eu": 1})"));
  EXPECT_NE(err.find("must be a list of objects"), std::string::npos) << err;

  err = errorOf(parseHintSetsJSON(R"([{"O": 1}, 2])"));
  EXPECT_NE(err.find("hint set #1"), std::string::npos) << err;
  EXPECT_NE(err.find("must be a JSON object"), std::string::npos) << err;

  // A list value is a product's factor ({"maxnreg": [64]} is one set); its
  // elements are scalars.
  for (StringRef text : {R"([{"maxnreg": 1.5}])", R"([{"maxnreg": [[64]]}])",
                         R"([{"maxnreg": null}])", R"([{"maxnreg": {}}])"}) {
    err = errorOf(parseHintSetsJSON(text));
    EXPECT_NE(err.find("hint set #0"), std::string::npos)
        << text.str() << " -> " << err;
    EXPECT_NE(err.find("'maxnreg' must be an integer, boolean or string"),
              std::string::npos)
        << text.str() << " -> " << err;
  }

  // Values are checked like textual ones.
  err = errorOf(parseHintSetsJSON(R"([{}, {}, {"waves_per_eu": 99}])"));
  EXPECT_NE(err.find("hint set #2"), std::string::npos) << err;
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
  err = errorOf(parseHintSetsJSON(R"([{"bogus": 1}])"));
  EXPECT_NE(err.find("unknown hint 'bogus'"), std::string::npos) << err;
}

TEST(ParseHintSetsJSON, MissingFile) {
  std::string err =
      errorOf(readHintSetsFile("/nonexistent/fly-unittest-hints.json"));
  EXPECT_NE(err.find("hints file: cannot read"), std::string::npos) << err;
}

} // namespace

namespace {

TEST(HintSetSelector, SplitsAfterTheFirstWord) {
  std::optional<HintName> name = splitHintName("target[gfx90a].O");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->base, "target.O");
  EXPECT_EQ(name->selector, "gfx90a");
  name = splitHintName("O[nvvm]");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->base, "O");
  EXPECT_EQ(name->selector, "nvvm");
  name = splitHintName("maxnreg");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->base, "maxnreg");
  EXPECT_EQ(name->selector, "");
  for (StringRef bad :
       {"target.O[gfx90a]x", "target[].O", "target[gfx90a", "target]gfx90a[.O",
        "target[a[b]].O", "[gfx90a]O", "target.chip[gfx90a]"})
    EXPECT_FALSE(splitHintName(bad)) << bad.str();
}

TEST(HintSetSelector, OnlyTargetHintsTakeOne) {
  HintSet set = parseOK("target[gfx90a].O=1,O[sm_90]=2,fast_fp_math[rocdl]=1");
  EXPECT_EQ(set.canonical(),
            "O[sm_90]=2,fast_fp_math[rocdl]=1,target[gfx90a].O=1");
  EXPECT_NE(parseError("maxnreg[gfx90a]=64")
                .find("it changes the kernels, which every target"),
            std::string::npos);
  EXPECT_NE(parseError("target[gfx90a].O=9").find("out of range"),
            std::string::npos);
}

// The one collector of every front end: text, then file, then JSON, each
// error named by its source; a given empty text is the default hint set.
TEST(CollectHintSets, SourcesInOrderErrorsNamed) {
  HintSetSources sources;
  sources.text = "maxnreg=64;maxnreg=32";
  sources.json = R"([{"maxnreg": 128}])";
  auto sets = collectHintSets(sources);
  ASSERT_TRUE(static_cast<bool>(sets)) << llvm::toString(sets.takeError());
  ASSERT_EQ(sets->size(), 3u);
  EXPECT_EQ((*sets)[0].canonical(), "maxnreg=64");
  EXPECT_EQ((*sets)[2].canonical(), "maxnreg=128");

  HintSetSources empty;
  empty.text = "";
  auto one = collectHintSets(empty);
  ASSERT_TRUE(static_cast<bool>(one));
  ASSERT_EQ(one->size(), 1u);
  EXPECT_TRUE((*one)[0].empty());
  auto none = collectHintSets(HintSetSources());
  ASSERT_TRUE(static_cast<bool>(none));
  EXPECT_TRUE(none->empty());

  HintSetSources bad;
  bad.text = "maxnreg=64";
  bad.json = "[{\"no_such_hint\": 1}]";
  bad.jsonName = "FLY_HINT_SETS";
  auto failed = collectHintSets(bad);
  ASSERT_FALSE(static_cast<bool>(failed));
  EXPECT_EQ(llvm::toString(failed.takeError()).rfind("FLY_HINT_SETS: ", 0), 0u);
  HintSetSources badFile;
  badFile.file = "/nonexistent/hints.json";
  badFile.fileName = "invalid hints file";
  auto missing = collectHintSets(badFile);
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_EQ(llvm::toString(missing.takeError())
                .rfind("invalid hints file: hints file: cannot read", 0),
            0u);
}

} // namespace
