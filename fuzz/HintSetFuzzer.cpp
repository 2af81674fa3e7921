//===- HintSetFuzzer.cpp - libFuzzer target for hint-set parsing ----------===//
//
// Feeds arbitrary bytes to parseHintSets (the `hints=` / `--hints=` syntax)
// and parseHintSetsJSON (`hints-file=` / `--hints-file=`). Beyond "no crash,
// no sanitizer report", it checks the invariants the cache and the
// reproducers rely on, and aborts when one fails:
//   - every successfully parsed set's canonical() form parses back, with
//     HintSet::parse, to an equal set (canonical() is what ids, cache keys
//     and reproduce.sh use);
//   - canonical() is a fixed point: canonical(parse(canonical(s))) ==
//     canonical(s);
//   - label() is a usable file/symbol name: non-empty, at most 48
//     characters of [A-Za-z0-9_.].
//
//===----------------------------------------------------------------------===//

#include "fly/Hints/HintSet.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace llvm;

/// The bytes of `text`, printable, with C escapes for the rest.
static std::string escaped(StringRef text) {
  std::string out;
  raw_string_ostream os(out);
  printEscapedString(text, os);
  return out;
}

[[noreturn]] static void fail(const char *what, StringRef input,
                              const fly::HintSet &set, StringRef detail) {
  std::fprintf(stderr,
               "HintSetFuzzer invariant violated: %s\n  input:     '%s'\n"
               "  canonical: '%s'\n  detail:    %s\n",
               what, escaped(input).c_str(), escaped(set.canonical()).c_str(),
               escaped(detail).c_str());
  std::abort();
}

static void checkSet(const fly::HintSet &set, StringRef input) {
  std::string canon = set.canonical();
  Expected<fly::HintSet> again = fly::HintSet::parse(canon);
  if (!again)
    fail("canonical form does not parse back", input, set,
         toString(again.takeError()));
  else if (!(*again == set))
    fail("canonical form parses back to a different set", input, set,
         again->canonical());
  else if (again->canonical() != canon) {
    fail("canonical() is not a fixed point", input, set, again->canonical());
  }

  std::string label = set.label();
  if (label.empty() || label.size() > 48)
    fail("label() is empty or longer than 48 characters", input, set, label);
  for (char c : label)
    if (!(isAlnum(c) || c == '_' || c == '.'))
      fail("label() has a character outside [A-Za-z0-9_.]", input, set, label);
}

static void check(Expected<std::vector<fly::HintSet>> sets, StringRef input) {
  if (!sets) {
    // Errors must be printable (and must be consumed).
    std::string message = toString(sets.takeError());
    if (message.empty())
      std::abort();
    return;
  }
  for (const fly::HintSet &set : *sets)
    checkSet(set, input);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef input(reinterpret_cast<const char *>(data), size);
  check(fly::parseHintSets(input), input);
  check(fly::parseHintSetsJSON(input), input);
  return 0;
}
