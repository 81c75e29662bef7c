#include "formats/sourcemap/mappings.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "formats/sourcemap/vlq.h"

namespace restack::sourcemap {
namespace {

Error segmentError(uint32_t line, uint32_t segment, const std::string& what) {
  return malformed("mappings: generated line " + std::to_string(line + 1) + ", segment " + std::to_string(segment + 1) +
                   ": " + what);
}

// Adds a signed delta to an unsigned running value; false when the result leaves [0, 2^31).
bool applyDelta(int64_t base, int64_t delta, int64_t* out) {
  const int64_t value = base + delta;
  if (value < 0 || value > 0x7fffffff) return false;
  *out = value;
  return true;
}

}  // namespace

Status decodeMappings(std::string_view mappings, const MappingLimits& limits,
                      const std::function<void(const Mapping&)>& sink) {
  // State carried across segments (all but the generated column carry across lines).
  int64_t source = 0, original_line = 0, original_column = 0, name = 0;
  uint32_t line = 0;
  std::vector<Mapping> line_segments;
  size_t pos = 0;

  auto flushLine = [&]() {
    const auto byColumn = [](const Mapping& a, const Mapping& b) { return a.generated_column < b.generated_column; };
    if (!std::is_sorted(line_segments.begin(), line_segments.end(), byColumn)) {
      // Ties keep a deterministic order (std::stable_sort's buffer API is deprecated here).
      std::sort(line_segments.begin(), line_segments.end(), [](const Mapping& a, const Mapping& b) {
        return std::tie(a.generated_column, a.source, a.original_line, a.original_column, a.name) <
               std::tie(b.generated_column, b.source, b.original_line, b.original_column, b.name);
      });
    }
    for (const Mapping& mapping : line_segments) sink(mapping);
    line_segments.clear();
  };

  while (pos <= mappings.size()) {
    int64_t column = 0;
    uint32_t segment_index = 0;
    // One generated line.
    while (pos < mappings.size() && mappings[pos] != ';') {
      if (mappings[pos] == ',') {  // empty segment (",,"): tolerated, as browsers do
        ++pos;
        continue;
      }
      int64_t fields[5] = {};
      int count = 0;
      while (count < 6) {
        int64_t value = 0;
        const VlqResult result = decodeVlq(mappings, &pos, &value);
        if (result == VlqResult::kEnd) break;
        if (result != VlqResult::kOk) return segmentError(line, segment_index, vlqResultText(result));
        if (count == 5) return segmentError(line, segment_index, "more than 5 fields");
        fields[count++] = value;
      }
      if (count == 2 || count == 3) {
        return segmentError(line, segment_index, std::to_string(count) + " fields (a segment has 1, 4 or 5)");
      }
      Mapping mapping;
      mapping.generated_line = line;
      if (!applyDelta(column, fields[0], &column)) {
        return segmentError(line, segment_index, "generated column out of range");
      }
      mapping.generated_column = static_cast<uint32_t>(column);
      if (count >= 4) {
        const int64_t next_source = source + fields[1];
        if (next_source < 0 || next_source >= limits.source_count) {
          return segmentError(line, segment_index,
                              "source index " + std::to_string(next_source) + " outside the " +
                                  std::to_string(limits.source_count) + " entries of \"sources\"");
        }
        source = next_source;
        if (!applyDelta(original_line, fields[2], &original_line)) {
          return segmentError(line, segment_index, "original line out of range");
        }
        if (!applyDelta(original_column, fields[3], &original_column)) {
          return segmentError(line, segment_index, "original column out of range");
        }
        mapping.source = static_cast<int32_t>(source);
        mapping.original_line = static_cast<uint32_t>(original_line);
        mapping.original_column = static_cast<uint32_t>(original_column);
        if (count == 5) {
          const int64_t next_name = name + fields[4];
          if (next_name < 0 || next_name >= limits.name_count) {
            return segmentError(line, segment_index,
                                "name index " + std::to_string(next_name) + " outside the " +
                                    std::to_string(limits.name_count) + " entries of \"names\"");
          }
          name = next_name;
          mapping.name = static_cast<int32_t>(name);
        }
      }
      if (line_segments.size() >= limits.max_segments_per_line) {
        return segmentError(line, segment_index, "too many segments on one generated line");
      }
      line_segments.push_back(mapping);
      ++segment_index;
      if (pos < mappings.size() && mappings[pos] == ',') ++pos;
    }
    flushLine();
    if (pos >= mappings.size()) break;
    ++pos;  // ';'
    if (line == 0x7fffffff) return malformed("mappings: more than 2^31 generated lines");
    ++line;
  }
  return Status::ok();
}

}  // namespace restack::sourcemap
