#include "formats/proguard/lenient_json.h"

#include <cstdlib>

namespace restack::proguard {
namespace {

constexpr int kMaxDepth = 32;

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  std::optional<JsonValue> parseDocument() {
    auto value = parseValue(0);
    if (!value) return std::nullopt;
    skipSpace();
    if (pos_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r' || text_[pos_] == '\n')) {
      ++pos_;
    }
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static bool isBareChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '.' || c == '-' || c == '+';
  }

  std::optional<std::string> parseString() {
    char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == quote) return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return std::nullopt;
      char escaped = text_[pos_++];
      switch (escaped) {
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return std::nullopt;
          uint32_t code = 0;
          for (int i = 0; i < 4; ++i) {
            char h = text_[pos_++];
            code <<= 4;
            if (h >= '0' && h <= '9')
              code |= static_cast<uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f')
              code |= static_cast<uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
              code |= static_cast<uint32_t>(h - 'A' + 10);
            else
              return std::nullopt;
          }
          // UTF-8 encode the BMP code point (surrogates are kept as-is; names never need them).
          if (code < 0x80) {
            out.push_back(static_cast<char>(code));
          } else if (code < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (code >> 6)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
          } else {
            out.push_back(static_cast<char>(0xE0 | (code >> 12)));
            out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
          }
          break;
        }
        default:
          out.push_back(escaped);
          break;  // \" \' \\ \/
      }
    }
    return std::nullopt;
  }

  // A bare word: a key (`id`), a number, true/false/null.
  std::string_view parseBare() {
    size_t start = pos_;
    while (pos_ < text_.size() && isBareChar(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  std::optional<std::string> parseKey() {
    skipSpace();
    if (pos_ >= text_.size()) return std::nullopt;
    if (text_[pos_] == '"' || text_[pos_] == '\'') return parseString();
    std::string_view bare = parseBare();
    if (bare.empty()) return std::nullopt;
    return std::string(bare);
  }

  std::optional<JsonValue> parseValue(int depth) {
    if (depth > kMaxDepth) return std::nullopt;
    skipSpace();
    if (pos_ >= text_.size()) return std::nullopt;
    JsonValue value;
    char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      value.kind = JsonValue::Kind::kObject;
      if (consume('}')) return value;
      while (true) {
        auto key = parseKey();
        if (!key || !consume(':')) return std::nullopt;
        auto member = parseValue(depth + 1);
        if (!member) return std::nullopt;
        value.member_names.push_back(std::move(*key));
        value.member_values.push_back(std::move(*member));
        if (consume(',')) {
          if (consume('}')) return value;  // trailing comma
          continue;
        }
        if (consume('}')) return value;
        return std::nullopt;
      }
    }
    if (c == '[') {
      ++pos_;
      value.kind = JsonValue::Kind::kArray;
      if (consume(']')) return value;
      while (true) {
        auto item = parseValue(depth + 1);
        if (!item) return std::nullopt;
        value.items.push_back(std::move(*item));
        if (consume(',')) {
          if (consume(']')) return value;
          continue;
        }
        if (consume(']')) return value;
        return std::nullopt;
      }
    }
    if (c == '"' || c == '\'') {
      auto text = parseString();
      if (!text) return std::nullopt;
      value.kind = JsonValue::Kind::kString;
      value.text = std::move(*text);
      return value;
    }
    std::string_view bare = parseBare();
    if (bare.empty()) return std::nullopt;
    if (bare == "true" || bare == "false") {
      value.kind = JsonValue::Kind::kBool;
      value.boolean = bare == "true";
      return value;
    }
    if (bare == "null") return value;
    std::string literal(bare);
    char* end = nullptr;
    double number = std::strtod(literal.c_str(), &end);
    if (end != literal.c_str() + literal.size()) return std::nullopt;
    value.kind = JsonValue::Kind::kNumber;
    value.number = number;
    value.text = std::move(literal);
    return value;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  if (kind != Kind::kObject) return nullptr;
  for (size_t i = 0; i < member_names.size(); ++i) {
    if (member_names[i] == key) return &member_values[i];
  }
  return nullptr;
}

std::optional<std::string> JsonValue::stringMember(std::string_view key) const {
  const JsonValue* value = find(key);
  if (value == nullptr || value->kind != Kind::kString) return std::nullopt;
  return value->text;
}

std::optional<JsonValue> parseLenientJson(std::string_view text) {
  return Reader(text).parseDocument();
}

}  // namespace restack::proguard
