#include "symbolstore/sourcemap/sourcemap_records.h"

#include <algorithm>
#include <cstring>

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

class Writer {
 public:
  Writer() { out_.push_back(static_cast<char>(kSourcemapRecordVersion)); }
  void varint(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  void zigzag(int64_t value) { varint((static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63)); }
  void bytes(std::string_view text) {
    varint(text.size());
    out_.append(text);
  }
  void u8(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void u64(uint64_t value) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Bounds-checked reader: every accessor fails instead of reading past the value.
class Reader {
 public:
  Reader(std::string_view value, const char* what) : data_(value), what_(what) {}

  Status version() {
    if (data_.empty()) return corrupt("empty value");
    const uint8_t found = static_cast<uint8_t>(data_[0]);
    if (found < kOldestReadableRecordVersion || found > kSourcemapRecordVersion) {
      return unsupported(std::string("sourcemap ") + what_ + " record has format version " + std::to_string(found) +
                         "; this restack reads versions " + std::to_string(kOldestReadableRecordVersion) + " to " +
                         std::to_string(kSourcemapRecordVersion) +
                         ". Re-ingest the source map (replay restack.symbols).");
    }
    found_version_ = found;
    pos_ = 1;
    return Status::ok();
  }
  bool varint(uint64_t* value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *value = result;
        return true;
      }
    }
    return false;
  }
  bool varint32(uint32_t* value) {
    uint64_t wide = 0;
    if (!varint(&wide) || wide > 0xffffffffull) return false;
    *value = static_cast<uint32_t>(wide);
    return true;
  }
  bool zigzag(int64_t* value) {
    uint64_t raw = 0;
    if (!varint(&raw)) return false;
    *value = static_cast<int64_t>(raw >> 1) ^ -static_cast<int64_t>(raw & 1);
    return true;
  }
  bool bytes(std::string* text) {
    uint64_t size = 0;
    if (!varint(&size) || size > data_.size() - pos_) return false;
    text->assign(data_.substr(pos_, size));
    pos_ += size;
    return true;
  }
  bool u8(uint8_t* value) {
    if (pos_ >= data_.size()) return false;
    *value = static_cast<uint8_t>(data_[pos_++]);
    return true;
  }
  bool u64(uint64_t* value) {
    if (data_.size() - pos_ < 8) return false;
    uint64_t result = 0;
    for (int i = 7; i >= 0; --i) result = (result << 8) | static_cast<uint8_t>(data_[pos_ + i]);
    pos_ += 8;
    *value = result;
    return true;
  }
  // A count that cannot exceed the bytes left (each element takes at least one byte).
  bool count(uint32_t* value) { return varint32(value) && *value <= data_.size() - pos_; }
  Error corrupt(const std::string& detail) const {
    return malformed(std::string("corrupt sourcemap ") + what_ + " record: " + detail + "; re-ingest the source map");
  }
  Error truncated() const { return corrupt("truncated"); }
  uint8_t foundVersion() const { return found_version_; }

 private:
  uint8_t found_version_ = 0;
  std::string_view data_;
  const char* what_;
  size_t pos_ = 0;
};

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
  Writer writer;
  writer.u64(map_id);
  return writer.take();
}

Expected<uint64_t> decodePointer(std::string_view value) {
  Reader reader(value, "pointer");
  RESTACK_RETURN_IF_ERROR(reader.version());
  uint64_t id = 0;
  if (!reader.u64(&id)) return reader.truncated();
  return id;
}

std::string encodeHeader(const MapHeader& header) {
  Writer writer;
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
      writer.u64(*section.child);
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
    writer.u64(child);
  }
  writer.varint(header.module_offsets.size());
  for (uint32_t line : header.module_offsets) {
    writer.varint(line == sourcemap::kNoModuleOffset ? 0 : static_cast<uint64_t>(line) + 1);
  }
  return writer.take();
}

