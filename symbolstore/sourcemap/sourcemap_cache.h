// The in-memory cache of SourcemapResolver, shaped so that a warm lookup is one hash probe and
// two binary searches under one shared lock, and copies no source text:
//
//   routes    hash(app, build, served name) -> Route: which map serves a frame's file name (or
//             that none does), the RAM-bundle module's first line, and the map's MapState
//   MapState  one per map id: the map header and the chunks read so far, sorted by position
//   CachedChunk  one decoded chunk record (up to 256 segments) plus, per segment, its resolved
//             answer (source record, enclosing function, context lines) — filled the first time
//             the segment is looked up, then reused by every later frame at that segment; the
//             answers themselves are shared by all segments of the same original line
//
// Context lines are slices of the cached 32-line text blocks (ContextLines in frame_lookup.h),
// so an answer shares them instead of copying five strings. Each thread also remembers the route
// of its last frame's URL (LastRoute in sourcemap_resolver.cc), so frames of one bundle skip the
// route probe.
//
// Worked example: frame "at n (https://cdn/x/app.3f9a.js:1:1234)" of app "shop" (web):
//   routes[hash("shop", "", "app.3f9a.js")] -> Route{map 0x51…, offset 0, state S}
//   S.chunk_starts = [(0,0), (0,1190), …] -> the slot of the chunk starting at (0,1190) covers
//   (0,1233); its column buckets narrow the search to segments 6..9 -> segment 7 at (0,1230)
//   -> entries[7].answer = {src/app.js, "render", lines 40-44 of the cached text block}
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "symbolstore/frame_lookup.h"
#include "symbolstore/sourcemap/sourcemap_records.h"

namespace restack::sourcemap_cache {

using sourcemap_records::MapHeader;
using sourcemap_records::MappingChunk;
using sourcemap_records::SourceRecord;

// `condition ? a : b` for a condition that is a coin toss on a spread of frames (the steps of a binary search):
// compiled to a conditional move, which clang otherwise turns into a branch that mispredicts every other step.
template <typename T>
inline T unpredictableSelect(bool condition, T a, T b) {
#if defined(__clang__)
  return __builtin_unpredictable(condition) ? a : b;
#else
  return condition ? a : b;
#endif
}

// std::upper_bound over the `count` sorted keys at `first`, choosing each step with
// unpredictableSelect: on a spread of frames every comparison is a coin toss.
inline const uint64_t* unpredictableUpperBound(const uint64_t* first, size_t count, uint64_t key) {
  if (count == 0) return first;
  while (count > 1) {
    const size_t half = count / 2;
    first = unpredictableSelect(first[half] <= key, first + half, first);
    count -= half;
  }
  return first + (*first <= key ? 1 : 0);
}

// unpredictableUpperBound for 1 <= count < 2^kSteps keys in kSteps steps whatever the count, with
// no branch: a loop's number of steps follows the count, which varies from frame to frame, so its
// exit mispredicts about once a search.
template <size_t kSteps>
inline const uint64_t* fixedStepUpperBound(const uint64_t* first, size_t count, uint64_t key) {
  size_t below = 0;  // first[0, below) are all <= key
  for (size_t step = size_t{1} << (kSteps - 1); step > 0; step /= 2) {
    const size_t probe = below + step;
    const bool inside = probe <= count;
    const uint64_t at = first[inside ? probe - 1 : count - 1];  // in bounds whether or not it counts
    below = unpredictableSelect(inside && at <= key, probe, below);
  }
  return first + below;
}

inline uint64_t positionKey(uint32_t line, uint32_t column) {
  return (static_cast<uint64_t>(line) << 32) | column;
}

// What a mapped segment restores to, shared by every segment of the map with the same source,
// original line and enclosing function. Built the first time one of them is looked up.
struct ResolvedAnswer {
  // What every warm frame reads comes first (answerInto in sourcemap_resolver.cc), within 96 bytes
  // of the answer's start: with the reference counts that std::make_shared puts just before it,
  // two or three cache lines, all fetched ahead (warmGroup). A frame borrows the path, the
  // function name, the module name and the context lines, kept alive by its one reference to the
  // answer (SymbolizedFrame::pin in symbolstore/frame_lookup.h), without reading their bytes.
  const std::string* path = nullptr;      // &source->path
  const std::string* tier = nullptr;      // "function_map" (Metro's function map) or "sourcemap"
  const std::string* function = nullptr;  // into source->functions.names; null: keep the printed name
  // The original column (0-based) when the map's own is only the line's start: a line-only
  // mapping refined by where the segment's name stands in the source line (refineLineOnly).
  uint32_t column = kNoColumn;
  static constexpr uint32_t kNoColumn = UINT32_MAX;
  // Context: lines [first, first + count) of `head`, then [0, tail_count) of `tail` (cached text
  // blocks, or `owned` when the window spans more than two blocks).
  uint32_t first = 0, count = 0, tail_count = 0;
  uint32_t context_first_line = 0;
  bool ignored = false;            // source->ignored
  bool function_inferred = false;  // `function` is V8's inferred name (FunctionMap::inferred)
  bool computed_key = false;       // `function` holds "<computed>": the frame's printed key fills it in
  std::shared_ptr<const std::vector<std::string>> head, tail;
  // The served file name (Route::name) of the route the answer was resolved through: a warm frame
  // through that same route borrows it as its module instead of copying or sharing it (one name
  // per map almost always; a frame through another route's name copies its own).
  std::shared_ptr<const std::string> module;

