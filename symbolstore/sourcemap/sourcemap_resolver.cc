#include "symbolstore/sourcemap/sourcemap_resolver.h"

#include <rocksdb/db.h>

#include <atomic>
#include <cctype>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>

#include "formats/sourcemap/url.h"
#include "symbolstore/record_codec.h"
#include "symbolstore/sourcemap/sourcemap_cache.h"
#include "symbolstore/sourcemap/sourcemap_generation.h"
#include "symbolstore/sourcemap/sourcemap_records.h"

namespace restack {
namespace {

using namespace sourcemap_records;
using namespace sourcemap_cache;

constexpr uint32_t kMaxSectionDepth = 8;

using LineBlock = std::shared_ptr<const std::vector<std::string>>;

struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& key) const {
    return key.first * 0x9e3779b97f4a7c15ull ^ key.second;
  }
};

size_t sourceBytes(const SourceRecord& record) {
  size_t bytes =
      sizeof(SourceRecord) + record.path.size() + record.functions.entries.size() * sizeof(sourcemap::FunctionMapEntry);
  for (const auto& name : record.functions.names) bytes += sizeof(std::string) + name.size();
  return bytes;
}

// False for frames without a script file (eval code, native functions, no URL).
bool isScriptName(std::string_view name) {
  return !name.empty() && name != "<anonymous>" && name != "native";
}

// React Native bundle names repeat across builds, so their maps are keyed by build too.
std::string_view routeBuild(const EventScope& scope) {
  return scope.platform == "react_native" ? std::string_view(scope.build_id) : std::string_view();
}

// How far into the original text a divot `column` (JsColumns::kDivot) lies past the start of its
// segment at `segment_column` (both 0-based generated columns): the generated distance, unless
// the segment renames an identifier, whose original length is then the distance (`a(` ->
// `fail(`).
uint32_t divotOffset(uint32_t column, uint32_t segment_column, uint32_t name_length) {
  if (column <= segment_column) return 0;
  return name_length != 0 ? name_length : column - segment_column;
}

// The 0-based generated column a frame prints: Hermes bytecode offsets are 0-based already, JS
// columns 1-based.
uint32_t generatedColumn(const stack::JsFrameLine& frame) {
  return frame.hermes_bytecode ? frame.column : (frame.column > 0 ? frame.column - 1 : 0);
}

bool isIdentifierByte(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || static_cast<unsigned char>(c) >= 0x80;
}

// The 0-based UTF-16 column of the `occurrence`-th (0-based) appearance of identifier `name` as a
// whole word in code of `line` (not inside a string or after `//`) at or after column `from`, or
// ResolvedAnswer::kNoColumn. A line that starts inside a multi-line string or comment is read
// as code.
uint32_t identifierColumn(std::string_view line, std::string_view name, uint32_t from, size_t occurrence) {
  if (name.empty()) return ResolvedAnswer::kNoColumn;
  char quote = 0;
  for (size_t at = 0; at < line.size(); ++at) {
    const char c = line[at];
    if (quote != 0) {
      if (c == '\\') {
        ++at;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'' || c == '`') {
      quote = c;
      continue;
    }
    if (c == '/' && at + 1 < line.size() && line[at + 1] == '/') break;
    if (!line.substr(at).starts_with(name) || (at > 0 && isIdentifierByte(line[at - 1])) ||
        (at + name.size() < line.size() && isIdentifierByte(line[at + name.size()]))) {
      continue;
    }
    const uint32_t column = utf16Length(line.substr(0, at));
    if (column >= from && occurrence-- == 0) return column;
  }
  return ResolvedAnswer::kNoColumn;
}

// Whether the module name `name` fits std::string's inline buffer. Such a name is copied into the
// frame (no allocation) rather than shared with the route: sharing takes a reference on the
// route's name and the frame's destruction drops it, two atomic read-modify-writes that take longer
// than copying a few bytes. Set once at start-up: a function-local static would test its guard on
// every frame.
const size_t kInlineCapacity = std::string().capacity();
bool fitsInline(const std::string& name) {
  return name.size() <= kInlineCapacity;
}

// `restored` with its "<computed>" replaced by the key the frame printed, the last part of its
// name ("s.computedName" -> "Inventory.computedName"; JavaScriptCore prints "computedName").
std::string withRuntimeKey(const std::string& restored, std::string_view printed) {
  for (std::string_view prefix : {"new ", "async ", "get ", "set "}) {
    if (printed.starts_with(prefix)) printed.remove_prefix(prefix.size());
  }
  printed = printed.substr(0, printed.find(' '));  // "m [as n]"
  const size_t dot = printed.starts_with('[') ? std::string_view::npos : printed.rfind('.');
  const std::string_view key = dot == std::string_view::npos ? printed : printed.substr(dot + 1);
  const size_t at = restored.find(sourcemap::kComputedKeyName);
  if (key.empty() || key.find('<') != std::string_view::npos || at == std::string::npos) return restored;
  return restored.substr(0, at) + std::string(key) + restored.substr(at + sourcemap::kComputedKeyName.size());
}

// The answer for a resolved segment, written into `result` (a fresh FrameLookup). The frame's pin
// takes one reference on the cached answer, and the path, the function name and the context lines
// are borrowed from it (SymbolizedFrame::pin): no bytes copied, one atomic increment (and one
// decrement when the frame goes) whatever the answer holds. The tier is a static string. The
// module name is borrowed too when `shared_module` is the route name the answer keeps
// (ResolvedAnswer::module); else a name that fits inline (fitsInline) is copied, a longer one
// shared with `shared_module` when given (else copied). `column_offset` moves the original column
// past the segment's start (divotOffset). A function named with a computed key gets a name of its
// own (withRuntimeKey), the one copy.
void answerInto(const SegmentEntry& entry, const std::string& module, std::string_view printed_function,
                uint32_t column_offset, FrameLookup& result,
                const std::shared_ptr<const std::string>* shared_module = nullptr) {
  const ResolvedAnswer& answer = *entry.answer;
  result.status = FrameStatus::kSymbolicated;
  SymbolizedFrame& frame = result.frames.emplace_back();
  frame.pin = entry.answer;
  frame.file.borrow(answer.path);
  frame.line = entry.original_line + 1;
  frame.column =
      (answer.column != ResolvedAnswer::kNoColumn ? answer.column : entry.original_column) + 1 + column_offset;
  if (shared_module != nullptr && answer.module != nullptr && answer.module == *shared_module) {
    frame.module.borrow(answer.module.get());
  } else if (shared_module != nullptr && *shared_module && !fitsInline(module)) {
    frame.module.share(*shared_module, shared_module->get());
  } else {
    frame.module = module;
  }
  if (answer.ignored) frame.in_app = false;
  result.tier = *answer.tier;
  if (answer.function != nullptr) {
    if (answer.computed_key && !printed_function.empty()) [[unlikely]] {
      frame.function = withRuntimeKey(answer.function_name, printed_function);
    } else {
      frame.function.borrow(&answer.function_name);
    }
    frame.name_inferred = answer.function_inferred;
  } else {
    frame.function = printed_function;
    result.note = answer.note;
  }
  if (answer.count + answer.tail_count > 0) {
    frame.context_lines.borrow(answer.head ? answer.head.get() : &answer.owned, answer.first, answer.count,
                               answer.tail.get(), answer.tail_count);
    frame.context_first_line = answer.context_first_line;
  }
}

FrameLookup answerFor(const SegmentEntry& entry, std::string_view module, std::string_view printed_function,
                      uint32_t column_offset) {
  FrameLookup result;
  answerInto(entry, std::string(module), printed_function, column_offset, result);
  return result;
}

// Epochs of resolver caches, unique in the process: a thread's LastRoute names the resolver and
// the epoch its route pointer belongs to, so a dropped cache or a new resolver at the same
// address never matches it.
std::atomic<uint64_t> next_cache_epoch{1};

// The route of the last frame a thread looked up. A stack's frames mostly name the same bundle
// URL, so comparing the URL and the scope with the last ones replaces, per frame, parsing the
// file name out of the URL, hashing three strings and probing the route table.
struct LastRoute {
  const void* resolver = nullptr;
  uint64_t epoch = 0;
  std::string url, app, build;
  const Route* route = nullptr;  // a node of the resolver's route table, valid for `epoch`; its name is `url`'s file
};
thread_local LastRoute last_route;

FrameLookup unmapped(std::string_view module, uint32_t line, uint32_t column) {
  return FrameLookup::notFound(FrameReason::kPositionNotMapped,
                               "the source map of " + std::string(module) + " has no mapping at line " +
                                   std::to_string(line + 1) + " column " + std::to_string(column + 1));
}

}  // namespace

