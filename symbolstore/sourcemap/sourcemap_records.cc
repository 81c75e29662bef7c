#include "symbolstore/sourcemap/sourcemap_records.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "symbolstore/record_codec.h"

namespace restack::sourcemap_records {
namespace {

void putU32BE(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
}
void putU64BE(std::string& out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
}
uint32_t getU32BE(std::string_view bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

using records::RecordReader;
using records::RecordType;
using records::RecordWriter;

constexpr std::string_view kRemedy = "re-ingest the source map (replay restack.symbols)";
constexpr RecordType kPointerType{"sourcemap", "pointer", kOldestReadableRecordVersion, kSourcemapRecordVersion,
                                  kRemedy};
constexpr RecordType kHeaderType{"sourcemap", "header", kOldestReadableRecordVersion, kSourcemapRecordVersion, kRemedy};
constexpr RecordType kSourceType{"sourcemap", "source", kOldestReadableRecordVersion, kInferredNamesRecordVersion,
                                 kRemedy};
constexpr RecordType kTextType{"sourcemap", "source text", kOldestReadableRecordVersion, kSourcemapRecordVersion,
                               kRemedy};
// 'f' and 'm' records exist from version 3 on.
constexpr RecordType kGeneratedFunctionsType{"sourcemap", "generated function map", 3, kInferredNamesRecordVersion,
                                             kRemedy};

// A function map's names V8 infers (FunctionMap::inferred), from version 4 on: their count, then
// their indexes into the names, delta-coded. Written only when there is one, so that a map
// without any keeps the version 3 bytes.
uint8_t functionMapVersion(const sourcemap::FunctionMap& functions) {
  const bool any = std::find(functions.inferred.begin(), functions.inferred.end(), true) != functions.inferred.end();
  return any ? kInferredNamesRecordVersion : kSourcemapRecordVersion;
}

void writeInferredNames(RecordWriter& writer, const sourcemap::FunctionMap& functions) {
  writer.varint(static_cast<uint64_t>(std::count(functions.inferred.begin(), functions.inferred.end(), true)));
  size_t previous = 0;
  for (size_t i = 0; i < functions.inferred.size(); ++i) {
    if (!functions.inferred[i]) continue;
    writer.varint(i - previous);
    previous = i;
  }
}

Status readInferredNames(RecordReader& reader, sourcemap::FunctionMap& functions) {
  const size_t count = reader.count();
  uint64_t index = 0;
  for (size_t i = 0; i < count && reader.ok(); ++i) {
    const uint64_t delta = reader.varint();
    index += delta;
    if (delta >= functions.names.size() || index >= functions.names.size())
      return reader.refuse("inferred function name out of range");
    functions.inferred.resize(functions.names.size(), false);
    functions.inferred[index] = true;
  }
  return Status::ok();
}
constexpr RecordType kMinifiedSourceType{"sourcemap", "minified source", 3, kSourcemapRecordVersion, kRemedy};
constexpr RecordType kChunkType{"sourcemap", "mapping chunk", kOldestReadableRecordVersion, kSourcemapRecordVersion,
                                kRemedy};

}  // namespace

std::string pointerKey(std::string_view app, std::string_view build, std::string_view name) {
  std::string key = "p";
  key.append(app);
  key.push_back('\0');
  key.append(build);
  key.push_back('\0');
  key.append(name);
  return key;
}

std::string headerKey(uint64_t map_id) {
  std::string key = "h";
  putU64BE(key, map_id);
  return key;
}

std::string sourceKey(uint64_t map_id, uint32_t source) {
  std::string key = "s";
  putU64BE(key, map_id);
  putU32BE(key, source);
  return key;
}

std::string textKey(uint64_t map_id, uint32_t source, uint32_t chunk) {
  std::string key = "t";
  putU64BE(key, map_id);
  putU32BE(key, source);
  putU32BE(key, chunk);
  return key;
}

std::string chunkPrefix(uint64_t map_id) {
  std::string key = "g";
  putU64BE(key, map_id);
  return key;
}

std::string chunkKey(uint64_t map_id, uint32_t line, uint32_t column) {
  std::string key = chunkPrefix(map_id);
  putU32BE(key, line);
  putU32BE(key, column);
  return key;
}

std::string generatedFunctionsKey(uint64_t map_id) {
  std::string key = "f";
  putU64BE(key, map_id);
  return key;
}

std::string minifiedSourceKey(std::string_view app, std::string_view build, std::string_view name) {
  std::string key = pointerKey(app, build, name);
  key[0] = 'm';
  return key;
}

bool parseChunkKey(std::string_view key, uint64_t map_id, uint32_t* line, uint32_t* column) {
  const std::string prefix = chunkPrefix(map_id);
  if (key.size() != prefix.size() + 8 || key.substr(0, prefix.size()) != prefix) return false;
  *line = getU32BE(key.substr(prefix.size()));
  *column = getU32BE(key.substr(prefix.size() + 4));
  return true;
}

uint64_t hashBytes(std::string_view bytes, uint64_t seed) {
  // 64-bit multiply-xorshift over 8-byte words: fast on tens of MB, well mixed for ids.
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;
  uint64_t state = seed ^ (bytes.size() * kMul);
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    state = (state ^ word) * kMul;
    state ^= state >> 29;
  }
  uint64_t tail = 0;
  for (size_t shift = 0; i < bytes.size(); ++i, shift += 8) {
    tail |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << shift;
  }
  state = (state ^ tail) * kMul;
  state ^= state >> 32;
  state *= 0xd6e8feb86659fd93ull;
  state ^= state >> 32;
  return state;
}

uint64_t childMapId(uint64_t parent, uint64_t index) {
  char bytes[16];
  std::memcpy(bytes, &parent, 8);
  std::memcpy(bytes + 8, &index, 8);
  return hashBytes(std::string_view(bytes, 16), 0x5ec7105ull);
}

std::string encodePointer(uint64_t map_id) {
  RecordWriter writer(kSourcemapRecordVersion);
  writer.u64le(map_id);
  return writer.take();
}

Expected<uint64_t> decodePointer(std::string_view value, std::string_view key) {
  RecordReader reader(kPointerType, value, key);
  reader.version();
  const uint64_t id = reader.u64le();
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return id;
}

std::string encodeHeader(const MapHeader& header) {
  RecordWriter writer(kSourcemapRecordVersion);
  writer.varint((header.index_map ? 1 : 0) | (header.hermes ? 2 : 0) | (header.ram_bundle ? 4 : 0));
  writer.bytes(header.file);
  writer.bytes(header.debug_id);
  writer.varint(header.source_count);
  writer.varint(header.sections.size());
  for (const Section& section : header.sections) {
    writer.varint(section.line);
    writer.varint(section.column);
    writer.u8(section.child ? 0 : 1);
    if (section.child) {
      writer.u64le(*section.child);
    } else {
      writer.bytes(section.url_name);
    }
  }
  writer.varint(header.hermes_function_offsets.size());
  for (const auto& [segment, offsets] : header.hermes_function_offsets) {
    writer.varint(segment);
    writer.varint(offsets.size());
    uint32_t previous = 0;
    for (uint32_t offset : offsets) {
      writer.zigzag(static_cast<int64_t>(offset) - previous);
      previous = offset;
    }
  }
  writer.varint(header.facebook_segments.size());
  for (const auto& [segment, child] : header.facebook_segments) {
    writer.varint(segment);
    writer.u64le(child);
  }
  writer.varint(header.module_offsets.size());
  for (uint32_t line : header.module_offsets) {
    writer.varint(line == sourcemap::kNoModuleOffset ? 0 : static_cast<uint64_t>(line) + 1);
  }
  return writer.take();
}

Expected<MapHeader> decodeHeader(std::string_view value, std::string_view key) {
  RecordReader reader(kHeaderType, value, key);
  const uint8_t version = reader.version();
  MapHeader header;
  const uint64_t flags = reader.varint();
  header.file = reader.bytes();
  header.debug_id = reader.bytes();
  header.source_count = reader.varint32();
  header.index_map = flags & 1;
  header.hermes = flags & 2;
  header.ram_bundle = flags & 4;
  uint64_t count = reader.count();
  for (uint64_t i = 0; i < count && reader.ok(); ++i) {
    Section section;
    section.line = reader.varint32();
    section.column = reader.varint32();
    if (reader.u8() == 0) {
      section.child = reader.u64le();
    } else {
      section.url_name = reader.bytes();
    }
    header.sections.push_back(std::move(section));
  }
  count = reader.count();
  for (uint64_t i = 0; i < count && reader.ok(); ++i) {
    const uint32_t segment = reader.varint32();
    const uint64_t offsets = reader.count();
    std::vector<uint32_t>& out = header.hermes_function_offsets[segment];
    int64_t previous = 0;
    for (uint64_t j = 0; j < offsets && reader.ok(); ++j) {
      previous += reader.zigzag();
      if (previous < 0 || previous > 0xffffffffll) return reader.refuse("Hermes offset out of range");
      out.push_back(static_cast<uint32_t>(previous));
    }
  }
  count = reader.count();
  for (uint64_t i = 0; i < count && reader.ok(); ++i) {
    const uint32_t segment = reader.varint32();
    header.facebook_segments[segment] = reader.u64le();
  }
  if (version >= 2) {
    count = reader.count();
    header.module_offsets.reserve(count);
    for (uint64_t i = 0; i < count && reader.ok(); ++i) {
      const uint64_t line = reader.varint();
      if (line > 0xffffffffull) return reader.refuse("module offset out of range");
      header.module_offsets.push_back(line == 0 ? sourcemap::kNoModuleOffset : static_cast<uint32_t>(line - 1));
    }
  }
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return header;
}

std::string encodeSource(const SourceRecord& record) {
  const uint8_t version = functionMapVersion(record.functions);
  RecordWriter writer(version);
  writer.bytes(record.path);
  writer.u8(record.ignored ? 1 : 0);
  writer.u8(static_cast<uint8_t>(record.origin));
  writer.varint(record.line_count);
  writer.varint(record.functions.names.size());
  for (const std::string& name : record.functions.names) writer.bytes(name);
  // Entries are delta-coded by line, so they must be in source order; entries at the same
  // position keep their order, so that encoding a decoded record gives the same bytes.
  // (libstdc++ 12's std::stable_sort is deprecated under C++20: sort indices with a tie-break.)
  const std::vector<sourcemap::FunctionMapEntry>& entries = record.functions.entries;
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&entries](size_t a, size_t b) {
    return std::tie(entries[a].line, entries[a].column, a) < std::tie(entries[b].line, entries[b].column, b);
  });
  writer.varint(entries.size());
  uint32_t previous_line = 0;
  for (size_t index : order) {
    const sourcemap::FunctionMapEntry& entry = entries[index];
    writer.varint(entry.line - previous_line);
    writer.varint(entry.column);
    writer.varint(entry.name);
    previous_line = entry.line;
  }
  if (version >= kInferredNamesRecordVersion) writeInferredNames(writer, record.functions);
  return writer.take();
}

