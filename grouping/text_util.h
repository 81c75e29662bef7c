// Small string helpers shared by the grouping normalizers (internal to grouping/).
#pragma once

#include <string>
#include <string_view>

namespace restack::grouping::text {

inline bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
inline bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool isIdentChar(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
inline bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

inline bool allDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!isDigit(c)) return false;
  }
  return true;
}

// Replaces every occurrence of `from` by `to`; returns whether anything changed.
inline bool replaceAll(std::string& s, std::string_view from, std::string_view to) {
  bool changed = false;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
    changed = true;
  }
  return changed;
}

// Strips a trailing run of "<sep><digits>" groups ("$0", "-1"); returns whether it changed.
inline bool stripTrailingNumbers(std::string& s, std::string_view separators) {
  bool changed = false;
  for (;;) {
    size_t end = s.size();
    size_t start = end;
    while (start > 0 && isDigit(s[start - 1])) --start;
    if (start == end || start == 0 || separators.find(s[start - 1]) == std::string_view::npos || start - 1 == 0) {
      return changed;
    }
    s.resize(start - 1);
    changed = true;
  }
}

}  // namespace restack::grouping::text
