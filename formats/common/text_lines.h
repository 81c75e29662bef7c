// Splitting text into lines without copying: "\n" and "\r\n" both end a line.
#pragma once

#include <string_view>
#include <vector>

namespace restack {

// "a\r\nb\n" -> {"a", "b", ""}: every line, the empty one after a final newline included.
inline std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

}  // namespace restack