Expected<SourceRecord> decodeSource(std::string_view value, std::string_view key) {
  RecordReader reader(kSourceType, value, key);
  const uint8_t version = reader.version();
  SourceRecord record;
  record.path = reader.bytes();
  record.ignored = reader.u8() != 0;
  const uint8_t origin = reader.u8();
  if (origin > 2) return reader.refuse("unknown function map origin");
  record.origin = static_cast<FunctionMapOrigin>(origin);
  record.line_count = reader.varint32();
  record.functions.names.resize(reader.count());
  for (auto& name : record.functions.names) name = reader.bytes();
  record.functions.entries.resize(reader.count(3));
  uint64_t line = 0;
  for (auto& entry : record.functions.entries) {
    line += reader.varint32();
    entry.column = reader.varint32();
    entry.name = reader.varint32();
    if (!reader.ok()) break;
    if (line > 0xffffffffull || entry.name >= record.functions.names.size()) {
      return reader.refuse("function map entry out of range");
    }
    entry.line = static_cast<uint32_t>(line);
  }
  if (version >= kInferredNamesRecordVersion) RESTACK_RETURN_IF_ERROR(readInferredNames(reader, record.functions));
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return record;
}

std::string encodeText(const std::vector<std::string_view>& lines) {
  RecordWriter writer(kSourcemapRecordVersion);
  writer.varint(lines.size());
  for (std::string_view line : lines) writer.bytes(line);
  return writer.take();
}

