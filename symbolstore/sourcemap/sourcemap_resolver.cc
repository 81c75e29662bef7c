#include "symbolstore/sourcemap/sourcemap_resolver.h"

#include <rocksdb/db.h>

#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "formats/sourcemap/url.h"
#include "symbolstore/sourcemap/sourcemap_generation.h"
#include "symbolstore/sourcemap/sourcemap_records.h"

namespace restack {
namespace {

using namespace sourcemap_records;

constexpr uint32_t kMaxSectionDepth = 8;

uint64_t positionKey(uint32_t line, uint32_t column) {
  return (static_cast<uint64_t>(line) << 32) | column;
}

struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& key) const {
    return key.first * 0x9e3779b97f4a7c15ull ^ key.second;
  }
};

size_t chunkBytes(const MappingChunk& chunk) {
  size_t bytes = sizeof(MappingChunk) + chunk.segments.size() * sizeof(Segment);
  for (const auto& name : chunk.names) bytes += sizeof(std::string) + name.size();
  return bytes;
}

size_t sourceBytes(const SourceRecord& record) {
  size_t bytes = sizeof(SourceRecord) + record.path.size() +
                 record.functions.entries.size() * sizeof(sourcemap::FunctionMapEntry);
  for (const auto& name : record.functions.names) bytes += sizeof(std::string) + name.size();
  return bytes;
}

}  // namespace

struct SourcemapResolver::Impl {
  Impl(SymbolStore& store_in, const SourcemapResolverOptions& options_in)
      : store(store_in), options(options_in) {}
  SymbolStore& store;
  SourcemapResolverOptions options;

  // Everything below is guarded by `mutex`: readers share it, fills take it alone.
  mutable std::shared_mutex mutex;
  uint64_t generation = sourcemapIngestGeneration();
  size_t cached_bytes = 0;
  std::unordered_map<std::string, uint64_t> pointers;  // pointer key -> map id
  std::unordered_map<uint64_t, std::shared_ptr<const MapHeader>> headers;
  std::unordered_map<uint64_t, std::map<uint64_t, std::shared_ptr<const MappingChunk>>> chunks;
  std::unordered_map<std::pair<uint64_t, uint64_t>, std::shared_ptr<const SourceRecord>, PairHash> sources;
  std::unordered_map<std::pair<uint64_t, uint64_t>, std::shared_ptr<const std::vector<std::string>>, PairHash>
      texts;

  // Call with `mutex` held exclusively. Drops everything when `bytes` more would not fit.
  void reserve(size_t bytes) {
    if (cached_bytes + bytes <= options.cache_bytes) {
      cached_bytes += bytes;
      return;
    }
    pointers.clear();
    headers.clear();
    chunks.clear();
    sources.clear();
    texts.clear();
    cached_bytes = bytes;
  }

  void checkGeneration() {
    const uint64_t now = sourcemapIngestGeneration();
    {
      std::shared_lock lock(mutex);
      if (generation == now) return;
    }
    std::unique_lock lock(mutex);
    pointers.clear();  // map ids are content hashes: everything else stays valid
    generation = now;
  }

  Expected<std::optional<uint64_t>> pointer(const std::string& key) {
    {
      std::shared_lock lock(mutex);
      if (auto it = pointers.find(key); it != pointers.end()) return std::optional<uint64_t>(it->second);
    }
    auto value = store.get(SymbolFamily::kSourcemap, key);
    if (!value) return value.error();
    if (!value->has_value()) return std::optional<uint64_t>();
    auto id = decodePointer(**value);
    if (!id) return id.error();
    std::unique_lock lock(mutex);
    reserve(key.size() + 64);
    pointers.emplace(key, *id);
    return std::optional<uint64_t>(*id);
  }

