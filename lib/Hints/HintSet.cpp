//===- HintSet.cpp - One set of backend hints -----------------------------===//

#include "fly/Hints/HintSet.h"
#include "Hints/HintSetLimit.h"
#include "fly/Hints/HintSetSources.h"

#include "Support/Environment.h"
#include "fly/Support/BoundedJSON.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"

using namespace llvm;

namespace fly {

std::optional<HintName> splitHintName(StringRef key) {
  size_t open = key.find('[');
  if (open == StringRef::npos) {
    if (key.contains(']'))
      return std::nullopt;
    return HintName{key.str(), ""};
  }
  size_t close = key.find(']', open);
  if (close == StringRef::npos || close == open + 1)
    return std::nullopt;
  StringRef selector = key.slice(open + 1, close);
  StringRef rest = key.drop_front(close + 1);
  if (rest.contains('[') || rest.contains(']') ||
      key.take_front(open).empty() || key.take_front(open).contains('.') ||
      (!rest.empty() && !rest.starts_with(".")))
    return std::nullopt;
  if (llvm::any_of(selector, [](char c) { return !isAlnum(c) && c != '_'; }))
    return std::nullopt;
  return HintName{(key.take_front(open) + rest).str(), selector.str()};
}

static Error hintError(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

Error HintSet::add(StringRef key, StringRef value) {
  key = key.trim();
  if (key.empty())
    return hintError("empty hint name");
  if (llvm::any_of(key, [](char c) {
        return !isAlnum(c) && c != '_' && c != '.' && c != '-' && c != '[' &&
               c != ']';
      }))
    return hintError(formatv("hint name '{0}' may only use letters, digits, "
                             "'_', '.', '-' and a [selector]",
                             key));
  std::optional<HintName> name = splitHintName(key);
  if (!name)
    return hintError(formatv("hint name '{0}' has a malformed target "
                             "selector; write it after the first word, e.g. "
                             "O[gfx90a]=2 or target[sm_90].chip=sm_90a",
                             key));
  StringRef field;
  const HintSpec *spec = findHintSpec(name->base, &field);
  if (!spec)
    return unknownHintError(name->base);
  if (!name->selector.empty() && !spec->selector)
    return hintError(formatv(
        "hint '{0}' cannot be limited to target '{1}': it changes the "
        "kernels, which every target of a gpu.module compiles from; only "
        "{2} take a selector",
        key, name->selector, listSelectorHints()));
  Expected<HintValue> typed = spec->parseValue(name->base, value);
  if (!typed)
    return typed.takeError();
  auto it = partition_point(
      hints_, [&](const TypedHint &hint) { return hint.key < key; });
  if (it != hints_.end() && it->key == key)
    return hintError(formatv("hint '{0}' is given twice in one hint set", key));
  hints_.insert(it, TypedHint{key.str(), spec, field.str(), name->selector,
                              std::move(*typed)});
  return Error::success();
}

const TypedHint *HintSet::find(StringRef key) const {
  auto it = partition_point(
      hints_, [&](const TypedHint &hint) { return hint.key < key; });
  if (it == hints_.end() || it->key != key)
    return nullptr;
  return &*it;
}

std::optional<int64_t> HintSet::getInt(StringRef key) const {
  const TypedHint *hint = find(key);
  if (!hint || hint->spec->type != HintType::Int)
    return std::nullopt;
  return hint->value.getInt();
}

std::optional<bool> HintSet::getBool(StringRef key) const {
  const TypedHint *hint = find(key);
  if (!hint || hint->spec->type != HintType::Bool)
    return std::nullopt;
  return hint->value.getBool();
}

std::optional<StringRef> HintSet::lookup(StringRef key) const {
  if (const TypedHint *hint = find(key))
    return hint->value.canonical();
  return std::nullopt;
}

/// Splits at `sep` outside quotes and brackets.
static Expected<SmallVector<StringRef>> splitTopLevel(StringRef text,
                                                      char sep) {
  SmallVector<StringRef> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '[' || c == '{' || c == '(' || c == '<')
      ++depth;
    else if (c == ']' || c == '}' || c == ')' || c == '>')
      --depth;
    else if (c == sep && depth == 0) {
      parts.push_back(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quote)
    return hintError(formatv("unterminated quote in '{0}'", text));
  parts.push_back(text.substr(start));
  return parts;
}

static std::string unquote(StringRef value) {
  value = value.trim();
  if (value.size() < 2 || (value.front() != '"' && value.front() != '\'') ||
      value.back() != value.front())
    return value.str();
  std::string out;
  StringRef body = value.drop_front().drop_back();
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\' && i + 1 < body.size())
      ++i;
    out.push_back(body[i]);
  }
  return out;
}

Expected<HintSet> HintSet::parse(StringRef text) {
  HintSet set;
  if (text.trim().empty())
    return set;
  Expected<SmallVector<StringRef>> items = splitTopLevel(text, ',');
  if (!items)
    return items.takeError();
  for (StringRef item : *items) {
    if (item.trim().empty())
      continue;
    auto [key, value] = item.split('=');
    if (key.size() == item.size())
      return hintError(
          formatv("hint '{0}' has no value; write name=value", item.trim()));
    if (Error err = set.add(key, unquote(value)))
      return std::move(err);
  }
  return set;
}

/// The text of one JSON hint value as HintSet::add takes it.
static Expected<std::string> jsonHintText(StringRef key, const json::Value &v) {
  if (std::optional<int64_t> i = v.getAsInteger())
    return std::to_string(*i);
  if (std::optional<bool> b = v.getAsBoolean()) {
    // true is no integer: {"maxnreg": true} is a mistake, not maxnreg=1.
    std::optional<HintName> name = splitHintName(key);
    const HintSpec *spec = name ? findHintSpec(name->base) : nullptr;
    if (spec && spec->type == HintType::Int)
      return hintError(formatv("hint '{0}' takes an integer, not the "
                               "boolean {1}",
                               key, *b ? "true" : "false"));
    return std::string(*b ? "1" : "0");
  }
  if (std::optional<StringRef> s = v.getAsString())
    return s->str();
  return hintError(formatv("hint '{0}' must be an integer, boolean or "
                           "string in JSON",
                           key));
}

Expected<HintSet> HintSet::fromJSON(const json::Value &value) {
  const json::Object *obj = value.getAsObject();
  if (!obj)
    return hintError("a hint set must be a JSON object such as "
                     "{\"waves_per_eu\": 2}");
  HintSet set;
  for (const auto &[key, v] : *obj) {
    Expected<std::string> text = jsonHintText(key, v);
    if (!text)
      return text.takeError();
    if (Error err = set.add(key, *text))
      return std::move(err);
  }
  return set;
}

/// Values outside this conservative alphabet are printed quoted, so the
/// canonical form always parses back to the same set (and two sets never
/// share a canonical form: it is a cache key).
static bool needsQuotes(StringRef value) {
  return value.empty() || llvm::any_of(value, [](char c) {
           return !isAlnum(c) && !StringRef("_.:+-/").contains(c);
         });
}

json::Object HintSet::toJSON() const {
  json::Object object;
  for (const TypedHint &hint : hints_) {
    switch (hint.value.getType()) {
    case HintType::Int:
      object[hint.key] = hint.value.getInt();
      break;
    case HintType::Bool:
      object[hint.key] = hint.value.getBool() ? 1 : 0;
      break;
    case HintType::Attribute:
    case HintType::String:
      object[hint.key] = hint.value.getText();
      break;
    }
  }
  return object;
}

std::string HintSet::canonical() const {
  std::string out;
  raw_string_ostream os(out);
  interleave(
      hints_, os,
      [&](const TypedHint &hint) {
        StringRef value = hint.value.canonical();
        os << hint.key << '=';
        if (!needsQuotes(value)) {
          os << value;
          return;
        }
        os << '"';
        for (char c : value) {
          if (c == '"' || c == '\\')
            os << '\\';
          os << c;
        }
        os << '"';
      },
      ",");
  return out;
}

std::string HintSet::label() const {
  if (hints_.empty())
    return "default";
  std::string out;
  for (const TypedHint &hint : hints_) {
    if (!out.empty())
      out += '.';
    for (char c : hint.key + "_" + hint.value.canonical().str())
      out += isAlnum(c) || c == '_' ? c : '_';
  }
  constexpr size_t kMaxLabel = 48;
  if (out.size() > kMaxLabel)
    out = out.substr(0, kMaxLabel - 9) + "_" +
          utohexstr(xxh3_64bits(canonical()), /*LowerCase=*/true).substr(0, 8);
  return out;
}

namespace {
/// One factor of a hint-set product: a hint and the values it takes, each
/// with its offset in the text it came from (for diagnostics).
struct HintFactor {
  std::string key;
  size_t keyOffset = 0;
  SmallVector<std::pair<std::string, size_t>> values;
};
} // namespace

/// Checks every value of every factor (and that no hint is in two factors),
/// counts the product against FLY_MAX_HINT_SETS on top of the `already`
/// sets before it, then appends it to `sets`, the first factor varying
/// slowest. `where` turns an offset into "column 7" / "line 2, column 7".
static Error expandProduct(ArrayRef<HintFactor> factors, size_t already,
                           function_ref<std::string(size_t)> where,
                           std::vector<HintSet> &sets) {
  StringSet<> seen;
  uint64_t count = 1;
  for (const HintFactor &factor : factors) {
    if (!seen.insert(factor.key).second)
      return hintError(formatv("{0}: hint '{1}' is in two factors of one "
                               "product",
                               where(factor.keyOffset), factor.key));
    if (factor.values.empty())
      return hintError(formatv("{0}: hint '{1}' has no values",
                               where(factor.keyOffset), factor.key));
    // A bad name is the key's fault, a bad value its own.
    std::optional<HintName> name = splitHintName(factor.key);
    bool known = name && findHintSpec(name->base);
    for (const auto &[value, offset] : factor.values) {
      HintSet probe;
      if (Error err = probe.add(factor.key, value))
        return hintError(formatv("{0}: {1}",
                                 where(known ? offset : factor.keyOffset),
                                 toString(std::move(err))));
    }
    count = std::min<uint64_t>(count * factor.values.size(), uint64_t(1) << 40);
  }
  // Refused before a single set is built: a product of a few long factors
  // is easily millions.
  if (Error err = checkHintSetCount(already + count))
    return hintError(formatv("{0}: the product of {1} factor(s) makes {2}: "
                             "{3}",
                             where(factors.front().keyOffset), factors.size(),
                             count == (uint64_t(1) << 40)
                                 ? std::string("too many hint sets")
                                 : std::to_string(count) + " hint set(s)",
                             toString(std::move(err))));
  SmallVector<size_t> digit(factors.size(), 0);
  for (uint64_t n = 0; n < count; ++n) {
    HintSet set;
    for (auto [factor, d] : zip(factors, digit))
      cantFail(set.add(factor.key, factor.values[d].first));
    sets.push_back(std::move(set));
    for (size_t f = factors.size(); f-- > 0;) {
      if (++digit[f] < factors[f].values.size())
        break;
      digit[f] = 0;
    }
  }
  return Error::success();
}

/// Splits a product segment at ` x ` (whitespace, `x`, whitespace) outside
/// quotes and brackets.
static SmallVector<StringRef> splitFactors(StringRef text) {
  SmallVector<StringRef> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '[' || c == '{' || c == '(' || c == '<')
      ++depth;
    else if (c == ']' || c == '}' || c == ')' || c == '>')
      --depth;
    else if (c == 'x' && depth == 0 && i > 0 && i + 1 < e &&
             isSpace(text[i - 1]) && isSpace(text[i + 1])) {
      parts.push_back(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

/// Whether `item` of a comma list starts a hint (`key=value`) rather than
/// being one more value of the hint before it.
static bool startsHint(StringRef item) {
  item = item.ltrim();
  return !item.empty() && item.front() != '"' && item.front() != '\'' &&
         item.contains('=');
}

/// `waves_per_eu=1,2,4 x maxnreg=64,128`, or a single factor
/// `waves_per_eu=1,2,4`; nullopt when `segment` is one explicit set
/// (`a=1,b=2`).
static Expected<std::optional<SmallVector<HintFactor>>>
parseProduct(StringRef segment, size_t base) {
  SmallVector<StringRef> parts = splitFactors(segment);
  if (parts.size() == 1) {
    Expected<SmallVector<StringRef>> items = splitTopLevel(segment, ',');
    if (!items)
      return items.takeError();
    if (llvm::all_of(*items, [](StringRef item) {
          return item.trim().empty() || startsHint(item);
        }))
      return std::nullopt;
  }
  auto column = [&](StringRef part) {
    return formatv("column {0}", base + (part.data() - segment.data()) + 1)
        .str();
  };
  SmallVector<HintFactor> factors;
  for (StringRef part : parts) {
    Expected<SmallVector<StringRef>> items = splitTopLevel(part, ',');
    if (!items)
      return hintError(
          formatv("{0}: {1}", column(part), toString(items.takeError())));
    HintFactor factor;
    for (auto [n, item] : enumerate(*items)) {
      StringRef trimmed = item.trim();
      if (trimmed.empty())
        return hintError(formatv("{0}: empty value in factor '{1}'",
                                 column(item), part.trim()));
      if (n == 0) {
        auto [key, value] = trimmed.split('=');
        if (key.size() == trimmed.size())
          return hintError(formatv("{0}: factor '{1}' names no hint; write "
                                   "name=value1,value2,...",
                                   column(trimmed), part.trim()));
        factor.key = key.trim().str();
        factor.keyOffset = base + (trimmed.data() - segment.data());
        factor.values.emplace_back(unquote(value),
                                   base + (value.data() - segment.data()));
        continue;
      }
      if (startsHint(trimmed))
        return hintError(formatv("{0}: '{1}' starts a second hint in one "
                                 "factor; join factors with ' x ' "
                                 "(waves_per_eu=1,2 x maxnreg=64,128)",
                                 column(trimmed), trimmed));
      factor.values.emplace_back(unquote(trimmed),
                                 base + (trimmed.data() - segment.data()));
    }
    factors.push_back(std::move(factor));
  }
  return std::optional<SmallVector<HintFactor>>(std::move(factors));
}

Expected<std::vector<HintSet>> parseHintSets(StringRef text) {
  std::vector<HintSet> sets;
  Expected<SmallVector<StringRef>> parts = splitTopLevel(text, ';');
  if (!parts)
    return parts.takeError();
  for (auto [index, part] : enumerate(*parts)) {
    size_t base = part.data() - text.data();
    Expected<std::optional<SmallVector<HintFactor>>> product =
        parseProduct(part, base);
    if (!product)
      return product.takeError();
    if (*product) {
      auto where = [](size_t offset) {
        return formatv("column {0}", offset + 1).str();
      };
      if (Error err = expandProduct(**product, sets.size(), where, sets))
        return std::move(err);
      continue;
    }
    Expected<HintSet> set = HintSet::parse(part);
    if (!set)
      return hintError(formatv("hint set #{0} ('{1}'): {2}", index, part.trim(),
                               toString(set.takeError())));
    sets.push_back(std::move(*set));
  }
  return sets;
}

namespace {
/// Finds where values are in JSON text that parsed: llvm::json keeps no
/// positions, and a bad value deserves its line and column.
class JSONLocator {
public:
  explicit JSONLocator(StringRef text) : text(text) {}

  /// The offset of element `index` of the array at `at`, or npos.
  size_t element(size_t at, size_t index) const {
    if (at >= text.size() || text[at] != '[')
      return StringRef::npos;
    size_t i = space(at + 1);
    for (size_t n = 0; n < index; ++n) {
      i = space(skip(i));
      if (i >= text.size() || text[i] != ',')
        return StringRef::npos;
      i = space(i + 1);
    }
    return i;
  }
  /// The offsets of key `key` of the object at `at` and of its value, or
  /// npos.
  std::pair<size_t, size_t> member(size_t at, StringRef key) const {
    constexpr std::pair<size_t, size_t> none{StringRef::npos, StringRef::npos};
    if (at >= text.size() || text[at] != '{')
      return none;
    size_t i = space(at + 1);
    while (i < text.size() && text[i] == '"') {
      size_t end = skip(i);
      json::Value name = json::parse(text.slice(i, end)).get();
      size_t value = space(end);
      if (value >= text.size() || text[value] != ':')
        return none;
      value = space(value + 1);
      if (name.getAsString() == key)
        return {i, value};
      i = space(skip(value));
      if (i >= text.size() || text[i] != ',')
        return none;
      i = space(i + 1);
    }
    return none;
  }
  size_t root() const { return space(0); }
  /// "line 3, column 7" of `offset` (1-based).
  std::string where(size_t offset) const {
    offset = std::min(offset, text.size());
    StringRef before = text.take_front(offset);
    size_t lineStart = before.rfind('\n');
    lineStart = lineStart == StringRef::npos ? 0 : lineStart + 1;
    return formatv("line {0}, column {1}", before.count('\n') + 1,
                   offset - lineStart + 1)
        .str();
  }

private:
  size_t space(size_t i) const {
    while (i < text.size() && isSpace(text[i]))
      ++i;
    return i;
  }
  /// Past the value (string, number, literal, array or object) at `i`.
  size_t skip(size_t i) const {
    int depth = 0;
    for (; i < text.size(); ++i) {
      char c = text[i];
      if (c == '"') {
        for (++i; i < text.size() && text[i] != '"'; ++i)
          if (text[i] == '\\')
            ++i;
        if (depth == 0)
          return i + 1;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        if (depth == 0)
          return i;
        if (--depth == 0)
          return i + 1;
      } else if (depth == 0 && (c == ',' || isSpace(c))) {
        return i;
      }
    }
    return i;
  }

  StringRef text;
};
} // namespace

/// A hint-set object whose values are lists is a product; its factors are
/// in the order the text has them (llvm::json::Object keeps none).
static Expected<std::optional<SmallVector<HintFactor>>>
productFromJSON(const json::Object &object, const JSONLocator &locator,
                size_t at) {
  if (llvm::none_of(object, [](const auto &member) {
        return member.second.getAsArray() != nullptr;
      }))
    return std::nullopt;
  SmallVector<HintFactor> factors;
  for (const auto &[key, value] : object) {
    auto [keyAt, valueAt] = locator.member(at, key);
    HintFactor factor;
    factor.key = StringRef(key).str();
    factor.keyOffset = keyAt;
    auto addValue = [&](const json::Value &v, size_t offset) -> Error {
      Expected<std::string> text = jsonHintText(factor.key, v);
      if (!text)
        return hintError(formatv("{0}: {1}", locator.where(offset),
                                 toString(text.takeError())));
      factor.values.emplace_back(std::move(*text), offset);
      return Error::success();
    };
    if (const json::Array *list = value.getAsArray()) {
      for (auto [n, v] : enumerate(*list))
        if (Error err = addValue(v, locator.element(valueAt, n)))
          return std::move(err);
    } else if (Error err = addValue(value, valueAt)) {
      return std::move(err);
    }
    factors.push_back(std::move(factor));
  }
  llvm::sort(factors, [](const HintFactor &a, const HintFactor &b) {
    return a.keyOffset < b.keyOffset;
  });
  return std::optional<SmallVector<HintFactor>>(std::move(factors));
}

Expected<std::vector<HintSet>> parseHintSetsJSON(StringRef json) {
  Expected<json::Value> root = parseJSONBounded(json, "");
  if (!root)
    return hintError("malformed hints JSON: " + toString(root.takeError()));
  JSONLocator locator(json);
  auto where = [&](size_t offset) { return locator.where(offset); };
  std::vector<HintSet> sets;
  // {"waves_per_eu": [1, 2], "maxnreg": [64, 128]}: one product.
  if (const json::Object *object = root->getAsObject()) {
    Expected<std::optional<SmallVector<HintFactor>>> product =
        productFromJSON(*object, locator, locator.root());
    if (!product)
      return product.takeError();
    if (!*product)
      return hintError("hints JSON must be a list of objects, e.g. "
                       "[{\"waves_per_eu\": 1}, {\"maxnreg\": 64}], or an "
                       "object of lists, e.g. {\"waves_per_eu\": [1, 2]}");
    if (Error err = expandProduct(**product, 0, where, sets))
      return std::move(err);
    return sets;
  }
  const json::Array *list = root->getAsArray();
  if (!list)
    return hintError("hints JSON must be a list of objects, e.g. "
                     "[{\"waves_per_eu\": 1}, {\"maxnreg\": 64}], or an "
                     "object of lists, e.g. {\"waves_per_eu\": [1, 2]}");
  for (auto [index, item] : enumerate(*list)) {
    if (const json::Object *object = item.getAsObject()) {
      Expected<std::optional<SmallVector<HintFactor>>> product =
          productFromJSON(*object, locator,
                          locator.element(locator.root(), index));
      if (!product)
        return hintError(formatv("hint set #{0}: {1}", index,
                                 toString(product.takeError())));
      if (*product) {
        if (Error err = expandProduct(**product, sets.size(), where, sets))
          return hintError(
              formatv("hint set #{0}: {1}", index, toString(std::move(err))));
        continue;
      }
    }
    Expected<HintSet> set = HintSet::fromJSON(item);
    if (!set)
      return hintError(
          formatv("hint set #{0}: {1}", index, toString(set.takeError())));
    sets.push_back(std::move(*set));
  }
  return sets;
}

uint64_t getMaxHintSets() {
  return getEnvUnsigned("FLY_MAX_HINT_SETS").value_or(kDefaultMaxHintSets);
}

Error checkHintSetCount(size_t count) {
  uint64_t max = getMaxHintSets();
  if (count <= max)
    return Error::success();
  return hintError(formatv("{0} hint sets are more than the {1} allowed: "
                           "split the sweep, or raise the limit with "
                           "FLY_MAX_HINT_SETS=<n> (default {2})",
                           count, max, kDefaultMaxHintSets));
}

static Error named(StringRef name, Error err) {
  if (name.empty())
    return err;
  return hintError(formatv("{0}: {1}", name, toString(std::move(err))));
}

Expected<std::vector<HintSet>> collectHintSets(const HintSetSources &sources) {
  std::vector<HintSet> sets;
  if (sources.text && sources.text->empty())
    sets.emplace_back();
  if (sources.text && !sources.text->empty()) {
    Expected<std::vector<HintSet>> parsed = parseHintSets(*sources.text);
    if (!parsed)
      return named(sources.textName, parsed.takeError());
    sets = std::move(*parsed);
  }
  if (!sources.file.empty()) {
    Expected<std::vector<HintSet>> parsed = readHintSetsFile(sources.file);
    if (!parsed)
      return named(sources.fileName, parsed.takeError());
    append_range(sets, *parsed);
  }
  if (!sources.json.empty()) {
    Expected<std::vector<HintSet>> parsed = parseHintSetsJSON(sources.json);
    if (!parsed)
      return named(sources.jsonName, parsed.takeError());
    append_range(sets, *parsed);
  }
  return sets;
}

Expected<std::vector<HintSet>> readHintSetsFile(StringRef path) {
  // A regular file of at most 256 MiB: a FIFO or /dev/zero neither hangs
  // nor exhausts memory.
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      readRegularFile(path, 256 << 20);
  if (!buffer)
    return hintError(formatv("hints file: {0}", toString(buffer.takeError())));
  Expected<std::vector<HintSet>> sets =
      parseHintSetsJSON((*buffer)->getBuffer());
  if (!sets)
    return hintError(formatv("{0}: {1}", path, toString(sets.takeError())));
  return sets;
}

} // namespace fly
