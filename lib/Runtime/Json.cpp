//===- Json.cpp - A small JSON value, parser and writer -------------------===//

#include "fly/Runtime/Json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fly::rt::json {

bool Value::isInteger() const {
  if (kind_ != Kind::Number)
    return false;
  if (isInteger_)
    return true;
  return std::isfinite(number_) && std::floor(number_) == number_ &&
         std::fabs(number_) < 9.2e18;
}

const Value *Value::get(const std::string &key) const {
  if (kind_ != Kind::Object)
    return nullptr;
  for (const auto &[k, v] : object_)
    if (k == key)
      return &v;
  return nullptr;
}

Value &Value::operator[](const std::string &key) {
  if (kind_ == Kind::Null)
    kind_ = Kind::Object;
  for (auto &[k, v] : object_)
    if (k == key)
      return v;
  object_.emplace_back(key, Value());
  return object_.back().second;
}

const char *Value::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "?";
}

namespace {
class Parser {
public:
  explicit Parser(const std::string &text) : text_(text) {}

  bool parseDocument(Value &out, std::string &error) {
    skipSpace();
    if (!parseValue(out, 0))
      return fail(error);
    skipSpace();
    if (pos_ != text_.size()) {
      setError("unexpected text after the JSON value");
      return fail(error);
    }
    return true;
  }

private:
  const std::string &text_;
  size_t pos_ = 0;
  std::string what_;
  size_t errorPos_ = 0;