  std::string function_name;  // a copy of *function
  std::shared_ptr<const SourceRecord> source;
  std::string note;  // the answer's note when `function` is null, built once
  std::vector<std::string> owned;
};

// Fetches the memory of `answer` that answerInto reads and writes: the reference counts that
// std::make_shared puts just before it (16 bytes in libstdc++), written by the frame's pin, and its
// first 96 bytes. The three addresses lie less than a cache line apart, so every line of those 112
// bytes is fetched wherever they start.
inline void prefetchAnswer(const ResolvedAnswer* answer) {
  const char* at = reinterpret_cast<const char*>(answer);
  __builtin_prefetch(at - 16, 1);
  __builtin_prefetch(at + 40);
  __builtin_prefetch(at + 95);
}

struct SegmentEntry {
  int32_t source = -1;                              // -1: unmapped
  uint32_t original_line = 0, original_column = 0;  // 0-based
  int32_t name = -1;  // the segment's original identifier: index into CachedChunk::names; -1 none
  std::shared_ptr<const ResolvedAnswer> answer;  // null until resolved
};

// UTF-16 code units of UTF-8 `text` (source-map columns count them).
inline uint32_t utf16Length(std::string_view text) {
  uint32_t units = 0;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte & 0xC0) != 0x80) ++units;  // a character's first byte
    if (byte >= 0xF0) ++units;           // four bytes: a surrogate pair
  }
  return units;
}

// One decoded chunk record: segment positions and entries, owned here and searched through the
// map's ChunkSlot.
struct CachedChunk {
  uint32_t start_line = 0, start_column = 0, end_line = 0, end_column = 0;
  std::vector<uint64_t> positions;    // positionKey of every segment, ascending
  std::vector<SegmentEntry> entries;  // parallel to positions
  std::vector<std::string> names;     // the original identifiers the chunk's segments name

  explicit CachedChunk(const MappingChunk& decoded)
      : start_line(decoded.start_line),
        start_column(decoded.start_column),
        end_line(decoded.end_line),
        end_column(decoded.end_column),
        names(decoded.names) {
    positions.reserve(decoded.segments.size());
    entries.reserve(decoded.segments.size());
    for (const auto& segment : decoded.segments) {
      positions.push_back(positionKey(segment.line, segment.column));
      const bool named = segment.name >= 0 && static_cast<size_t>(segment.name) < decoded.names.size();
      entries.push_back(
          {segment.source, segment.original_line, segment.original_column, named ? segment.name : -1, nullptr});
    }
  }
  size_t bytes() const {
    size_t total = sizeof(CachedChunk) + positions.size() * (sizeof(uint64_t) + sizeof(SegmentEntry));
    for (const std::string& name : names) total += sizeof(std::string) + name.size();
    return total;
  }
  // UTF-16 length of the original identifier segment `index` names; 0 without one.
  uint32_t nameLength(size_t index) const {
    const int32_t name = entries[index].name;
    return name >= 0 ? utf16Length(names[static_cast<size_t>(name)]) : 0;
  }
};

// The search summary of one cached chunk, kept in the map's dense array so that finding a
// segment touches the chunk's own memory only for the few positions it compares and the one
// entry it returns. Minified bundles put thousands of segments on one generated line, so a chunk
// is usually a single line; its segments are then narrowed down by 32 column buckets to a short
// range instead of a binary search over the whole chunk.
struct ChunkSlot {
  static constexpr uint32_t kBuckets = 32;
  const uint64_t* positions = nullptr;
  SegmentEntry* entries = nullptr;
  uint32_t count = 0;
  bool single_line = false;
  uint32_t line = 0, first_column = 0, bucket_width = 1;
  std::array<uint16_t, kBuckets + 1> bucket_start{};  // first segment index of each column bucket
  std::shared_ptr<CachedChunk> chunk;                 // owns positions and entries