  // The map serving `name` for this event (see the header for the order).
  Expected<std::optional<uint64_t>> resolveMap(const EventScope& scope, std::string_view name) {
    const bool react_native = scope.platform == "react_native";
    std::string keys[3];
    size_t count = 0;
    if (react_native && !scope.build_id.empty()) {
      keys[count++] = pointerKey(scope.app, scope.build_id, name);
    } else {
      keys[count++] = pointerKey(scope.app, "", name);
    }
    keys[count++] = pointerKey("", "", name);  // shared uploads
    for (size_t i = 0; i < count; ++i) {
      auto id = pointer(keys[i]);
      if (!id || id->has_value()) return id;
    }
    return std::optional<uint64_t>();
  }

  Expected<std::shared_ptr<const MapHeader>> header(uint64_t map_id) {
    {
      std::shared_lock lock(mutex);
      if (auto it = headers.find(map_id); it != headers.end()) return it->second;
    }
    auto value = store.get(SymbolFamily::kSourcemap, headerKey(map_id));
    if (!value) return value.error();
    if (!value->has_value()) return std::shared_ptr<const MapHeader>();
    auto decoded = decodeHeader(**value);
    if (!decoded) return decoded.error();
    auto shared = std::make_shared<const MapHeader>(std::move(*decoded));
    std::unique_lock lock(mutex);
    reserve(sizeof(MapHeader) + (*value)->size());
    headers.emplace(map_id, shared);
    return shared;
  }

  // The chunk whose range covers (line, column), or null when the position precedes every mapping.
  Expected<std::shared_ptr<const MappingChunk>> chunk(uint64_t map_id, uint32_t line, uint32_t column) {
    const uint64_t position = positionKey(line, column);
    {
      std::shared_lock lock(mutex);
      if (auto map = chunks.find(map_id); map != chunks.end()) {
        auto after = map->second.upper_bound(position);
        if (after != map->second.begin()) {
          const auto& candidate = std::prev(after)->second;
          if (candidate->covers(line, column)) return candidate;
        }
      }
    }
    rocksdb::ReadOptions read_options;
    std::unique_ptr<rocksdb::Iterator> it(
        store.db().NewIterator(read_options, store.family(SymbolFamily::kSourcemap)));
    it->SeekForPrev(chunkKey(map_id, line, column));
    if (!it->status().ok()) {
      return ioError("symbol store " + store.options().path + ": read failed: " + it->status().ToString());
    }
    uint32_t start_line = 0, start_column = 0;
    if (!it->Valid() || !parseChunkKey(it->key().ToStringView(), map_id, &start_line, &start_column)) {
      return std::shared_ptr<const MappingChunk>();
    }
    auto decoded = decodeChunk(it->value().ToStringView(), start_line, start_column);
    if (!decoded) return decoded.error();
    auto shared = std::make_shared<const MappingChunk>(std::move(*decoded));
    std::unique_lock lock(mutex);
    reserve(chunkBytes(*shared));
    chunks[map_id].emplace(positionKey(start_line, start_column), shared);
    return shared;
  }

  Expected<std::shared_ptr<const SourceRecord>> source(uint64_t map_id, uint32_t index) {
    const std::pair<uint64_t, uint64_t> key{map_id, index};
    {
      std::shared_lock lock(mutex);
      if (auto it = sources.find(key); it != sources.end()) return it->second;
    }
    auto value = store.get(SymbolFamily::kSourcemap, sourceKey(map_id, index));
    if (!value) return value.error();
    if (!value->has_value()) return std::shared_ptr<const SourceRecord>();
    auto decoded = decodeSource(**value);
    if (!decoded) return decoded.error();
    auto shared = std::make_shared<const SourceRecord>(std::move(*decoded));
    std::unique_lock lock(mutex);
    reserve(sourceBytes(*shared));
    sources.emplace(key, shared);
    return shared;
  }