Expected<std::vector<std::string>> decodeText(std::string_view value, std::string_view key) {
  RecordReader reader(kTextType, value, key);
  reader.version();
  std::vector<std::string> lines(reader.count());
  for (auto& line : lines) line = reader.bytes();
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return lines;
}

const Segment* MappingChunk::find(uint32_t line, uint32_t column) const {
  auto after =
      std::upper_bound(segments.begin(), segments.end(), std::make_pair(line, column),
                       [](const std::pair<uint32_t, uint32_t>& position, const Segment& s) {
                         return position.first < s.line || (position.first == s.line && position.second < s.column);
                       });
  if (after == segments.begin()) return nullptr;
  const Segment& found = *(after - 1);
  return found.line == line ? &found : nullptr;
}

bool MappingChunk::covers(uint32_t line, uint32_t column) const {
  const bool after_start = line > start_line || (line == start_line && column >= start_column);
  const bool before_end = line < end_line || (line == end_line && column < end_column);
  return after_start && before_end;
}

std::string encodeChunk(const MappingChunk& chunk) {
  RecordWriter writer(kSourcemapRecordVersion);
  writer.varint(chunk.end_line);
  writer.varint(chunk.end_column);
  writer.varint(chunk.names.size());
  for (const std::string& name : chunk.names) writer.bytes(name);
  writer.varint(chunk.segments.size());
  uint32_t line = chunk.start_line, column = chunk.start_column;
  int64_t original_line = 0, original_column = 0;
  for (const Segment& segment : chunk.segments) {
    writer.varint(segment.line - line);
    writer.varint(segment.line == line ? segment.column - column : segment.column);
    line = segment.line;
    column = segment.column;
    writer.varint(static_cast<uint64_t>(segment.source + 1));
    if (segment.source >= 0) {
      writer.zigzag(static_cast<int64_t>(segment.original_line) - original_line);
      writer.zigzag(static_cast<int64_t>(segment.original_column) - original_column);
      writer.varint(static_cast<uint64_t>(segment.name + 1));
      original_line = segment.original_line;
      original_column = segment.original_column;
    }
  }
  return writer.take();
}