  explicit ChunkSlot(std::shared_ptr<CachedChunk> owned) : chunk(std::move(owned)) {
    positions = chunk->positions.data();
    entries = chunk->entries.data();
    count = static_cast<uint32_t>(chunk->positions.size());
    single_line = count > 0 && count <= UINT16_MAX && (positions[0] >> 32) == (positions[count - 1] >> 32);
    if (!single_line) return;
    line = static_cast<uint32_t>(positions[0] >> 32);
    first_column = static_cast<uint32_t>(positions[0]);
    const uint64_t span = static_cast<uint32_t>(positions[count - 1]) - uint64_t{first_column} + 1;
    bucket_width = static_cast<uint32_t>((span + kBuckets - 1) / kBuckets);
    uint32_t index = 0;
    for (uint32_t bucket = 0; bucket <= kBuckets; ++bucket) {
      const uint64_t column = first_column + static_cast<uint64_t>(bucket) * bucket_width;
      while (index < count && static_cast<uint32_t>(positions[index]) < column) ++index;
      bucket_start[bucket] = static_cast<uint16_t>(index);
    }
  }

  // Where find() searches for (at_line, column): positions [first, last) of the chunk.
  struct Range {
    const uint64_t* first;
    const uint64_t* last;
  };
  Range range(uint32_t at_line, uint32_t column) const {
    if (!single_line || at_line != line) return {positions, positions + count};
    if (column < first_column) return {positions, positions};
    const uint32_t bucket = std::min<uint32_t>((column - first_column) / bucket_width, kBuckets - 1);
    // The answer is the last segment with column <= `column`: from the bucket's first segment
    // minus one up to the next bucket's first segment.
    return {positions + (bucket_start[bucket] > 0 ? bucket_start[bucket] - 1 : 0),
            positions + bucket_start[bucket + 1]};
  }
  // Fetches the positions of `r` ahead of search(): a column bucket's few positions (up to 16,
  // which span at most three cache lines) whole; of a longer range (a chunk over several lines,
  // searched whole) the lines of search()'s first steps. Three fetches and no loop, whose exit,
  // after a number of lines that varies from frame to frame, mispredicted about once a frame.
  static void prefetchPositions(Range r) {
    if (r.last == r.first) return;
    __builtin_prefetch(r.first);
    __builtin_prefetch(r.first + (r.last - r.first) / 2);
    __builtin_prefetch(r.last - 1);
  }
  // Fetches the entries of `r` (at most 8 cache lines) ahead of reading the one search() finds.
  void prefetchEntries(Range r) const {
    const char* entry = reinterpret_cast<const char*>(entries + (r.first - positions));
    const char* entries_end = reinterpret_cast<const char*>(entries + (r.last - positions));
    for (int line_count = 0; entry < entries_end && line_count < 8; entry += 64, ++line_count) {
      __builtin_prefetch(entry);
    }
  }
  // Index of the last segment of `r` at or before (at_line, column) on the same generated line, or -1.
  int search(Range r, uint32_t at_line, uint32_t column) const {
    const uint64_t* after =
        unpredictableUpperBound(r.first, static_cast<size_t>(r.last - r.first), positionKey(at_line, column));
    if (after == positions) return -1;
    const size_t index = static_cast<size_t>(after - positions) - 1;
    return static_cast<uint32_t>(positions[index] >> 32) == at_line ? static_cast<int>(index) : -1;
  }

  // Index of the last segment at or before (line, column) on the same generated line, or -1.
  int find(uint32_t at_line, uint32_t column) const {
    __builtin_prefetch(&bucket_start[kBuckets / 2]);  // the slot's second line, read after the first
    const Range r = range(at_line, column);
    // The entries of the bucket's segments are fetched while its positions are searched, so
    // that the entry found does not wait for a second miss after the first.
    if (single_line && at_line == line) prefetchEntries(r);
    return search(r, at_line, column);
  }
};