struct SourcemapResolver::Impl {
  Impl(SymbolStore& store_in, const SourcemapResolverOptions& options_in) : store(store_in), options(options_in) {}
  SymbolStore& store;
  SourcemapResolverOptions options;
  std::atomic<uint64_t> generation{sourcemapIngestGeneration()};

  // Everything below is guarded by `mutex`: readers share it, fills take it alone.
  mutable std::shared_mutex mutex;
  uint64_t epoch = next_cache_epoch.fetch_add(1);  // renewed whenever routes or maps are dropped
  size_t cached_bytes = 0;
  std::unordered_map<uint64_t, Route> routes;  // routeHash -> route
  std::unordered_map<uint64_t, std::shared_ptr<MapState>> maps;
  std::unordered_map<std::pair<uint64_t, uint64_t>, std::shared_ptr<const SourceRecord>, PairHash> sources;
  std::unordered_map<std::pair<uint64_t, uint64_t>, LineBlock, PairHash> texts;

  // Call with `mutex` held exclusively. Drops everything when `bytes` more would not fit.
  void reserve(size_t bytes) {
    if (cached_bytes + bytes <= options.cache_bytes) {
      cached_bytes += bytes;
      return;
    }
    routes.clear();
    maps.clear();
    sources.clear();
    texts.clear();
    epoch = next_cache_epoch.fetch_add(1);
    cached_bytes = bytes;
  }

  void checkGeneration() {
    const uint64_t now = sourcemapIngestGeneration();
    if (generation.load(std::memory_order_acquire) == now) return;
    std::unique_lock lock(mutex);
    // Map ids are content hashes, so sources and texts stay valid; map states go too, since an
    // upload of the minified file adds names ('f') to a map already cached.
    routes.clear();
    maps.clear();
    epoch = next_cache_epoch.fetch_add(1);
    generation.store(now, std::memory_order_release);
  }

  // The route of `frame`'s URL from the thread's last route, else one route probe; null when none
  // is cached. Call with `mutex` held (shared); the LastRoute stays valid until it is released.
  const LastRoute* warmRoute(const EventScope& scope, std::string_view build, const stack::JsFrameLine& frame) const {
    LastRoute& last = last_route;
    if (last.resolver != this || last.epoch != epoch || last.url != frame.url || last.app != scope.app ||
        last.build != build) {
      const std::string_view name = sourcemap::minifiedFileNameView(frame.url);
      if (!isScriptName(name)) return nullptr;
      auto found = routes.find(routeHash(scope.app, build, name));
      if (found == routes.end() || !found->second.matches(scope.app, build, name)) return nullptr;
      last.resolver = this;
      last.epoch = epoch;
      last.url = frame.url;
      last.app = scope.app;
      last.build = build;
      last.route = &found->second;
    }
    return &last;
  }