  Expected<std::shared_ptr<const std::vector<std::string>>> text(uint64_t map_id, uint32_t index,
                                                                 uint32_t chunk_index) {
    const std::pair<uint64_t, uint64_t> key{map_id, (static_cast<uint64_t>(index) << 32) | chunk_index};
    {
      std::shared_lock lock(mutex);
      if (auto it = texts.find(key); it != texts.end()) return it->second;
    }
    auto value = store.get(SymbolFamily::kSourcemap, textKey(map_id, index, chunk_index));
    if (!value) return value.error();
    if (!value->has_value()) return std::shared_ptr<const std::vector<std::string>>();
    auto decoded = decodeText(**value);
    if (!decoded) return decoded.error();
    auto shared = std::make_shared<const std::vector<std::string>>(std::move(*decoded));
    std::unique_lock lock(mutex);
    reserve((*value)->size() + shared->size() * sizeof(std::string));
    texts.emplace(key, shared);
    return shared;
  }

  Status attachContext(uint64_t map_id, uint32_t index, const SourceRecord& record, SymbolizedFrame& frame) {
    if (record.line_count == 0 || frame.line == 0 || frame.line > record.line_count) return Status::ok();
    const uint32_t around = options.context_lines;
    const uint32_t first = frame.line > around ? frame.line - around : 1;
    const uint32_t last = std::min(record.line_count, frame.line + around);
    std::shared_ptr<const std::vector<std::string>> lines;
    uint32_t loaded_chunk = UINT32_MAX;
    for (uint32_t line = first; line <= last; ++line) {
      const uint32_t chunk_index = (line - 1) / kLinesPerTextChunk;
      if (chunk_index != loaded_chunk) {
        auto loaded = text(map_id, index, chunk_index);
        if (!loaded) return loaded.status();
        lines = *loaded;
        loaded_chunk = chunk_index;
      }
      const uint32_t offset = (line - 1) % kLinesPerTextChunk;
      if (!lines || offset >= lines->size()) break;
      if (frame.context_lines.empty()) frame.context_first_line = line;
      frame.context_lines.push_back((*lines)[offset]);
    }
    return Status::ok();
  }

  // Looks up a 0-based generated position in `map_id` (recursing through index-map sections).
  Expected<FrameLookup> lookupAt(const EventScope& scope, uint64_t map_id, uint32_t line, uint32_t column,
                                 const std::string& module, std::string_view printed_function,
                                 uint32_t depth) {
    auto found_header = header(map_id);
    if (!found_header) return found_header.error();
    const std::shared_ptr<const MapHeader>& map = *found_header;
    if (!map) return FrameLookup::notFound("source map records of " + module + " are incomplete; re-upload the map");
    if (map->index_map) {
      const Section* section = nullptr;
      for (const Section& candidate : map->sections) {
        if (candidate.line < line || (candidate.line == line && candidate.column <= column)) {
          section = &candidate;
        } else {
          break;
        }
      }
      if (section == nullptr) return FrameLookup::notFound("position precedes the first section of the index map");
      if (depth >= kMaxSectionDepth) return FrameLookup::notFound("index map sections nest too deeply");
      const uint32_t inner_line = line - section->line;
      const uint32_t inner_column = line == section->line ? column - section->column : column;
      uint64_t child = 0;
      if (section->child) {
        child = *section->child;
      } else {
        auto resolved = resolveMap(scope, section->url_name);
        if (!resolved) return resolved.error();
        if (!resolved->has_value()) return FrameLookup::missing(section->url_name);
        child = **resolved;
      }
      return lookupAt(scope, child, inner_line, inner_column, module, printed_function, depth + 1);
    }

    auto found_chunk = chunk(map_id, line, column);
    if (!found_chunk) return found_chunk.error();
    const Segment* segment = *found_chunk ? (*found_chunk)->find(line, column) : nullptr;
    if (segment == nullptr || segment->source < 0) {
      return FrameLookup::notFound("the source map of " + module + " has no mapping at line " +
                                   std::to_string(line + 1) + " column " + std::to_string(column + 1));
    }
    auto found_source = source(map_id, static_cast<uint32_t>(segment->source));
    if (!found_source) return found_source.error();
    const std::shared_ptr<const SourceRecord>& record = *found_source;
    if (!record) return FrameLookup::notFound("source map records of " + module + " are incomplete; re-upload the map");

    FrameLookup result;
    result.status = FrameStatus::kSymbolicated;
    SymbolizedFrame frame;
    frame.file = record->path;
    frame.line = segment->original_line + 1;
    frame.column = segment->original_column + 1;
    frame.module = module;
    if (record->ignored) frame.in_app = false;
    const std::string* function = record->functions.entries.empty()
                                      ? nullptr
                                      : record->functions.enclosing(frame.line, segment->original_column);
    if (function != nullptr) {
      frame.function = *function;
      result.tier = record->origin == FunctionMapOrigin::kMetro ? "function_map" : "sourcemap";
    } else {
      frame.function = std::string(printed_function);
      result.tier = "sourcemap";
      result.note = "function name as printed: the map has no function map or sourcesContent for " + frame.file;
    }
    RESTACK_RETURN_IF_ERROR(attachContext(map_id, static_cast<uint32_t>(segment->source), *record, frame));
    result.frames.push_back(std::move(frame));
    return result;
  }
};