struct MapState {
  uint64_t id = 0;
  std::shared_ptr<const MapHeader> header;
  // Function scopes of the minified file with original names ('f' record), when the minified
  // file was uploaded beside the map; positions are the map's generated ones (lines 1-based).
  std::shared_ptr<const sourcemap::FunctionMap> generated_functions;
  bool generated_functions_first = false;  // from "scopes": ahead of the sources' function maps
  std::vector<uint64_t> chunk_starts;      // sorted: the binary search runs over this dense array
  // Parallel to chunk_starts: the positionKey of the first position after each chunk, here and not
  // in its slot so that find() reads no slot (a miss per frame of a large map, on a frame's
  // critical path, where the slot is then fetched ahead of its use).
  std::vector<uint64_t> chunk_ends;
  std::vector<ChunkSlot> slots;  // parallel to chunk_starts
  // Answers shared by segments: (source, original line, function, refined column) -> answer.
  std::map<std::tuple<int32_t, uint32_t, const std::string*, uint32_t>, std::shared_ptr<const ResolvedAnswer>> answers;

  // Per generated line, how many cached chunks start on earlier lines: find() searches only the chunks that start on
  // the frame's line (minified bundles put hundreds of chunks on one line, other maps start one chunk every few
  // lines), a few steps instead of a search over every chunk start. Covers lines up to the last chunk start's + 1.
  // Dropped for good (every search over all starts) when a map's chunks start past kMaxDirectoryLines.
  std::vector<uint32_t> chunks_before_line;
  bool directory_dropped = false;
  static constexpr uint32_t kMaxDirectoryLines = 1u << 18;  // 1 MiB of directory

  // Column buckets of a generated line on which many cached chunks start (a minified bundle's line holds hundreds):
  // find() then searches the one to three chunk starts of the frame's column bucket, where a binary search over all
  // of the line's starts took eight steps or more. Rebuilt whenever a chunk starting on the line is cached.
  struct LineBuckets {
    static constexpr uint32_t kCount = 128;
    uint32_t first_column = 0;  // of the line's first cached chunk start
    uint32_t shift = 0;  // the bucket of column c >= first_column: (c - first_column) >> shift, at most kCount - 1
    // Per bucket, the first of the line's chunk starts (counted from the line's first) at or past its first column.
    std::array<uint16_t, kCount + 1> start{};
  };
  static constexpr uint32_t kMinBucketedChunks = 8;  // fewer starts on a line: a binary search over them is as short
  std::vector<uint32_t> line_buckets_index;  // parallel to chunks_before_line: 1 + index into line_buckets, 0: none
  std::vector<LineBuckets> line_buckets;

  // The cached chunk covering (line, column), or nullptr (unpredictableUpperBound over the starts).
  const ChunkSlot* find(uint32_t line, uint32_t column) const {
    const uint64_t key = positionKey(line, column);
    const size_t total = chunk_starts.size();
    // Searched: [first, first + count), where chunk_starts[first] <= key.
    size_t first = 0, count = total;
    if (!chunks_before_line.empty()) {
      const size_t lines = chunks_before_line.size();
      const size_t on_line = line < lines ? chunks_before_line[line] : total;
      const size_t after_line = line + size_t{1} < lines ? chunks_before_line[line + 1] : total;
      // The chunk covering the position starts on its line, else it is the last one before the line.
      first = on_line > 0 ? on_line - 1 : 0;
      count = after_line - first;
      const uint32_t buckets_at = line < line_buckets_index.size() ? line_buckets_index[line] : 0;
      if (buckets_at != 0 && column >= line_buckets[buckets_at - 1].first_column) {
        // The line's first start is at or before the position, so the covering chunk starts on the line: the last
        // start before the bucket (its lower columns are all before the position) or one inside it.
        const LineBuckets& buckets = line_buckets[buckets_at - 1];
        const uint32_t bucket =
            std::min<uint32_t>((column - buckets.first_column) >> buckets.shift, LineBuckets::kCount - 1);
        const size_t in_bucket = buckets.start[bucket];
        first = on_line + (in_bucket > 0 ? in_bucket - 1 : 0);
        count = on_line + buckets.start[bucket + 1] - first;
      }
    }
    if (count == 0 || key < chunk_starts[first]) return nullptr;
    // The last start at or before the key (there is one: the check above). A line bucket holds one
    // to three starts, searched in two steps whatever their number (fixedStepUpperBound).
    const uint64_t* starts = chunk_starts.data() + first;
    const uint64_t* base =
        (count < 4 ? fixedStepUpperBound<2>(starts, count, key) : unpredictableUpperBound(starts, count, key)) - 1;
    const size_t index = static_cast<size_t>(base - chunk_starts.data());
    return key < chunk_ends[index] ? &slots[index] : nullptr;
  }
  void insert(std::shared_ptr<CachedChunk> chunk) {
    const uint64_t start = positionKey(chunk->start_line, chunk->start_column);
    auto at = std::lower_bound(chunk_starts.begin(), chunk_starts.end(), start);
    const size_t index = static_cast<size_t>(at - chunk_starts.begin());
    if (at != chunk_starts.end() && *at == start) return;  // another thread read it first
    const uint32_t start_line = chunk->start_line;
    chunk_starts.insert(at, start);
    chunk_ends.insert(chunk_ends.begin() + static_cast<std::ptrdiff_t>(index),
                      positionKey(chunk->end_line, chunk->end_column));
    slots.insert(slots.begin() + static_cast<std::ptrdiff_t>(index), ChunkSlot(std::move(chunk)));
    if (directory_dropped) return;
    if (start_line >= kMaxDirectoryLines - 1) {
      directory_dropped = true;
      chunks_before_line = {};
      line_buckets_index = {};
      line_buckets = {};
      return;
    }
    // Lines past the old directory had every earlier chunk before them.
    const size_t lines = std::max<size_t>(chunks_before_line.size(), size_t{start_line} + 2);
    chunks_before_line.resize(lines, static_cast<uint32_t>(chunk_starts.size() - 1));
    line_buckets_index.resize(lines, 0);
    for (size_t line = size_t{start_line} + 1; line < lines; ++line) ++chunks_before_line[line];
    bucketLine(start_line);
  }