  // The answer of a route that names no map (kMissing, kNotFound) into `out`; false for kMap.
  static bool routeAnswer(const Route& route, const std::string& name, FrameLookup& out) {
    if (route.kind == Route::Kind::kMissing) {
      out = FrameLookup::missing(name, MissingIdKind::kBundle);
      return true;
    }
    if (route.kind == Route::Kind::kNotFound) {
      out = FrameLookup::notFound(route.reason, route.note);
      return true;
    }
    return false;
  }

  // ---- warm path: the thread's last route (else one route probe), two binary searches, one
  // shared lock; the answer is written into `out`, a fresh FrameLookup ----
  bool warmLookup(const EventScope& scope, const stack::JsFrameLine& frame, uint32_t line, uint32_t column, bool divot,
                  FrameLookup& out) const {
    const std::string_view build = routeBuild(scope);
    std::shared_lock lock(mutex);
    const LastRoute* last = warmRoute(scope, build, frame);
    if (last == nullptr) return false;
    const Route& route = *last->route;
    const std::string& name = *route.name;
    if (routeAnswer(route, name, out)) return true;
    const MapState* state = route.state;
    if (state == nullptr || state->header->index_map || line > UINT32_MAX - route.line_offset) return false;
    line += route.line_offset;
    const ChunkSlot* slot = state->find(line, column);
    if (slot == nullptr) return false;
    const int index = slot->find(line, column);
    if (index < 0 || !slot->entries[index].answer) return false;
    const uint32_t offset =
        divot ? divotOffset(column, static_cast<uint32_t>(slot->positions[index]), slot->chunk->nameLength(index)) : 0;
    answerInto(slot->entries[index], name, stack::functionName(frame), offset, out, &route.name);
    return true;
  }

  // At most how many frames warmGroup takes at once: enough for a stack's cache misses to
  // overlap, few enough for their memory to stay in the first-level cache between stages.
  static constexpr size_t kGroup = 16;

  // The warm path for up to kGroup frames of one stack (SourcemapResolver::lookupStack): the same
  // answers as warmLookup, under one shared lock, in stages — each frame's chunk slot, its column
  // bucket, its segment entry, its answer — each stage fetching for every frame the memory the
  // next one reads, so that the cache misses of the frames overlap instead of following each
  // other. Returns the frames answered into `out` (bit i: frames[i]).
  uint32_t warmGroup(const EventScope& scope, std::span<const JsFrameQuery> frames, FrameLookup* out) const {
    struct Pending {
      uint32_t frame;  // index into `frames`
      uint32_t line;   // 0-based, with the route's line offset
      uint32_t column;
      const ChunkSlot* slot;
      const Route* route;
      ChunkSlot::Range range;
      const SegmentEntry* entry;
    };
    std::array<Pending, kGroup> pending;
    const std::string_view build = routeBuild(scope);
    uint32_t answered = 0;
    size_t count = 0;
    std::shared_lock lock(mutex);
    // Frames of one stack mostly print the same URL: the route is looked up again only when it
    // changes (the scope is the same for all).
    const LastRoute* last = nullptr;
    const std::string* last_url = nullptr;
    for (size_t i = 0; i < frames.size(); ++i) {
      const stack::JsFrameLine& frame = *frames[i].frame;
      if (frame.hermes_function_offset || frame.line == 0 || frame.url.starts_with("node:")) continue;
      if (last_url == nullptr || *last_url != frame.url) {
        last = warmRoute(scope, build, frame);
        last_url = last != nullptr ? &frame.url : nullptr;
        if (last == nullptr) continue;
      }
      const Route& route = *last->route;
      if (route.kind != Route::Kind::kMap && routeAnswer(route, *route.name, out[i])) {
        answered |= 1u << i;
        continue;
      }
      uint32_t line = frame.line - 1;
      const uint32_t column = generatedColumn(frame);
      const MapState* state = route.state;
      if (state == nullptr || state->header->index_map || line > UINT32_MAX - route.line_offset) continue;
      line += route.line_offset;
      const ChunkSlot* slot = state->find(line, column);
      if (slot == nullptr) continue;
      __builtin_prefetch(slot);
      __builtin_prefetch(&slot->bucket_start[ChunkSlot::kBuckets / 2]);
      pending[count++] = {static_cast<uint32_t>(i), line, column, slot, &route, {}, nullptr};
    }
    for (size_t p = 0; p < count; ++p) {
      Pending& at = pending[p];
      at.range = at.slot->range(at.line, at.column);
      ChunkSlot::prefetchPositions(at.range);
    }
    for (size_t p = 0; p < count; ++p) {
      Pending& at = pending[p];
      const int index = at.slot->search(at.range, at.line, at.column);
      if (index >= 0) {
        at.entry = &at.slot->entries[index];
        __builtin_prefetch(at.entry);
      }
    }
    for (size_t p = 0; p < count; ++p) {
      Pending& at = pending[p];
      if (at.entry == nullptr) continue;
      if (at.entry->answer) {
        prefetchAnswer(at.entry->answer.get());
      } else {
        at.entry = nullptr;
      }
    }
    for (size_t p = 0; p < count; ++p) {
      const Pending& at = pending[p];
      if (at.entry == nullptr) continue;
      const size_t index = static_cast<size_t>(at.entry - at.slot->entries);
      const uint32_t offset = frames[at.frame].columns == JsColumns::kDivot
                                  ? divotOffset(at.column, static_cast<uint32_t>(at.slot->positions[index]),
                                                at.slot->chunk->nameLength(index))
                                  : 0;
      answerInto(*at.entry, *at.route->name, stack::functionName(*frames[at.frame].frame), offset, out[at.frame],
                 &at.route->name);
      answered |= 1u << at.frame;
    }
    return answered;
  }

  // ---- cold path: RocksDB reads, each result cached ----
  Expected<std::optional<uint64_t>> pointer(const std::string& key) {
    auto value = store.lookup(sourcemap_records::kSourcemapFamily, key);
    if (!value) return value.error();
    if (!value->has_value()) return std::optional<uint64_t>();
    auto id = decodePointer(**value, key);
    if (!id) return id.error();
    return std::optional<uint64_t>(*id);
  }

