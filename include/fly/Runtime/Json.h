//===- Json.h - A small JSON value, parser and writer -----------*- C++ -*-===//
//
// The runtime layer must not link LLVM (it runs on GPU machines that have no
// LLVM), so it cannot use llvm::json. This is just enough JSON for manifests,
// launch specs and result files: objects keep their key order, numbers are
// doubles that remember whether they were written as integers.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_JSON_H
#define FLY_RUNTIME_JSON_H

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fly::rt::json {

class Value {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  using Array = std::vector<Value>;
  using Object = std::vector<std::pair<std::string, Value>>;

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : kind_(Kind::Bool), bool_(b) {}
  template <typename T,
            typename = std::enable_if_t<std::is_integral_v<T> &&
                                        !std::is_same_v<T, bool>>>
  Value(T v)
      : kind_(Kind::Number), isInteger_(true),
        number_(static_cast<double>(v)), integer_(static_cast<int64_t>(v)) {}
  Value(double d) : kind_(Kind::Number), number_(d) {}
  Value(const char *s) : kind_(Kind::String), string_(s) {}
  Value(std::string s) : kind_(Kind::String), string_(std::move(s)) {}
  Value(Array a) : kind_(Kind::Array), array_(std::move(a)) {}
  Value(Object o) : kind_(Kind::Object), object_(std::move(o)) {}

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isNumber() const { return kind_ == Kind::Number; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }
  /// A number with no fraction that fits int64 (1, 2.0, 1e3 are; 1.5 is not).
  bool isInteger() const;

  bool asBool() const { return bool_; }
  double asNumber() const { return number_; }
  int64_t asInteger() const { return isInteger_ ? integer_ : static_cast<int64_t>(number_); }
  const std::string &asString() const { return string_; }
  const Array &asArray() const { return array_; }
  Array &asArray() { return array_; }
  const Object &asObject() const { return object_; }
  Object &asObject() { return object_; }

  /// Object lookup; null when absent or not an object.
  const Value *get(const std::string &key) const;
  /// Object insert-or-assign (turns a null into an object).
  Value &operator[](const std::string &key);
  void push(Value v) { array_.push_back(std::move(v)); }

  /// "null", "a boolean", "a number", ... for error messages.
  static const char *kindName(Kind kind);

private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  bool isInteger_ = false;
  double number_ = 0;
  int64_t integer_ = 0;
  std::string string_;
  Array array_;
  Object object_;
};

/// Parses `text`; on failure returns false and sets `error` to
/// "<line>:<column>: <what>".
bool parse(const std::string &text, Value &out, std::string &error);

/// Writes `value`; indent 0 gives one line.
std::string write(const Value &value, int indent = 2);

} // namespace fly::rt::json

#endif // FLY_RUNTIME_JSON_H