Expected<MapHeader> decodeHeader(std::string_view value) {
  Reader reader(value, "header");
  RESTACK_RETURN_IF_ERROR(reader.version());
  MapHeader header;
  uint64_t flags = 0;
  uint32_t count = 0;
  if (!reader.varint(&flags) || !reader.bytes(&header.file) || !reader.bytes(&header.debug_id) ||
      !reader.varint32(&header.source_count) || !reader.count(&count)) {
    return reader.truncated();
  }
  header.index_map = flags & 1;
  header.hermes = flags & 2;
  header.ram_bundle = flags & 4;
  for (uint32_t i = 0; i < count; ++i) {
    Section section;
    uint8_t kind = 0;
    if (!reader.varint32(&section.line) || !reader.varint32(&section.column) || !reader.u8(&kind)) {
      return reader.truncated();
    }
    if (kind == 0) {
      uint64_t child = 0;
      if (!reader.u64(&child)) return reader.truncated();
      section.child = child;
    } else if (!reader.bytes(&section.url_name)) {
      return reader.truncated();
    }
    header.sections.push_back(std::move(section));
  }
  if (!reader.count(&count)) return reader.truncated();
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t segment = 0, offsets = 0;
    if (!reader.varint32(&segment) || !reader.count(&offsets)) return reader.truncated();
    std::vector<uint32_t>& out = header.hermes_function_offsets[segment];
    int64_t previous = 0;
    for (uint32_t j = 0; j < offsets; ++j) {
      int64_t delta = 0;
      if (!reader.zigzag(&delta)) return reader.truncated();
      previous += delta;
      if (previous < 0 || previous > 0xffffffffll) return reader.corrupt("Hermes offset out of range");
      out.push_back(static_cast<uint32_t>(previous));
    }
  }
  if (!reader.count(&count)) return reader.truncated();
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t segment = 0;
    uint64_t child = 0;
    if (!reader.varint32(&segment) || !reader.u64(&child)) return reader.truncated();
    header.facebook_segments[segment] = child;
  }
  if (reader.foundVersion() >= 2) {
    if (!reader.count(&count)) return reader.truncated();
    header.module_offsets.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      uint64_t line = 0;
      if (!reader.varint(&line)) return reader.truncated();
      if (line > 0xffffffffull) return reader.corrupt("module offset out of range");
      header.module_offsets.push_back(line == 0 ? sourcemap::kNoModuleOffset : static_cast<uint32_t>(line - 1));
    }
  }
  return header;
}

std::string encodeSource(const SourceRecord& record) {
  Writer writer;
  writer.bytes(record.path);
  writer.u8(record.ignored ? 1 : 0);
  writer.u8(static_cast<uint8_t>(record.origin));
  writer.varint(record.line_count);
  writer.varint(record.functions.names.size());
  for (const std::string& name : record.functions.names) writer.bytes(name);
  // Entries are delta-coded by line, so they must be in source order.
  std::vector<sourcemap::FunctionMapEntry> entries = record.functions.entries;
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.line < b.line || (a.line == b.line && a.column < b.column); });
  writer.varint(entries.size());
  uint32_t previous_line = 0;
  for (const sourcemap::FunctionMapEntry& entry : entries) {
    writer.varint(entry.line - previous_line);
    writer.varint(entry.column);
    writer.varint(entry.name);
    previous_line = entry.line;
  }
  return writer.take();
}

Expected<SourceRecord> decodeSource(std::string_view value) {
  Reader reader(value, "source");
  RESTACK_RETURN_IF_ERROR(reader.version());
  SourceRecord record;
  uint8_t ignored = 0, origin = 0;
  uint32_t count = 0;
  if (!reader.bytes(&record.path) || !reader.u8(&ignored) || !reader.u8(&origin) ||
      !reader.varint32(&record.line_count) || !reader.count(&count)) {
    return reader.truncated();
  }
  if (origin > 2) return reader.corrupt("unknown function map origin");
  record.ignored = ignored != 0;
  record.origin = static_cast<FunctionMapOrigin>(origin);
  record.functions.names.resize(count);
  for (auto& name : record.functions.names) {
    if (!reader.bytes(&name)) return reader.truncated();
  }
  if (!reader.count(&count)) return reader.truncated();
  record.functions.entries.resize(count);
  uint64_t line = 0;
  for (auto& entry : record.functions.entries) {
    uint32_t delta = 0;
    if (!reader.varint32(&delta) || !reader.varint32(&entry.column) || !reader.varint32(&entry.name)) {
      return reader.truncated();
    }
    line += delta;
    if (line > 0xffffffffull || entry.name >= record.functions.names.size()) {
      return reader.corrupt("function map entry out of range");
    }
    entry.line = static_cast<uint32_t>(line);
  }
  return record;
}

std::string encodeText(const std::vector<std::string_view>& lines) {
  Writer writer;
  writer.varint(lines.size());
  for (std::string_view line : lines) writer.bytes(line);
  return writer.take();
}