  // The map uploaded under `name` for this app/build, else a shared upload of that name.
  Expected<std::optional<uint64_t>> uploadedMap(const EventScope& scope, std::string_view name) {
    for (const std::string& key : {pointerKey(scope.app, routeBuild(scope), name), pointerKey("", "", name)}) {
      auto id = pointer(key);
      if (!id || id->has_value()) return id;
    }
    return std::optional<uint64_t>();
  }

  // Every map id uploaded for this app/build (for frames that name no bundle at all).
  Expected<std::set<uint64_t>> mapsOfBuild(const EventScope& scope) {
    std::string prefix = pointerKey(scope.app, routeBuild(scope), "");
    std::set<uint64_t> ids;
    std::unique_ptr<rocksdb::Iterator> it(
        store.db().NewIterator(store.lookupReadOptions(), store.family(sourcemap_records::kSourcemapFamily)));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      if (it->key().ToStringView().substr(prefix.size()).starts_with(kRamBundlePointerName)) continue;
      auto id = decodePointer(it->value().ToStringView(), it->key().ToStringView());
      if (!id) return id.error();
      ids.insert(*id);
    }
    if (!it->status().ok()) {
      return ioError("symbol store " + store.options().path + ": read failed: " + it->status().ToString());
    }
    return ids;
  }

  Expected<std::shared_ptr<MapState>> mapState(uint64_t map_id) {
    {
      std::shared_lock lock(mutex);
      if (auto it = maps.find(map_id); it != maps.end()) return it->second;
    }
    const std::string key = headerKey(map_id);
    auto value = store.lookup(sourcemap_records::kSourcemapFamily, key);
    if (!value) return value.error();
    if (!value->has_value()) return std::shared_ptr<MapState>();
    auto decoded = decodeHeader(**value, key);
    if (!decoded) return decoded.error();
    auto state = std::make_shared<MapState>();
    state->id = map_id;
    state->header = std::make_shared<const MapHeader>(std::move(*decoded));
    auto functions_value = store.lookup(sourcemap_records::kSourcemapFamily, generatedFunctionsKey(map_id));
    if (!functions_value) return functions_value.error();
    if (functions_value->has_value()) {
      auto functions = decodeGeneratedFunctions(**functions_value);
      if (!functions) return functions.error();
      state->generated_functions_first = functions->origin == GeneratedFunctionsOrigin::kScopes;
      state->generated_functions = std::make_shared<const sourcemap::FunctionMap>(std::move(functions->functions));
    }
    std::unique_lock lock(mutex);
    reserve(sizeof(MapState) + (*value)->size() + (functions_value->has_value() ? (*functions_value)->size() * 3 : 0));
    auto [it, inserted] = maps.emplace(map_id, state);
    return it->second;
  }

  // Which map serves `name` (see Route), computed once per app/build/name.
  Expected<Route> computeRoute(const EventScope& scope, std::string_view name) {
    Route route;
    auto direct = uploadedMap(scope, name);
    if (!direct) return direct.error();
    if (direct->has_value()) {
      route.kind = Route::Kind::kMap;
      route.map_id = **direct;
      return route;
    }
    if (name.empty()) {
      // A Hermes crash frame without SourceURL: fine when the build has exactly one map.
      auto ids = mapsOfBuild(scope);
      if (!ids) return ids.error();
      if (ids->size() == 1) {
        route.kind = Route::Kind::kMap;
        route.map_id = *ids->begin();
      } else {
        route.kind = Route::Kind::kNotFound;
        route.reason = FrameReason::kBundleUnknown;
        route.note = "the frame names no bundle (no SourceURL) and " + std::to_string(ids->size()) +
                     " source maps are uploaded for this build; cannot tell which one to use";
      }
      return route;
    }
    const auto module = sourcemap::parseRamBundleName(name);
    if (!module) return route;  // kMissing
    auto ram = uploadedMap(scope, kRamBundlePointerName);
    if (!ram) return ram.error();
    if (!ram->has_value()) return route;  // kMissing: no RAM-bundle map either
    auto bundle = mapState(**ram);
    if (!bundle) return bundle.error();
    route.kind = Route::Kind::kNotFound;
    if (!*bundle) {
      route.reason = FrameReason::kMalformedSymbols;
      route.note = "source map records of the RAM bundle are incomplete; re-upload the map";
      return route;
    }
    uint64_t segment_map = **ram;
    if (module->segment != 0) {
      const auto& segments = (*bundle)->header->facebook_segments;
      auto segment = segments.find(module->segment);
      if (segment == segments.end()) {
        route.reason = FrameReason::kPositionNotMapped;
        route.note = "the RAM bundle map (" + (*bundle)->header->file + ") has no segment " +
                     std::to_string(module->segment) + " in x_facebook_segments";
        return route;
      }
      segment_map = segment->second;
    }
    if (module->module) {
      auto segment = mapState(segment_map);
      if (!segment) return segment.error();
      if (!*segment) {
        route.reason = FrameReason::kMalformedSymbols;
        route.note = "source map records of the RAM bundle are incomplete; re-upload the map";
        return route;
      }
      const auto& offsets = (*segment)->header->module_offsets;
      if (*module->module >= offsets.size() || offsets[*module->module] == sourcemap::kNoModuleOffset) {
        route.reason = FrameReason::kPositionNotMapped;
        route.note = "module " + std::to_string(*module->module) + " is not in x_facebook_offsets of segment " +
                     std::to_string(module->segment) + " of the RAM bundle map";
        return route;
      }
      route.line_offset = offsets[*module->module];
    }
    route.kind = Route::Kind::kMap;
    route.map_id = segment_map;
    return route;
  }

  Expected<Route> route(const EventScope& scope, std::string_view name) {
    const std::string_view build = routeBuild(scope);
    const uint64_t hash = routeHash(scope.app, build, name);
    {
      std::shared_lock lock(mutex);
      auto it = routes.find(hash);
      if (it != routes.end() && it->second.matches(scope.app, build, name)) return it->second;
    }
    auto computed = computeRoute(scope, name);
    if (!computed) return computed.error();
    computed->app = scope.app;
    computed->build = std::string(build);
    computed->name = std::make_shared<const std::string>(name);
    std::shared_ptr<MapState> state;
    if (computed->kind == Route::Kind::kMap) {
      auto loaded = mapState(computed->map_id);
      if (!loaded) return loaded.error();
      state = *loaded;
    }
    std::unique_lock lock(mutex);
    reserve(sizeof(Route) + 2 * name.size() + 48 + scope.app.size() + build.size());
    if (state) {
      // Point at the state the cache holds (re-adopting ours if a drop emptied the cache since).
      computed->state = maps.emplace(computed->map_id, state).first->second.get();
    }
    // Replacing a route (another name with the same hash) renews the epoch: threads remember
    // routes by address (LastRoute).
    if (!routes.insert_or_assign(hash, *computed).second) epoch = next_cache_epoch.fetch_add(1);
    return *computed;
  }

  // The chunk whose range covers (line, column), or null when the position precedes every mapping.
  Expected<std::shared_ptr<CachedChunk>> chunk(MapState& state, uint32_t line, uint32_t column) {
    {
      std::shared_lock lock(mutex);
      if (const ChunkSlot* slot = state.find(line, column)) return slot->chunk;
    }
    std::unique_ptr<rocksdb::Iterator> it(
        store.db().NewIterator(store.lookupReadOptions(), store.family(sourcemap_records::kSourcemapFamily)));
    it->SeekForPrev(chunkKey(state.id, line, column));
    if (!it->status().ok()) {
      return ioError("symbol store " + store.options().path + ": read failed: " + it->status().ToString());
    }
    uint32_t start_line = 0, start_column = 0;
    if (!it->Valid() || !parseChunkKey(it->key().ToStringView(), state.id, &start_line, &start_column)) {
      return std::shared_ptr<CachedChunk>();
    }
    auto decoded = decodeChunk(it->value().ToStringView(), start_line, start_column, it->key().ToStringView());
    if (!decoded) return decoded.error();
    auto cached = std::make_shared<CachedChunk>(*decoded);
    std::unique_lock lock(mutex);
    reserve(cached->bytes());
    state.insert(cached);
    return cached;
  }

  Expected<std::shared_ptr<const SourceRecord>> source(uint64_t map_id, uint32_t index) {
    const std::pair<uint64_t, uint64_t> key{map_id, index};
    {
      std::shared_lock lock(mutex);
      if (auto it = sources.find(key); it != sources.end()) return it->second;
    }
    const std::string record_key = sourceKey(map_id, index);
    auto value = store.lookup(sourcemap_records::kSourcemapFamily, record_key);
    if (!value) return value.error();
    if (!value->has_value()) return std::shared_ptr<const SourceRecord>();
    auto decoded = decodeSource(**value, record_key);
    if (!decoded) return decoded.error();
    auto shared = std::make_shared<const SourceRecord>(std::move(*decoded));
    std::unique_lock lock(mutex);
    reserve(sourceBytes(*shared));
    sources.emplace(key, shared);
    return shared;
  }

  Expected<LineBlock> text(uint64_t map_id, uint32_t index, uint32_t chunk_index) {
    const std::pair<uint64_t, uint64_t> key{map_id, (static_cast<uint64_t>(index) << 32) | chunk_index};
    {
      std::shared_lock lock(mutex);
      if (auto it = texts.find(key); it != texts.end()) return it->second;
    }
    const std::string record_key = textKey(map_id, index, chunk_index);
    auto value = store.lookup(sourcemap_records::kSourcemapFamily, record_key);
    if (!value) return value.error();
    if (!value->has_value()) return LineBlock();
    auto decoded = decodeText(**value, record_key);
    if (!decoded) return decoded.error();
    auto shared = std::make_shared<const std::vector<std::string>>(std::move(*decoded));
    std::unique_lock lock(mutex);
    reserve((*value)->size() + shared->size() * sizeof(std::string));
    texts.emplace(key, shared);
    return shared;
  }

  // Lines [line - context_lines, line + context_lines] of the source, as slices of its cached
  // text blocks (two at most; a wider window is copied into `owned`).
  Status context(uint64_t map_id, uint32_t index, const SourceRecord& record, uint32_t line, ResolvedAnswer& answer) {
    if (record.line_count == 0 || line == 0 || line > record.line_count) return Status::ok();
    const uint32_t around = options.context_lines;
    const uint32_t first = line > around ? line - around : 1;
    const uint32_t last = std::min(record.line_count, line + around);
    struct Slice {
      LineBlock block;
      uint32_t from, to;  // [from, to) within the block
    };
    std::vector<Slice> slices;
    for (uint32_t block_index = (first - 1) / kLinesPerTextChunk; block_index <= (last - 1) / kLinesPerTextChunk;
         ++block_index) {
      auto block = text(map_id, index, block_index);
      if (!block) return block.status();
      const uint32_t block_first = block_index * kLinesPerTextChunk + 1;
      const uint32_t from = std::max(first, block_first) - block_first;
      const uint32_t to = std::min(last - block_first + 1, kLinesPerTextChunk);
      if (!*block || from >= (*block)->size()) break;
      const uint32_t available = std::min<uint32_t>(to, static_cast<uint32_t>((*block)->size()));
      slices.push_back({*block, from, available});
      if (available < to) break;  // a short block: the text ends here
    }
    if (slices.empty()) return Status::ok();
    answer.context_first_line = first;
    if (slices.size() <= 2 && (slices.size() == 1 || slices[1].from == 0)) {
      answer.head = slices[0].block;
      answer.first = slices[0].from;
      answer.count = slices[0].to - slices[0].from;
      if (slices.size() == 2) {
        answer.tail = slices[1].block;
        answer.tail_count = slices[1].to;
      }
    } else {
      for (const Slice& slice : slices) {
        for (uint32_t i = slice.from; i < slice.to; ++i) answer.owned.push_back((*slice.block)[i]);
      }
      answer.count = static_cast<uint32_t>(answer.owned.size());
    }
    return Status::ok();
  }

  // A line-only mapping (webpack maps every token of a module it did not transform to its line's
  // start, and a minifier after it keeps that) says the line, not where on it: the segment and
  // its neighbours on the generated line share one original position. When the segment names an
  // identifier and the source text is known, the original column is where that identifier
  // stands on the line, the k-th time it appears when k earlier segments of the same run name it
  // too. That column, inside the right function of the line, is returned; kNoColumn otherwise.
  Expected<uint32_t> refineLineOnly(MapState& state, const CachedChunk& chunk, size_t index,
                                    const SourceRecord& record) {
    const SegmentEntry& entry = chunk.entries[index];
    auto samePosition = [&](size_t other) {
      const SegmentEntry& neighbour = chunk.entries[other];
      return (chunk.positions[other] >> 32) == (chunk.positions[index] >> 32) && neighbour.source == entry.source &&
             neighbour.original_line == entry.original_line && neighbour.original_column == entry.original_column;
    };
    const bool line_only =
        (index > 0 && samePosition(index - 1)) || (index + 1 < chunk.entries.size() && samePosition(index + 1));
    if (!line_only || entry.name < 0 || record.line_count <= entry.original_line) return ResolvedAnswer::kNoColumn;
    size_t occurrence = 0;
    for (size_t before = index; before > 0 && samePosition(before - 1); --before) {
      occurrence += chunk.entries[before - 1].name == entry.name;
    }
    auto block = text(state.id, static_cast<uint32_t>(entry.source), entry.original_line / kLinesPerTextChunk);
    if (!block) return block.error();
    const size_t in_block = entry.original_line % kLinesPerTextChunk;
    if (!*block || in_block >= (*block)->size()) return ResolvedAnswer::kNoColumn;
    const std::string_view line = (**block)[in_block];
    const std::string_view name = chunk.names[static_cast<size_t>(entry.name)];
    // Where the segment's identifier stands at its own column, the map is precise there (a
    // precise map may give several segments one position: Hermes' bytecode offsets).
    if (identifierColumn(line, name, entry.original_column, 0) == entry.original_column) {
      return ResolvedAnswer::kNoColumn;
    }
    return identifierColumn(line, name, entry.original_column, occurrence);
  }

  // Resolves segment `index` of `chunk` once (source record, function, context), sharing the
  // answer with every other segment of the same source line, function and refined column.
  Expected<std::shared_ptr<const ResolvedAnswer>> resolveSegment(
      MapState& state, CachedChunk& chunk, size_t index, std::string_view module,
      const std::shared_ptr<const std::string>* module_name) {
    {
      std::shared_lock lock(mutex);
      if (chunk.entries[index].answer) return chunk.entries[index].answer;
    }
    const SegmentEntry& entry = chunk.entries[index];  // position fields never change
    auto record = source(state.id, static_cast<uint32_t>(entry.source));
    if (!record) return record.error();
    if (!*record) {
      return notFound("source map records of " + std::string(module) + " are incomplete; re-upload the map");
    }
    const std::string* function = nullptr;
    bool function_inferred = false;
    auto nameFrom = [&function, &function_inferred](const sourcemap::FunctionMap& functions, uint32_t line,
                                                    uint32_t column) {
      function = functions.enclosing(line, column);
      function_inferred = function != nullptr && functions.isInferred(function);
    };
    const uint64_t generated_position = chunk.positions[index];
    const uint32_t generated_line = static_cast<uint32_t>(generated_position >> 32) + 1;
    const uint32_t generated_column = static_cast<uint32_t>(generated_position & 0xffffffffu);
    if (state.generated_functions && state.generated_functions_first) {
      // The map's "scopes": what the compiler recorded for this generated position.
      nameFrom(*state.generated_functions, generated_line, generated_column);
    }
    auto refined = refineLineOnly(state, chunk, index, **record);
    if (!refined) return refined.error();
    const uint32_t original_column = *refined != ResolvedAnswer::kNoColumn ? *refined : entry.original_column;
    if (function == nullptr && !(*record)->functions.entries.empty()) {
      nameFrom((*record)->functions, entry.original_line + 1, original_column);
    }
    if (function == nullptr && state.generated_functions) {
      // No original source to scan: the minified file's scope at this segment, named through
      // the map (sourcemap_minified.h).
      nameFrom(*state.generated_functions, generated_line, generated_column);
    }
    const auto key = std::make_tuple(entry.source, entry.original_line, function, *refined);
    {
      std::shared_lock lock(mutex);
      if (auto it = state.answers.find(key); it != state.answers.end()) {
        lock.unlock();
        std::unique_lock write(mutex);
        if (!chunk.entries[index].answer) chunk.entries[index].answer = it->second;
        return chunk.entries[index].answer;
      }
    }
    auto answer = std::make_shared<ResolvedAnswer>();
    answer->source = *record;
    answer->function = function;
    answer->function_inferred = function_inferred;
    answer->column = *refined;
    if (function != nullptr) answer->function_name = *function;
    answer->computed_key = answer->function_name.find(sourcemap::kComputedKeyName) != std::string::npos;
    answer->path = &(*record)->path;
    answer->ignored = (*record)->ignored;
    if (module_name != nullptr && *module_name && **module_name == module) answer->module = *module_name;
    static const std::string kFunctionMapTier = "function_map", kSourcemapTier = "sourcemap";
    answer->tier =
        function != nullptr && (*record)->origin == FunctionMapOrigin::kMetro ? &kFunctionMapTier : &kSourcemapTier;
    if (function == nullptr) {
      answer->note = "function name as printed: the map has no function map, scopes or sourcesContent for " +
                     (*record)->path + ", and no minified file was uploaded beside it";
    }
    RESTACK_RETURN_IF_ERROR(
        context(state.id, static_cast<uint32_t>(entry.source), **record, entry.original_line + 1, *answer));
    std::unique_lock lock(mutex);
    reserve(sizeof(ResolvedAnswer) + 64 + (function != nullptr ? function->size() : 0));
    auto [it, inserted] = state.answers.emplace(key, std::move(answer));
    if (!chunk.entries[index].answer) chunk.entries[index].answer = it->second;
    return chunk.entries[index].answer;
  }

  // Looks up a 0-based generated position in `map_id` (recursing through index-map sections).
  // `divot`: the column is JavaScriptCore's (JsColumns::kDivot). `module_name`: the route's name
  // (Route::name) when `module` is it, kept by a newly resolved answer (ResolvedAnswer::module).
  Expected<FrameLookup> lookupAt(const EventScope& scope, uint64_t map_id, uint32_t line, uint32_t column,
                                 std::string_view module, std::string_view printed_function, uint32_t depth, bool divot,
                                 const std::shared_ptr<const std::string>* module_name) {
    auto found_state = mapState(map_id);
    if (!found_state) return found_state.error();
    if (!*found_state) {
      return FrameLookup::notFound(FrameReason::kMalformedSymbols, "source map records of " + std::string(module) +
                                                                       " are incomplete; re-upload the map");
    }
    MapState& state = **found_state;
    const MapHeader& map = *state.header;
    if (map.index_map) {
      const Section* section = nullptr;
      for (const Section& candidate : map.sections) {
        if (candidate.line < line || (candidate.line == line && candidate.column <= column)) {
          section = &candidate;
        } else {
          break;
        }
      }
      if (section == nullptr)
        return FrameLookup::notFound(FrameReason::kPositionNotMapped,
                                     "position precedes the first section of the index map");
      if (depth >= kMaxSectionDepth)
        return FrameLookup::notFound(FrameReason::kMalformedSymbols, "index map sections nest too deeply");
      const uint32_t inner_line = line - section->line;
      const uint32_t inner_column = line == section->line ? column - section->column : column;
      uint64_t child = 0;
      if (section->child) {
        child = *section->child;
      } else {
        auto resolved = route(scope, section->url_name);
        if (!resolved) return resolved.error();
        if (resolved->kind == Route::Kind::kMissing)
          return FrameLookup::missing(section->url_name, MissingIdKind::kBundle);
        if (resolved->kind == Route::Kind::kNotFound) return FrameLookup::notFound(resolved->reason, resolved->note);
        child = resolved->map_id;
      }
      return lookupAt(scope, child, inner_line, inner_column, module, printed_function, depth + 1, divot, module_name);
    }

    auto found_chunk = chunk(state, line, column);
    if (!found_chunk) return found_chunk.error();
    const int index = *found_chunk ? ChunkSlot(*found_chunk).find(line, column) : -1;
    if (index < 0 || (*found_chunk)->entries[static_cast<size_t>(index)].source < 0) {
      return unmapped(module, line, column);
    }
    auto answer = resolveSegment(state, **found_chunk, static_cast<size_t>(index), module, module_name);
    if (!answer) {
      // resolveSegment: the segment names a source whose record is not stored.
      if (answer.error().code() == ErrorCode::kNotFound) {
        return FrameLookup::notFound(FrameReason::kMalformedSymbols, answer.error().message());
      }
      return answer.error();
    }
    SegmentEntry entry = (*found_chunk)->entries[static_cast<size_t>(index)];
    entry.answer = *answer;
    const uint32_t segment_column = static_cast<uint32_t>((*found_chunk)->positions[static_cast<size_t>(index)]);
    return answerFor(entry, module, printed_function,
                     divot ? divotOffset(column, segment_column, (*found_chunk)->nameLength(index)) : 0);
  }

  // A frame the warm path could not answer (0-based line and column).
  Expected<FrameLookup> coldLookup(const EventScope& scope, const stack::JsFrameLine& frame, uint32_t line,
                                   uint32_t column, bool divot) {
    const std::string_view name = sourcemap::minifiedFileNameView(frame.url);
    if (!isScriptName(name)) return FrameLookup::notFound(FrameReason::kNoPosition, "frame has no script position");
    auto answer = lookupName(scope, name, line, column, stack::functionName(frame), divot);
    // A record that cannot be read (records::RecordReader) leaves this frame unrestored, with why.
    if (!answer && records::isUnreadableRecord(answer.error())) {
      return FrameLookup::notFound(FrameReason::kMalformedSymbols, answer.error().message());
    }
    return answer;
  }

  // A position printed in the file `name`: the route, then the map (0-based line and column).
  Expected<FrameLookup> lookupName(const EventScope& scope, std::string_view name, uint32_t line, uint32_t column,
                                   std::string_view printed_function, bool divot) {
    auto found = route(scope, name);
    if (!found) return found.error();
    if (found->kind == Route::Kind::kMissing) return FrameLookup::missing(std::string(name), MissingIdKind::kBundle);
    if (found->kind == Route::Kind::kNotFound) return FrameLookup::notFound(found->reason, found->note);
    if (line > UINT32_MAX - found->line_offset) {
      return FrameLookup::notFound(FrameReason::kPositionNotMapped, "line out of range");
    }
    return lookupAt(scope, found->map_id, line + found->line_offset, column, name, printed_function, 0, divot,
                    &found->name);
  }
};

