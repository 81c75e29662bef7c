// Small helpers for hand-written line parsers: trimming and number scanning over string_view.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace restack::stack::scan {

inline bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
inline bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
inline bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

inline std::string_view trim(std::string_view text) {
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  return text;
}

inline std::string_view trimLeft(std::string_view text) {
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  return text;
}

// Consumes a token up to the next whitespace.
inline std::string_view takeToken(std::string_view& text) {
  text = trimLeft(text);
  size_t end = 0;
  while (end < text.size() && !isSpace(text[end])) ++end;
  std::string_view token = text.substr(0, end);
  text.remove_prefix(end);
  return token;
}

// Parses all of `text` as a decimal number (no sign); nullopt on overflow or non-digits.
inline std::optional<uint64_t> parseDecimal(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (!isDigit(c)) return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// Parses all of `text` as hexadecimal, with or without a "0x" prefix; at most 16 digits.
inline std::optional<uint64_t> parseHex(std::string_view text) {
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    uint64_t digit;
    if (isDigit(c))
      digit = static_cast<uint64_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      digit = static_cast<uint64_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      digit = static_cast<uint64_t>(c - 'A' + 10);
    else
      return std::nullopt;
    value = (value << 4) | digit;
  }
  return value;
}

inline std::optional<uint32_t> parseU32(std::string_view text) {
  auto value = parseDecimal(text);
  if (!value || *value > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*value);
}

inline std::string_view basename(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace restack::stack::scan
