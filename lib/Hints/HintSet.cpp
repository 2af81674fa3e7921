//===- HintSet.cpp - One set of backend hints -----------------------------===//

#include "fly/Hints/HintSet.h"
#include "fly/Hints/HintSetLimit.h"

#include "fly/Support/BoundedJSON.h"
#include "fly/Support/Environment.h"
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

Expected<HintSet> HintSet::fromJSON(const json::Value &value) {
  const json::Object *obj = value.getAsObject();
  if (!obj)
    return hintError("a hint set must be a JSON object such as "
                     "{\"waves_per_eu\": 2}");
  HintSet set;
  for (const auto &[key, v] : *obj) {
    std::string text;
    if (std::optional<int64_t> i = v.getAsInteger())
      text = std::to_string(*i);
    else if (std::optional<bool> b = v.getAsBoolean()) {
      // true is no integer: {"maxnreg": true} is a mistake, not maxnreg=1.
      std::optional<HintName> name = splitHintName(key);
      const HintSpec *spec = name ? findHintSpec(name->base) : nullptr;
      if (spec && spec->type == HintType::Int)
        return hintError(formatv("hint '{0}' takes an integer, not the "
                                 "boolean {1}",
                                 StringRef(key), *b ? "true" : "false"));
      text = *b ? "1" : "0";
    } else if (std::optional<StringRef> s = v.getAsString())
      text = s->str();
    else
      return hintError(formatv("hint '{0}' must be an integer, boolean or "
                               "string in JSON",
                               StringRef(key)));
    if (Error err = set.add(key, text))
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

Expected<std::vector<HintSet>> parseHintSets(StringRef text) {
  std::vector<HintSet> sets;
  Expected<SmallVector<StringRef>> parts = splitTopLevel(text, ';');
  if (!parts)
    return parts.takeError();
  for (auto [index, part] : enumerate(*parts)) {
    Expected<HintSet> set = HintSet::parse(part);
    if (!set)
      return hintError(formatv("hint set #{0} ('{1}'): {2}", index, part.trim(),
                               toString(set.takeError())));
    sets.push_back(std::move(*set));
  }
  return sets;
}

Expected<std::vector<HintSet>> parseHintSetsJSON(StringRef json) {
  Expected<json::Value> root = parseJSONBounded(json, "");
  if (!root)
    return hintError("malformed hints JSON: " + toString(root.takeError()));
  const json::Array *list = root->getAsArray();
  if (!list)
    return hintError("hints JSON must be a list of objects, e.g. "
                     "[{\"waves_per_eu\": 1}, {\"maxnreg\": 64}]");
  std::vector<HintSet> sets;
  for (auto [index, item] : enumerate(*list)) {
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