Expected<std::vector<std::string>> decodeText(std::string_view value) {
  Reader reader(value, "source text");
  RESTACK_RETURN_IF_ERROR(reader.version());
  uint32_t count = 0;
  if (!reader.count(&count)) return reader.truncated();
  std::vector<std::string> lines(count);
  for (auto& line : lines) {
    if (!reader.bytes(&line)) return reader.truncated();
  }
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
  Writer writer;
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

Expected<MappingChunk> decodeChunk(std::string_view value, uint32_t start_line, uint32_t start_column) {
  Reader reader(value, "mapping chunk");
  RESTACK_RETURN_IF_ERROR(reader.version());
  MappingChunk chunk;
  chunk.start_line = start_line;
  chunk.start_column = start_column;
  uint32_t count = 0;
  if (!reader.varint32(&chunk.end_line) || !reader.varint32(&chunk.end_column) || !reader.count(&count)) {
    return reader.truncated();
  }
  chunk.names.resize(count);
  for (auto& name : chunk.names) {
    if (!reader.bytes(&name)) return reader.truncated();
  }
  if (!reader.count(&count)) return reader.truncated();
  chunk.segments.resize(count);
  uint64_t line = start_line, column = start_column;
  int64_t original_line = 0, original_column = 0;
  for (Segment& segment : chunk.segments) {
    uint64_t line_delta = 0, column_value = 0, source = 0;
    if (!reader.varint(&line_delta) || !reader.varint(&column_value) || !reader.varint(&source)) {
      return reader.truncated();
    }
    column = line_delta == 0 ? column + column_value : column_value;
    line += line_delta;
    if (line > 0xffffffffull || column > 0xffffffffull || source > 0x7fffffffull) {
      return reader.corrupt("segment position out of range");
    }
    segment.line = static_cast<uint32_t>(line);
    segment.column = static_cast<uint32_t>(column);
    segment.source = static_cast<int32_t>(source) - 1;
    if (segment.source >= 0) {
      int64_t line_delta_original = 0, column_delta_original = 0;
      uint64_t name = 0;
      if (!reader.zigzag(&line_delta_original) || !reader.zigzag(&column_delta_original) || !reader.varint(&name)) {
        return reader.truncated();
      }
      original_line += line_delta_original;
      original_column += column_delta_original;
      if (original_line < 0 || original_line > 0xffffffffll || original_column < 0 || original_column > 0xffffffffll ||
          name > chunk.names.size()) {
        return reader.corrupt("segment original position out of range");
      }
      segment.original_line = static_cast<uint32_t>(original_line);
      segment.original_column = static_cast<uint32_t>(original_column);
      segment.name = static_cast<int32_t>(name) - 1;
    }
  }
  return chunk;
}

std::string encodeGeneratedFunctions(const GeneratedFunctions& generated) {
  const sourcemap::FunctionMap& functions = generated.functions;
  Writer writer;
  writer.u8(static_cast<uint8_t>(generated.origin));
  writer.varint(functions.names.size());
  for (const std::string& name : functions.names) writer.bytes(name);
  std::vector<sourcemap::FunctionMapEntry> entries = functions.entries;
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.line < b.line || (a.line == b.line && a.column < b.column); });
  writer.varint(entries.size());
  uint32_t previous_line = 0;
  for (const sourcemap::FunctionMapEntry& entry : entries) {
    writer.varint(entry.line - previous_line);
    writer.varint(entry.column);
    writer.varint(entry.name);
    previous_line = entry.line;
  }
  return writer.take();
}

Expected<GeneratedFunctions> decodeGeneratedFunctions(std::string_view value) {
  Reader reader(value, "generated function map");
  RESTACK_RETURN_IF_ERROR(reader.version());
  GeneratedFunctions generated;
  sourcemap::FunctionMap& functions = generated.functions;
  uint8_t origin = 0;
  uint32_t count = 0;
  if (!reader.u8(&origin) || !reader.count(&count)) return reader.truncated();
  if (origin > 1) return reader.corrupt("unknown generated function map origin");
  generated.origin = static_cast<GeneratedFunctionsOrigin>(origin);
  functions.names.resize(count);
  for (auto& name : functions.names) {
    if (!reader.bytes(&name)) return reader.truncated();
  }
  if (!reader.count(&count)) return reader.truncated();
  functions.entries.resize(count);
  uint64_t line = 0;
  for (auto& entry : functions.entries) {
    uint32_t delta = 0;
    if (!reader.varint32(&delta) || !reader.varint32(&entry.column) || !reader.varint32(&entry.name)) {
      return reader.truncated();
    }
    line += delta;
    if (line > 0xffffffffull || entry.name >= functions.names.size()) {
      return reader.corrupt("function map entry out of range");
    }
    entry.line = static_cast<uint32_t>(line);
  }
  return generated;
}

std::string encodeMinifiedSource(std::string_view text) {
  Writer writer;
  writer.bytes(text);
  return writer.take();
}

Expected<std::string> decodeMinifiedSource(std::string_view value) {
  Reader reader(value, "minified source");
  RESTACK_RETURN_IF_ERROR(reader.version());
  std::string text;
  if (!reader.bytes(&text)) return reader.truncated();
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