  // Builds `line`'s column buckets (LineBuckets) from the chunk starts cached on it, when there are many.
  void bucketLine(uint32_t line) {
    const size_t on_line = chunks_before_line[line];
    const size_t after_line =
        line + size_t{1} < chunks_before_line.size() ? chunks_before_line[line + 1] : chunk_starts.size();
    const size_t count = after_line - on_line;
    if (count < kMinBucketedChunks || count > UINT16_MAX) {
      line_buckets_index[line] = 0;  // a dropped table stays in line_buckets, unused: this is rare and small
      return;
    }
    if (line_buckets_index[line] == 0) {
      line_buckets.emplace_back();
      line_buckets_index[line] = static_cast<uint32_t>(line_buckets.size());
    }
    LineBuckets& buckets = line_buckets[line_buckets_index[line] - 1];
    auto columnAt = [&](size_t offset) { return static_cast<uint32_t>(chunk_starts[on_line + offset]); };
    buckets.first_column = columnAt(0);
    const uint32_t span = columnAt(count - 1) - buckets.first_column;
    buckets.shift = 0;
    while ((span >> buckets.shift) >= LineBuckets::kCount) ++buckets.shift;
    // A start is in bucket (column - first_column) >> shift; find() computes a position's bucket the same way, so
    // every start before `start[b]` lies before any position of bucket b, and every start from `start[b + 1]` on
    // lies after it.
    size_t offset = 0;
    for (uint32_t bucket = 0; bucket <= LineBuckets::kCount; ++bucket) {
      while (offset < count && ((columnAt(offset) - buckets.first_column) >> buckets.shift) < bucket) ++offset;
      buckets.start[bucket] = static_cast<uint16_t>(offset);
    }
  }
};

// Which map serves a frame's file name for one (app, build) — or why none does. Negative answers
// are cached too; every ingest in this process drops all routes (sourcemap_generation.h).
struct Route {
  enum class Kind { kMap, kMissing, kNotFound };
  // The key, compared on every probe. `name` (never null in the route table) is shared by the
  // warm frames' SymbolizedFrame::module (FrameString).
  std::string app, build;
  std::shared_ptr<const std::string> name;
  Kind kind = Kind::kMissing;
  uint64_t map_id = 0;
  uint32_t line_offset = 0;                       // RAM-bundle module: its first generated line (x_facebook_offsets)
  std::string note;                               // kNotFound: why
  FrameReason reason = FrameReason::kNotCovered;  // kNotFound: why, as FrameLookup::reason
  MapState* state = nullptr;                      // the map's state once loaded (owned by the cache's map table)

  bool matches(std::string_view a, std::string_view b, std::string_view n) const {
    return name != nullptr && *name == n && app == a && build == b;
  }
};

inline uint64_t routeHash(std::string_view app, std::string_view build, std::string_view name) {
  const std::hash<std::string_view> hash;
  uint64_t h = hash(name);
  h = (h ^ (hash(app) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
  h = (h ^ (hash(build) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
  return h;
}

}  // namespace restack::sourcemap_cache