  bool fail(std::string &error) {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < errorPos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n')
        ++line, column = 1;
      else
        ++column;
    }
    error = std::to_string(line) + ":" + std::to_string(column) + ": " + what_;
    return false;
  }
  bool setError(const std::string &what) {
    if (what_.empty()) {
      what_ = what;
      errorPos_ = pos_;
    }
    return false;
  }
  void skipSpace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        ++pos_;
      else
        break;
    }
  }
  bool literal(const char *word) {
    size_t n = 0;
    while (word[n])
      ++n;
    if (text_.compare(pos_, n, word) != 0)
      return false;
    pos_ += n;
    return true;
  }

  bool parseValue(Value &out, int depth) {
    if (depth > 200)
      return setError("nesting too deep");
    skipSpace();
    if (pos_ >= text_.size())
      return setError("unexpected end of input, expected a value");
    char c = text_[pos_];
    if (c == '{')
      return parseObject(out, depth);
    if (c == '[')
      return parseArray(out, depth);
    if (c == '"') {
      std::string s;
      if (!parseString(s))
        return false;
      out = Value(std::move(s));
      return true;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    if (literal("true")) {
      out = Value(true);
      return true;
    }
    if (literal("false")) {
      out = Value(false);
      return true;
    }
    if (literal("null")) {
      out = Value();
      return true;
    }
    return setError(std::string("unexpected character '") + c +
                    "', expected a value");
  }

  bool parseNumber(Value &out) {
    size_t start = pos_;
    bool integral = true;
    if (text_[pos_] == '-')
      ++pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
        ++pos_;
      return pos_ > from;
    };
    if (!digits())
      return setError("malformed number");
    if (pos_ < text_.size() && text_[pos_] == '.') {
      integral = false;
      ++pos_;
      if (!digits())
        return setError("malformed number: digits expected after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      if (!digits())
        return setError("malformed number: digits expected in the exponent");
    }
    std::string token = text_.substr(start, pos_ - start);
    if (integral) {
      errno = 0;
      char *end = nullptr;
      long long v = std::strtoll(token.c_str(), &end, 10);
      if (errno == 0) {
        out = Value(static_cast<int64_t>(v));
        return true;
      }
    }
    out = Value(std::strtod(token.c_str(), nullptr));
    return true;
  }

  static void appendUtf8(std::string &s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(uint32_t &out) {
    if (pos_ + 4 > text_.size())
      return setError("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= c - '0';
      else if (c >= 'a' && c <= 'f')
        out |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        out |= c - 'A' + 10;
      else
        return setError("bad hex digit in \\u escape");
    }
    return true;
  }

  bool parseString(std::string &out) {
    ++pos_; // opening quote
    while (true) {
      if (pos_ >= text_.size())
        return setError("unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        return setError("control character in string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size())
        return setError("unterminated string");
      char e = text_[pos_++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp < 0xDC00 && text_.compare(pos_, 2, "\\u") == 0) {
          pos_ += 2;
          uint32_t low;
          if (!hex4(low))
            return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --pos_;
        return setError(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  bool parseArray(Value &out, int depth) {
    ++pos_;
    Value::Array items;
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      out = Value(std::move(items));
      return true;
    }
    while (true) {
      Value item;
      if (!parseValue(item, depth + 1))
        return false;
      items.push_back(std::move(item));
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        out = Value(std::move(items));
        return true;
      }
      return setError("expected ',' or ']' in array");
    }
  }

  bool parseObject(Value &out, int depth) {
    ++pos_;
    Value::Object members;
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      out = Value(std::move(members));
      return true;
    }
    while (true) {
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"')
        return setError("expected a string key in object");
      std::string key;
      if (!parseString(key))
        return false;
      for (const auto &member : members)
        if (member.first == key)
          return setError("duplicate key \"" + key + "\"");
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return setError("expected ':' after object key");
      ++pos_;
      Value item;
      if (!parseValue(item, depth + 1))
        return false;
      members.emplace_back(std::move(key), std::move(item));
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        out = Value(std::move(members));
        return true;
      }
      return setError("expected ',' or '}' in object");
    }
  }
};

void writeString(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  out += '"';
}

void writeValue(std::string &out, const Value &v, int indent, int level) {
  auto newline = [&](int lvl) {
    if (indent <= 0)
      return;
    out += '\n';
    out.append(static_cast<size_t>(indent * lvl), ' ');
  };
  switch (v.kind()) {
  case Value::Kind::Null:
    out += "null";
    return;
  case Value::Kind::Bool:
    out += v.asBool() ? "true" : "false";
    return;
  case Value::Kind::Number: {
    if (v.isInteger()) {
      out += std::to_string(v.asInteger());
      return;
    }
    double d = v.asNumber();
    if (!std::isfinite(d)) {
      out += "null";
      return;
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    // Prefer the shortest form that reads back the same.
    for (int precision = 6; precision < 17; ++precision) {
      char shortBuf[40];
      std::snprintf(shortBuf, sizeof shortBuf, "%.*g", precision, d);
      if (std::strtod(shortBuf, nullptr) == d) {
        out += shortBuf;
        return;
      }
    }
    out += buf;
    return;
  }
  case Value::Kind::String:
    writeString(out, v.asString());
    return;
  case Value::Kind::Array: {
    const auto &items = v.asArray();
    if (items.empty()) {
      out += "[]";
      return;
    }
    // Arrays of scalars stay on one line.
    bool flat = true;
    for (const Value &item : items)
      flat &= !item.isArray() && !item.isObject();
    out += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i)
        out += flat && indent > 0 ? ", " : ",";
      if (!flat)
        newline(level + 1);
      writeValue(out, items[i], indent, level + 1);
    }
    if (!flat)
      newline(level);
    out += ']';
    return;
  }
  case Value::Kind::Object: {
    const auto &members = v.asObject();
    if (members.empty()) {
      out += "{}";
      return;
    }
    out += '{';
    for (size_t i = 0; i < members.size(); ++i) {
      if (i)
        out += ',';
      newline(level + 1);
      writeString(out, members[i].first);
      out += indent > 0 ? ": " : ":";
      writeValue(out, members[i].second, indent, level + 1);
    }
    newline(level);
    out += '}';
    return;
  }
  }
}
} // namespace

bool parse(const std::string &text, Value &out, std::string &error) {
  Parser parser(text);
  return parser.parseDocument(out, error);
}

std::string write(const Value &value, int indent) {
  std::string out;
  writeValue(out, value, indent, 0);
  return out;
}

} // namespace fly::rt::json