Expected<MappingChunk> decodeChunk(std::string_view value, uint32_t start_line, uint32_t start_column,
                                   std::string_view key) {
  RecordReader reader(kChunkType, value, key);
  reader.version();
  MappingChunk chunk;
  chunk.start_line = start_line;
  chunk.start_column = start_column;
  chunk.end_line = reader.varint32();
  chunk.end_column = reader.varint32();
  chunk.names.resize(reader.count());
  for (auto& name : chunk.names) name = reader.bytes();
  chunk.segments.resize(reader.count(3));
  uint64_t line = start_line, column = start_column;
  int64_t original_line = 0, original_column = 0;
  for (Segment& segment : chunk.segments) {
    const uint64_t line_delta = reader.varint();
    const uint64_t column_value = reader.varint();
    const uint64_t source = reader.varint();
    if (!reader.ok()) break;
    column = line_delta == 0 ? column + column_value : column_value;
    line += line_delta;
    if (line > 0xffffffffull || column > 0xffffffffull || source > 0x7fffffffull) {
      return reader.refuse("segment position out of range");
    }
    segment.line = static_cast<uint32_t>(line);
    segment.column = static_cast<uint32_t>(column);
    segment.source = static_cast<int32_t>(source) - 1;
    if (segment.source >= 0) {
      original_line += reader.zigzag();
      original_column += reader.zigzag();
      const uint64_t name = reader.varint();
      if (!reader.ok()) break;
      if (original_line < 0 || original_line > 0xffffffffll || original_column < 0 || original_column > 0xffffffffll ||
          name > chunk.names.size()) {
        return reader.refuse("segment original position out of range");
      }
      segment.original_line = static_cast<uint32_t>(original_line);
      segment.original_column = static_cast<uint32_t>(original_column);
      segment.name = static_cast<int32_t>(name) - 1;
    }
  }
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return chunk;
}