const char* scriptNoUploadRestores(std::string_view url) {
  // Node's built-in modules are compiled into node (an event is not "partial" for its
  // listOnTimeout frame).
  if (url.starts_with("node:")) return "node built-in module";
  // Hermes's own JavaScript (its Promise and other built-ins, compiled into the engine).
  if (sourcemap::minifiedFileNameView(url) == "InternalBytecode.js")
    return "Hermes built-in code (InternalBytecode.js)";
  // A user's browser extension runs in the page; the app's builds hold none of its code.
  for (std::string_view scheme :
       {"chrome-extension:", "moz-extension:", "safari-extension:", "safari-web-extension:", "ms-browser-extension:"}) {
    if (url.starts_with(scheme)) return "a browser extension's code";
  }
  // Code made at run time from a string: its URL names no file a map was uploaded for.
  if (url.starts_with("blob:") || url.starts_with("data:")) return "code created at run time (blob: or data: URL)";
  return nullptr;
}

SourcemapResolver::SourcemapResolver(SymbolStore& store, const SourcemapResolverOptions& options)
    : impl_(new Impl(store, options)) {}
SourcemapResolver::~SourcemapResolver() = default;

void SourcemapResolver::storeChanged() {
  sourcemap_records::noteSourcemapIngested();
}

Expected<FrameLookup> SourcemapResolver::lookup(const EventScope& scope, const stack::JsFrameLine& frame,
                                                JsColumns columns) {
  if (frame.hermes_function_offset) {
    return lookupBytecode(scope, frame.url, frame.segment_id, frame.function_id, frame.bytecode_offset);
  }
  if (frame.line == 0) return FrameLookup::notFound(FrameReason::kNoPosition, "frame has no script position");
  if (const char* why = scriptNoUploadRestores(frame.url)) return FrameLookup::notFound(FrameReason::kRuntimeCode, why);
  impl_->checkGeneration();
  const uint32_t line = frame.line - 1;
  const uint32_t column = generatedColumn(frame);
  // One return of one object: the warm answer is written where the caller receives it.
  Expected<FrameLookup> result(std::in_place);
  const bool divot = columns == JsColumns::kDivot;
  if (!impl_->warmLookup(scope, frame, line, column, divot, *result)) {
    result = impl_->coldLookup(scope, frame, line, column, divot);
  }
  return result;
}

