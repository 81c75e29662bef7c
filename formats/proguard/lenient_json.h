// A small reader for the JSON that R8 writes into mapping-file comments.
//
// R8 emits strict JSON (`{"id":"sourceFile","fileName":"Foo.kt"}`) but its specification and
// older versions also use a JavaScript-like form: single-quoted strings and bare keys, e.g.
// `{ id: 'com.android.tools.r8.mapping', version: '2.0' }`. This reader accepts both. It is
// bounded (nesting depth, input size by the caller's line) and never throws.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace restack::proguard {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;                       // kString; also the literal text of a kNumber
  std::vector<JsonValue> items;           // kArray
  std::vector<std::string> member_names;  // kObject keys, in order
  std::vector<JsonValue> member_values;   // kObject values, parallel to member_names

  // Member lookup for objects; nullptr when absent or not an object.
  const JsonValue* find(std::string_view key) const;
  // The string value of member `key`, or std::nullopt.
  std::optional<std::string> stringMember(std::string_view key) const;
};

// Parses one value spanning all of `text` (surrounding whitespace allowed). std::nullopt when
// the text is not a value in the accepted syntax.
std::optional<JsonValue> parseLenientJson(std::string_view text);

}  // namespace restack::proguard
