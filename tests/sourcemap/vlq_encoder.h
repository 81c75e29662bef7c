// A test-only VLQ encoder (the library only decodes), written from the spec's bit layout, so
// that tests build mappings whose meaning they know.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace restack::sourcemap::test {

inline std::string encodeVlq(int64_t value) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint64_t rest = value < 0 ? ((static_cast<uint64_t>(-value) << 1) | 1) : (static_cast<uint64_t>(value) << 1);
  std::string out;
  do {
    uint64_t digit = rest & 31;
    rest >>= 5;
    if (rest) digit |= 32;
    out.push_back(kAlphabet[digit]);
  } while (rest);
  return out;
}

// One segment: generated column, source (-1 = 1-field segment), original line, column, name.
struct TestSegment {
  int64_t column, source, line, original_column, name;
};

// Lines of absolute segments -> the relative "mappings" encoding.
inline std::string encodeMappings(const std::vector<std::vector<TestSegment>>& lines) {
  std::string out;
  int64_t source = 0, line = 0, column = 0, name = 0;
  for (size_t l = 0; l < lines.size(); ++l) {
    if (l) out.push_back(';');
    int64_t generated = 0;
    for (size_t s = 0; s < lines[l].size(); ++s) {
      const TestSegment& seg = lines[l][s];
      if (s) out.push_back(',');
      out += encodeVlq(seg.column - generated);
      generated = seg.column;
      if (seg.source < 0) continue;
      out += encodeVlq(seg.source - source) + encodeVlq(seg.line - line) + encodeVlq(seg.original_column - column);
      source = seg.source;
      line = seg.line;
      column = seg.original_column;
      if (seg.name >= 0) {
        out += encodeVlq(seg.name - name);
        name = seg.name;
      }
    }
  }
  return out;
}

}  // namespace restack::sourcemap::test
