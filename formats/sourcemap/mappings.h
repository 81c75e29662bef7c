// Decoding of the source map v3 "mappings" string into absolute positions.
//
// Format: generated lines are separated by ';', segments within a line by ','. A segment has
// 1, 4 or 5 VLQ fields (see vlq.h), each relative to the same field of the previous segment:
//   [generated column, source index, original line, original column, name index]
// The generated column restarts at 0 on every line; the other four carry over across lines.
// Worked example: "AAAA,IAAI;EACA" decodes to
//   line 0 col 0 -> source 0, line 0, col 0
//   line 0 col 4 -> source 0, line 0, col 4
//   line 1 col 2 -> source 0, line 1, col 4   (E = +2 column, A = same source, C = +1 line, A)
// All positions here are 0-based, as in the file.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "formats/common/status.h"

namespace restack::sourcemap {

struct Mapping {
  uint32_t generated_line = 0;
  uint32_t generated_column = 0;
  int32_t source = -1;  // -1: a 1-field segment (generated code with no original)
  uint32_t original_line = 0;
  uint32_t original_column = 0;
  int32_t name = -1;  // -1: no name
};

struct MappingLimits {
  uint32_t source_count = 0;  // source indexes must be below this
  uint32_t name_count = 0;    // name indexes must be below this
  // Refuse more segments than this on one generated line (a corrupt or hostile map would
  // otherwise make the per-line sort buffer unbounded). Default 64 Mi.
  uint64_t max_segments_per_line = 64ull << 20;
};

// Decodes `mappings`, calling `sink` for every segment in generated order: lines ascending, and
// columns ascending within a line (segments of a line that a tool wrote out of order are sorted,
// as browsers and the `source-map` package do). Fails on bad VLQ, out-of-range indexes,
// negative positions and segments of 2 or 3 fields, naming the line and segment.
Status decodeMappings(std::string_view mappings, const MappingLimits& limits,
                      const std::function<void(const Mapping&)>& sink);

}  // namespace restack::sourcemap