SourcemapResolver::SourcemapResolver(SymbolStore& store, const SourcemapResolverOptions& options)
    : impl_(new Impl(store, options)) {}
SourcemapResolver::~SourcemapResolver() = default;

Expected<FrameLookup> SourcemapResolver::lookup(const EventScope& scope, const stack::JsFrameLine& frame) {
  const std::string name = sourcemap::minifiedFileName(frame.url);
  if (name.empty() || name == "<anonymous>" || name == "native" || frame.line == 0) {
    return FrameLookup::notFound("frame has no script position");
  }
  impl_->checkGeneration();
  auto map_id = impl_->resolveMap(scope, name);
  if (!map_id) return map_id.error();
  if (!map_id->has_value()) return FrameLookup::missing(name);
  const uint32_t line = frame.line - 1;
  // Hermes bytecode offsets are 0-based already; printed JS columns are 1-based.
  const uint32_t column = frame.hermes_bytecode ? frame.column : (frame.column > 0 ? frame.column - 1 : 0);
  return impl_->lookupAt(scope, **map_id, line, column, name, frame.function, 0);
}

Expected<FrameLookup> SourcemapResolver::lookupBytecode(const EventScope& scope, std::string_view bundle,
                                                        uint32_t segment_id, uint32_t function_id,
                                                        uint32_t bytecode_offset) {
  const std::string name = sourcemap::minifiedFileName(bundle);
  impl_->checkGeneration();
  auto map_id = impl_->resolveMap(scope, name);
  if (!map_id) return map_id.error();
  if (!map_id->has_value()) return FrameLookup::missing(name);
  uint64_t id = **map_id;
  auto found = impl_->header(id);
  if (!found) return found.error();
  if (!*found) return FrameLookup::notFound("source map records of " + name + " are incomplete");
  std::shared_ptr<const MapHeader> map = *found;
  if (auto segment = map->facebook_segments.find(segment_id); segment != map->facebook_segments.end()) {
    id = segment->second;
    found = impl_->header(id);
    if (!found) return found.error();
    if (!*found) return FrameLookup::notFound("source map records of " + name + " are incomplete");
    map = *found;
  }
  auto offsets = map->hermes_function_offsets.find(segment_id);
  if (offsets == map->hermes_function_offsets.end()) {
    return FrameLookup::notFound("the map of " + name + " has no x_hermes_function_offsets for segment " +
                                 std::to_string(segment_id));
  }
  if (function_id >= offsets->second.size()) {
    return FrameLookup::notFound("function " + std::to_string(function_id) + " is not in segment " +
                                 std::to_string(segment_id) + " of " + name);
  }
  const uint64_t column = static_cast<uint64_t>(offsets->second[function_id]) + bytecode_offset;
  if (column > 0xffffffffull) return FrameLookup::notFound("bytecode offset out of range");
  return impl_->lookupAt(scope, id, segment_id, static_cast<uint32_t>(column), name, "", 0);
}

}  // namespace restack
