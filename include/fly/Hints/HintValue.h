//===- HintValue.h - One hint's checked, typed value ------------*- C++ -*-===//
//
// What a hint's value is once its spec (HintRegistry.h) has checked it: an
// integer, a boolean, an MLIR attribute literal or a string. Consumers read
// it typed and never parse its text again. An attribute literal stays text
// here (hint sets are parsed without an MLIRContext); applying the hint
// parses it once, where the context is.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_HINTS_HINTVALUE_H
#define FLY_HINTS_HINTVALUE_H

#include "llvm/ADT/StringRef.h"

#include <cassert>
#include <cstdint>
#include <string>

namespace fly {

/// The type of a hint's value.
enum class HintType { Int, Bool, Attribute, String };

class HintValue {
public:
  static HintValue ofInt(int64_t value) {
    return HintValue(HintType::Int, value, std::to_string(value));
  }
  static HintValue ofBool(bool value) {
    return HintValue(HintType::Bool, value ? 1 : 0, value ? "1" : "0");
  }
  /// An MLIR attribute literal (`42 : i32`, `array<i32: 64, 1, 1>`).
  static HintValue ofAttribute(std::string literal) {
    return HintValue(HintType::Attribute, 0, std::move(literal));
  }
  static HintValue ofString(std::string text) {
    return HintValue(HintType::String, 0, std::move(text));
  }

  HintType getType() const { return type; }
  int64_t getInt() const {
    assert(type == HintType::Int && "not an integer hint");
    return integer;
  }
  bool getBool() const {
    assert(type == HintType::Bool && "not a boolean hint");
    return integer != 0;
  }
  /// The attribute literal or the string.
  llvm::StringRef getText() const {
    assert((type == HintType::Attribute || type == HintType::String) &&
           "not a text hint");
    return text;
  }
  /// The canonical spelling: decimal, `0`/`1`, or the text.
  llvm::StringRef canonical() const { return text; }

  bool operator==(const HintValue &other) const {
    return type == other.type && integer == other.integer && text == other.text;
  }

private:
  HintValue(HintType type, int64_t integer, std::string text)
      : type(type), integer(integer), text(std::move(text)) {}

  HintType type;
  int64_t integer;
  std::string text; // The canonical spelling, whatever the type.
};

} // namespace fly

#endif // FLY_HINTS_HINTVALUE_H