std::string encodeGeneratedFunctions(const GeneratedFunctions& generated) {
  const sourcemap::FunctionMap& functions = generated.functions;
  const uint8_t version = functionMapVersion(functions);
  RecordWriter writer(version);
  writer.u8(static_cast<uint8_t>(generated.origin));
  writer.varint(functions.names.size());
  for (const std::string& name : functions.names) writer.bytes(name);
  std::vector<sourcemap::FunctionMapEntry> entries = functions.entries;
  // A total order (position, then name), so that decode -> encode settles.
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return std::tie(a.line, a.column, a.name) < std::tie(b.line, b.column, b.name);
  });
  writer.varint(entries.size());
  uint32_t previous_line = 0;
  for (const sourcemap::FunctionMapEntry& entry : entries) {
    writer.varint(entry.line - previous_line);
    writer.varint(entry.column);
    writer.varint(entry.name);
    previous_line = entry.line;
  }
  if (version >= kInferredNamesRecordVersion) writeInferredNames(writer, functions);
  return writer.take();
}

Expected<GeneratedFunctions> decodeGeneratedFunctions(std::string_view value, std::string_view key) {
  RecordReader reader(kGeneratedFunctionsType, value, key);
  const uint8_t version = reader.version();
  GeneratedFunctions generated;
  sourcemap::FunctionMap& functions = generated.functions;
  const uint8_t origin = reader.u8();
  if (reader.ok() && origin > 1) return reader.refuse("unknown generated function map origin");
  generated.origin = static_cast<GeneratedFunctionsOrigin>(origin);
  functions.names.resize(reader.count());
  for (auto& name : functions.names) name = reader.bytes();
  functions.entries.resize(reader.count(3));
  uint64_t line = 0;
  for (auto& entry : functions.entries) {
    line += reader.varint32();
    entry.column = reader.varint32();
    entry.name = reader.varint32();
    if (!reader.ok()) break;
    if (line > 0xffffffffull || entry.name >= functions.names.size()) {
      return reader.refuse("function map entry out of range");
    }
    entry.line = static_cast<uint32_t>(line);
  }
  if (version >= kInferredNamesRecordVersion) RESTACK_RETURN_IF_ERROR(readInferredNames(reader, functions));
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return generated;
}

std::string encodeMinifiedSource(std::string_view text) {
  RecordWriter writer(kSourcemapRecordVersion);
  writer.bytes(text);
  return writer.take();
}

Expected<std::string> decodeMinifiedSource(std::string_view value, std::string_view key) {
  RecordReader reader(kMinifiedSourceType, value, key);
  reader.version();
  std::string text(reader.bytes());
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return text;
}

}  // namespace restack::sourcemap_records

#include <atomic>

#include "symbolstore/sourcemap/sourcemap_generation.h"

namespace restack::sourcemap_records {
namespace {
std::atomic<uint64_t> ingest_generation{0};
}  // namespace

void noteSourcemapIngested() {
  ingest_generation.fetch_add(1, std::memory_order_release);
}
uint64_t sourcemapIngestGeneration() {
  return ingest_generation.load(std::memory_order_acquire);
}

}  // namespace restack::sourcemap_records