Status SourcemapResolver::lookupStack(const EventScope& scope, std::span<const JsFrameQuery> frames,
                                      std::vector<FrameLookup>& answers) {
  answers.clear();
  answers.resize(frames.size());
  impl_->checkGeneration();
  for (size_t group = 0; group < frames.size(); group += Impl::kGroup) {
    const std::span<const JsFrameQuery> part = frames.subspan(group, std::min(Impl::kGroup, frames.size() - group));
    const uint32_t answered = impl_->warmGroup(scope, part, answers.data() + group);
    for (size_t i = 0; i < part.size(); ++i) {
      if ((answered >> i) & 1u) continue;
      auto answer = lookup(scope, *part[i].frame, part[i].columns);
      if (!answer) return answer.error();
      answers[group + i] = std::move(*answer);
    }
  }
  return Status::ok();
}

Expected<FrameLookup> SourcemapResolver::lookupBytecode(const EventScope& scope, std::string_view bundle,
                                                        uint32_t segment_id, uint32_t function_id,
                                                        uint32_t bytecode_offset) {
  auto answer = [&]() -> Expected<FrameLookup> {
    const std::string_view name = sourcemap::minifiedFileNameView(bundle);
    impl_->checkGeneration();
    auto found = impl_->route(scope, name);
    if (!found) return found.error();
    const std::string shown = name.empty() ? std::string("the bundle") : std::string(name);
    if (found->kind == Route::Kind::kMissing) return FrameLookup::missing(shown, MissingIdKind::kBundle);
    if (found->kind == Route::Kind::kNotFound) return FrameLookup::notFound(found->reason, found->note);
    auto state = impl_->mapState(found->map_id);
    if (!state) return state.error();
    if (!*state) {
      return FrameLookup::notFound(FrameReason::kMalformedSymbols,
                                   "source map records of " + shown + " are incomplete");
    }
    const MapHeader& map = *(*state)->header;
    auto offsets = map.hermes_function_offsets.find(segment_id);
    if (offsets == map.hermes_function_offsets.end()) {
      return FrameLookup::notFound(
          FrameReason::kPositionNotMapped,
          "the map of " + shown + " has no x_hermes_function_offsets for segment " + std::to_string(segment_id));
    }
    if (function_id >= offsets->second.size()) {
      return FrameLookup::notFound(FrameReason::kPositionNotMapped, "function " + std::to_string(function_id) +
                                                                        " is not in segment " +
                                                                        std::to_string(segment_id) + " of " + shown);
    }
    const uint64_t column = static_cast<uint64_t>(offsets->second[function_id]) + bytecode_offset;
    const uint64_t line = static_cast<uint64_t>(segment_id) + found->line_offset;
    if (column > 0xffffffffull || line > 0xffffffffull)
      return FrameLookup::notFound(FrameReason::kPositionNotMapped, "bytecode offset out of range");
    const std::string module = name.empty() ? map.file : std::string(name);
    return impl_->lookupAt(scope, found->map_id, static_cast<uint32_t>(line), static_cast<uint32_t>(column), module, "",
                           0, /*divot=*/false, &found->name);
  }();
  // A record that cannot be read (records::RecordReader) leaves this frame unrestored, with why.
  if (!answer && records::isUnreadableRecord(answer.error())) {
    return FrameLookup::notFound(FrameReason::kMalformedSymbols, answer.error().message());
  }
  return answer;
}

std::unique_ptr<Resolver> makeSourcemapResolver(SymbolStore& store, const SymbolizerOptions& options) {
  SourcemapResolverOptions resolver_options;
  resolver_options.cache_bytes = options.cacheBytes("sourcemap", resolver_options.cache_bytes);
  return std::make_unique<SourcemapResolver>(store, resolver_options);
}

}  // namespace restack
