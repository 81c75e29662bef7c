#include "symbolstore/native/native_resolver.h"

#include <rocksdb/iterator.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "formats/common/system_images.h"
#include "formats/native/demangle.h"
#include "formats/swift/swift_demangle.h"
#include "symbolstore/native/native_records.h"
#include "symbolstore/record_codec.h"

namespace restack {
namespace {

using namespace native_store;
using Clock = std::chrono::steady_clock;
using StringBlock = std::shared_ptr<const std::vector<std::string>>;

// A function record with its string ids resolved to the cached strings.
struct DecodedNode {
  uint32_t parent;
  const std::string* name;
  const std::string* call_file;
  uint32_t call_line;
  uint32_t call_column;
  const std::string* scope;
};
struct DecodedLine {
  uint64_t begin;
  const std::string* file;
  uint32_t line;
  uint32_t column;
};
// The begins of a sorted run of rows as 32-bit offsets from the first, searched instead of the
// rows themselves: a warm lookup in a function seen long ago misses the cache on nearly every
// step of its binary search, and 16 offsets share a cache line where 2-3 rows of `DecodedLine`
// do (the line search was ~45 % of lookupInImage's samples under the load test). Empty when a
// begin lies below the first or more than 4 GiB above it (a malformed record): then the rows are
// searched directly. Either way the answer is the same, since subtracting the base keeps every
// comparison's result.
struct RowOffsets {
  uint64_t base = 0;
  std::vector<uint32_t> offsets;

  template <typename Rows>
  void build(const Rows& rows) {
    offsets.clear();
    if (rows.empty()) return;
    base = rows.front().begin;
    offsets.reserve(rows.size());
    for (const auto& row : rows) {
      if (row.begin < base || row.begin - base > UINT32_MAX) {
        offsets.clear();
        return;
      }
      offsets.push_back(static_cast<uint32_t>(row.begin - base));
    }
  }

  // How many rows begin at or below `address` (std::upper_bound's index over `rows`).
  template <typename Rows>
  size_t rowsAtOrBelow(const Rows& rows, uint64_t address) const {
    if (offsets.empty()) {
      return static_cast<size_t>(std::upper_bound(rows.begin(), rows.end(), address,
                                                  [](uint64_t a, const auto& row) { return a < row.begin; }) -
                                 rows.begin());
    }
    if (address < base) return 0;
    if (address - base > UINT32_MAX) return offsets.size();
    const auto key = static_cast<uint32_t>(address - base);
    return static_cast<size_t>(std::upper_bound(offsets.begin(), offsets.end(), key) - offsets.begin());
  }
};

struct DecodedFunction {
  const std::string* outer_name = nullptr;
  const std::string* clone = nullptr;
  std::vector<DecodedNode> nodes;
  std::vector<StoredTile> tiles;
  std::vector<DecodedLine> lines;
  RowOffsets tile_offsets;          // of `tiles`
  RowOffsets line_offsets;          // of `lines`
  std::vector<StringBlock> blocks;  // keeps the strings above alive
};

// A cached address interval [begin, end): a record, or (null) a known gap between records.
// Never removed or replaced while its image lives, so lookups read what it holds by plain pointer.
struct FunctionSlot {
  uint64_t end;
  std::shared_ptr<const DecodedFunction> function;
};
struct SymbolSlot {
  uint64_t end;
  std::shared_ptr<const SymbolChunk> chunk;
};

struct Image {
  std::string id;  // raw bytes
  std::string id_hex;
  ImageRecord info;
  std::atomic<uint64_t> last_used{0};
  std::atomic<size_t> bytes{0};
  std::shared_mutex mutex;  // guards the three maps and the flat index
  std::map<uint64_t, FunctionSlot> functions;
  std::map<uint64_t, SymbolSlot> symbols;
  std::unordered_map<uint32_t, StringBlock> blocks;
  // Read-optimised copy of `functions` (sorted begins next to their slots): a binary search
  // over one array instead of a walk down ~16 levels of tree nodes per warm lookup. Slots are
  // never removed from an image and map nodes never move, so a slot found here is always
  // valid; a lookup the copy cannot answer falls back to the map and counts a miss, and enough
  // misses rebuild the copy (under the exclusive lock).
  std::vector<uint64_t> flat_begins;
  std::vector<const FunctionSlot*> flat_slots;
  std::atomic<size_t> flat_misses{0};
};

const FunctionSlot* findFlat(const Image& image, uint64_t address) {
  auto it = std::upper_bound(image.flat_begins.begin(), image.flat_begins.end(), address);
  if (it == image.flat_begins.begin()) return nullptr;
  const FunctionSlot* slot = image.flat_slots[static_cast<size_t>(it - image.flat_begins.begin()) - 1];
  return address < slot->end ? slot : nullptr;
}

// Misses tolerated before the flat copy is rebuilt: a fraction of its size, so that warming up
// an image of n functions costs O(n log n) copying, not O(n^2).
bool flatIsStale(const Image& image) {
  return image.flat_misses.load(std::memory_order_relaxed) > std::max<size_t>(32, image.flat_begins.size() / 8);
}

void rebuildFlat(Image& image) {  // caller holds image.mutex exclusively
  image.flat_begins.clear();
  image.flat_slots.clear();
  image.flat_begins.reserve(image.functions.size());
  image.flat_slots.reserve(image.functions.size());
  for (const auto& [begin, slot] : image.functions) {
    image.flat_begins.push_back(begin);
    image.flat_slots.push_back(&slot);
  }
  image.flat_misses.store(0, std::memory_order_relaxed);
}

template <typename Slot>
const Slot* findSlot(const std::map<uint64_t, Slot>& slots, uint64_t address) {
  auto it = slots.upper_bound(address);
  if (it == slots.begin()) return nullptr;
  --it;
  return address < it->second.end ? &it->second : nullptr;
}

std::string hexAddress(uint64_t value) {
  char buffer[24];
  snprintf(buffer, sizeof(buffer), "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

size_t stringBytes(const std::vector<std::string>& strings) {
  size_t total = sizeof(strings) + strings.size() * sizeof(std::string);
  for (const std::string& text : strings) total += text.capacity() > 15 ? text.capacity() : 0;
  return total;
}

// Swift names are stored mangled and demangled here, when read, so that a newer demangler also
// fixes names stored by an older release. A worker sees the same few names again and again; a
// small per-thread cache keeps the demangler off the hot path.
const std::optional<std::string>& demangledSwiftName(const std::string& mangled) {
  constexpr size_t kMaxCachedNames = 4096;
  thread_local std::unordered_map<std::string, std::optional<std::string>> cache;
  auto found = cache.find(mangled);
  if (found != cache.end()) return found->second;
  if (cache.size() >= kMaxCachedNames) cache.clear();
  return cache.emplace(mangled, swift::demangleSwift(mangled)).first->second;
}

// An Itanium (C++, legacy Rust) name is demangled once at ingest (formats/native/demangle.h); one
// stored still mangled is one LLVM's demangler refused. A demangled name never starts this way.
bool leftItaniumMangled(std::string_view name) {
  while (name.starts_with("_") && name.size() > 2 && name[1] == '_') name.remove_prefix(1);
  return name.size() > 2 && name.starts_with("_Z");
}

// Demangles Swift names, and marks a frame whose name stays mangled (Swift or Itanium) with
// FrameReason::kDemangleFailed, which outranks kNoLineInfo.
void demangleSwiftNames(FrameLookup& result) {
  for (SymbolizedFrame& frame : result.frames) {
    // Every mangled name starts with '_' or '$' (Itanium `_Z`, Swift `$s`, `_T0`…); most restored
    // names do not, and skip both checks.
    if (frame.function.empty() || (frame.function[0] != '_' && frame.function[0] != '$')) continue;
    if (leftItaniumMangled(frame.function)) {
      result.reason = FrameReason::kDemangleFailed;
      continue;
    }
    if (!swift::isSwiftMangled(frame.function)) continue;
    const std::optional<std::string>& name = demangledSwiftName(frame.function);
    if (name) {
      frame.function = *name;
    } else {
      result.reason = FrameReason::kDemangleFailed;
      result.note = swift::swiftDemanglerAvailable()
                        ? "swift name left mangled (the Swift demangler cannot read it)"
                        : "swift name left mangled (built without the Swift demangler: RESTACK_SWIFT_DEMANGLER=OFF)";
    }
  }
}

}  // namespace

struct NativeResolver::Impl {
  SymbolStore& store;
  NativeResolverOptions options;
  std::shared_mutex mutex;                                         // guards the maps below (not the images' contents)
  std::unordered_map<std::string, std::shared_ptr<Image>> images;  // hex id or alias -> image
  std::unordered_map<std::string, Clock::time_point> missing;      // hex id -> retry after
  struct ModuleEntry {
    std::vector<std::string> ids;  // hex
    Clock::time_point expires;     // when `ids` is empty
  };
  std::unordered_map<std::string, ModuleEntry> modules;  // moduleKey -> ids
  std::atomic<uint64_t> clock{0};
  std::atomic<size_t> total_bytes{0};
  // Counts the times an image left `images` (changed under `mutex` held exclusively): a thread's
  // memo of the image it used last (imageFor) holds while the count is unchanged.
  std::atomic<uint64_t> images_dropped{0};
  // Tells this resolver's memos from those of one destroyed before at the same address.
  const uint64_t instance = nextInstance();

  Impl(SymbolStore& s, const NativeResolverOptions& o) : store(s), options(o) {}

  static uint64_t nextInstance() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

  // Makes room for one more entry in `map` (`missing` or `modules`; caller holds `mutex`
  // exclusively). Past max_remembered, the entries `expired` says are stale go; if more than half
  // are still fresh, all go (they are cheap to ask the store again). Either way the next clean-up
  // is at least max_remembered / 2 insertions away, so the scans cost O(1) per insertion.
  template <typename Map, typename Expired>
  void makeRoom(Map& map, Expired expired) {
    if (map.size() < std::max<size_t>(options.max_remembered, 2)) return;
    const auto now = Clock::now();
    std::erase_if(map, [&](const auto& entry) { return expired(entry.second, now); });
    if (map.size() > options.max_remembered / 2) map.clear();
  }

  // ---- images

  // The image of debug id `hex`, or nullptr when no symbols have it, for a lookup on this thread.
  // A stack's frames come mostly from one image, one after the other: the thread keeps the image
  // it used last, with a reference, so that the next frame of that image neither hashes its id
  // nor takes the shared lock and a reference of its own (atomic writes to memory that every
  // restore thread writes). The memo holds while no image has left the cache since it was made;
  // it keeps at most one image per thread alive past its eviction, until the thread's next image.
  Expected<Image*> imageFor(const std::string& hex) {
    struct LastImage {
      uint64_t instance = 0;
      uint64_t dropped = 0;
      std::string hex;
      std::shared_ptr<Image> image;
    };
    thread_local LastImage last;
    const uint64_t dropped = images_dropped.load(std::memory_order_acquire);
    if (last.image && last.instance == instance && last.dropped == dropped && last.hex == hex) return last.image.get();
    auto image = imageById(hex);
    if (!image) return image.error();
    if (!*image) return nullptr;  // imageById remembers absent ids itself
    last.instance = instance;
    last.dropped = dropped;
    last.hex = hex;
    last.image = std::move(*image);
    return last.image.get();
  }

  Expected<std::shared_ptr<Image>> imageById(const std::string& hex) {
    {
      std::shared_lock lock(mutex);
      auto found = images.find(hex);
      if (found != images.end()) return found->second;
      auto absent = missing.find(hex);
      if (absent != missing.end() && Clock::now() < absent->second) {
        return std::shared_ptr<Image>();
      }
    }
    std::string id = hexToBytes(hex);
    std::optional<std::string> value;
    if (!id.empty()) {
      auto record = store.lookup(native_store::kNativeFamily, imageKey(id));
      if (!record) return record.error();
      value = std::move(*record);
    }
    if (!value) {
      auto alias = store.lookup(native_store::kNativeFamily, aliasKey(hex));
      if (!alias) return alias.error();
      if (alias->has_value()) {
        auto canonical = decodeAlias(**alias, aliasKey(hex));
        if (canonical) {
          id = std::move(*canonical);
          auto record = store.lookup(native_store::kNativeFamily, imageKey(id));
          if (!record) return record.error();
          value = std::move(*record);
        }
      }
    }
    std::unique_lock lock(mutex);
    if (!value) {
      makeRoom(missing, [](Clock::time_point retry_after, Clock::time_point now) { return now >= retry_after; });
      missing[hex] = Clock::now() + std::chrono::milliseconds(options.missing_ttl_ms);
      return std::shared_ptr<Image>();
    }
    auto info = decodeImage(*value, imageKey(id));
    if (!info) return info.error().withContext("image " + hex);
    std::string canonical_hex = bytesToHex(id);
    auto existing = images.find(canonical_hex);
    std::shared_ptr<Image> image;
    if (existing != images.end()) {
      image = existing->second;
    } else {
      image = std::make_shared<Image>();
      image->id = id;
      image->id_hex = canonical_hex;
      image->info = std::move(*info);
      images[canonical_hex] = image;
    }
    std::shared_ptr<Image>& slot = images[hex];
    if (slot && slot != image) images_dropped.fetch_add(1, std::memory_order_release);  // `hex` names another
    slot = image;
    missing.erase(hex);
    return image;
  }

  Expected<std::vector<std::string>> idsForModule(const EventScope& scope, const std::string& module) {
    std::string key = moduleKey(scope.app, scope.build_id, module);
    {
      std::shared_lock lock(mutex);
      auto found = modules.find(key);
      if (found != modules.end() && (!found->second.ids.empty() || Clock::now() < found->second.expires)) {
        return found->second.ids;
      }
    }
    std::vector<std::string> ids;
    for (const std::string& candidate : {key, moduleKey("", "", module)}) {
      auto value = store.lookup(native_store::kNativeFamily, candidate);
      if (!value) return value.error();
      if (!value->has_value()) continue;
      auto decoded = decodeIdList(**value, candidate);
      if (!decoded) continue;
      for (const std::string& id : *decoded) ids.push_back(bytesToHex(id));
      if (!ids.empty()) break;  // the app's own upload wins over a shared image of that name
    }
    std::unique_lock lock(mutex);
    makeRoom(modules,
             [](const ModuleEntry& entry, Clock::time_point now) { return entry.ids.empty() && now >= entry.expires; });
    modules[key] = {ids, Clock::now() + std::chrono::milliseconds(options.missing_ttl_ms)};
    return ids;
  }

  // ---- strings

  Expected<StringBlock> block(Image& image, uint32_t index) {
    {
      std::shared_lock lock(image.mutex);
      auto found = image.blocks.find(index);
      if (found != image.blocks.end()) return found->second;
    }
    const std::string key = stringBlockKey(image.id, index);
    auto value = store.lookup(native_store::kNativeFamily, key);
    if (!value) return value.error();
    std::vector<std::string> strings;
    if (value->has_value()) {
      auto decoded = decodeStringBlock(**value, key);
      if (!decoded) return decoded.error().withContext("image " + image.id_hex);
      strings = std::move(*decoded);
    }
    auto shared = std::make_shared<const std::vector<std::string>>(std::move(strings));
    std::unique_lock lock(image.mutex);
    auto [it, inserted] = image.blocks.emplace(index, shared);
    if (inserted) account(image, stringBytes(*shared));
    return it->second;
  }

  Expected<const std::string*> string(Image& image, uint32_t id, std::vector<StringBlock>& keep) {
    if (id == kNoString) return static_cast<const std::string*>(nullptr);
    auto strings = block(image, id / kStringsPerBlock);
    if (!strings) return strings.error();
    uint32_t offset = id % kStringsPerBlock;
    if (offset >= (*strings)->size()) return static_cast<const std::string*>(nullptr);
    if (std::find(keep.begin(), keep.end(), *strings) == keep.end()) keep.push_back(*strings);
    return &(**strings)[offset];
  }

  Expected<std::shared_ptr<const DecodedFunction>> decode(Image& image, const FunctionRecord& record) {
    auto decoded = std::make_shared<DecodedFunction>();
    auto outer = string(image, record.outer_name, decoded->blocks);
    if (!outer) return outer.error();
    decoded->outer_name = *outer;
    auto clone = string(image, record.clone, decoded->blocks);
    if (!clone) return clone.error();
    decoded->clone = *clone;
    decoded->nodes.reserve(record.nodes.size());
    for (const StoredNode& node : record.nodes) {
      auto name = string(image, node.name, decoded->blocks);
      if (!name) return name.error();
      auto file = string(image, node.call_file, decoded->blocks);
      if (!file) return file.error();
      auto scope = string(image, node.scope, decoded->blocks);
      if (!scope) return scope.error();
      decoded->nodes.push_back({node.parent, *name, *file, node.call_line, node.call_column, *scope});
    }
    decoded->tiles = record.tiles;
    decoded->lines.reserve(record.lines.size());
    for (const StoredLine& line : record.lines) {
      auto file = string(image, line.file, decoded->blocks);
      if (!file) return file.error();
      decoded->lines.push_back({line.begin, *file, line.line, line.column});
    }
    decoded->tile_offsets.build(decoded->tiles);
    decoded->line_offsets.build(decoded->lines);
    return std::shared_ptr<const DecodedFunction>(std::move(decoded));
  }

  // ---- records

  Status storeError(const rocksdb::Status& status) {
    return ioError("symbol store " + store.options().path + ": read failed: " + status.ToString());
  }

  // Loads the function record covering `address`, or the gap around it, into the image's cache.
  Status loadFunction(Image& image, uint64_t address) {
    std::unique_ptr<rocksdb::Iterator> it(
        store.db().NewIterator(store.lookupReadOptions(), store.family(native_store::kNativeFamily)));
    it->SeekForPrev(functionKey(image.id, address));
    if (!it->Valid() && !it->status().ok()) return storeError(it->status());
    uint64_t gap_begin = 0;
    if (it->Valid()) {
      auto begin = addressOfKey('F', image.id, it->key().ToStringView());
      if (begin) {
        auto record = decodeFunction(*begin, it->value().ToStringView(), it->key().ToStringView());
        if (!record) return record.error().withContext("image " + image.id_hex);
        if (address < record->end) {
          auto decoded = decode(image, *record);
          if (!decoded) return decoded.error();
          size_t bytes = sizeof(DecodedFunction) + 64 + (*decoded)->nodes.size() * sizeof(DecodedNode) +
                         (*decoded)->tiles.size() * (sizeof(StoredTile) + sizeof(uint32_t)) +
                         (*decoded)->lines.size() * (sizeof(DecodedLine) + sizeof(uint32_t));
          std::unique_lock lock(image.mutex);
          if (image.functions.emplace(*begin, FunctionSlot{record->end, *decoded}).second) {
            account(image, bytes);
          }
          return Status::ok();
        }
        gap_begin = record->end;
      }
    }
    it->Seek(functionKey(image.id, address));
    if (!it->Valid() && !it->status().ok()) return storeError(it->status());
    uint64_t gap_end = UINT64_MAX;
    if (it->Valid()) {
      if (auto next = addressOfKey('F', image.id, it->key().ToStringView())) gap_end = *next;
    }
    if (gap_end <= address) gap_end = address + 1;  // a corrupt empty record: remember this spot
    std::unique_lock lock(image.mutex);
    if (image.functions.emplace(gap_begin, FunctionSlot{gap_end, nullptr}).second) {
      account(image, 64);
    }
    return Status::ok();
  }

  Status loadSymbols(Image& image, uint64_t address) {
    std::unique_ptr<rocksdb::Iterator> it(
        store.db().NewIterator(store.lookupReadOptions(), store.family(native_store::kNativeFamily)));
    it->SeekForPrev(symbolKey(image.id, address));
    if (!it->Valid() && !it->status().ok()) return storeError(it->status());
    if (it->Valid()) {
      if (auto begin = addressOfKey('S', image.id, it->key().ToStringView())) {
        auto chunk = decodeSymbolChunk(*begin, it->value().ToStringView(), it->key().ToStringView());
        if (!chunk) return chunk.error().withContext("image " + image.id_hex);
        uint64_t end = chunk->next_chunk == 0 ? UINT64_MAX : chunk->next_chunk;
        size_t bytes = sizeof(SymbolChunk) + 64;
        for (const StoredSymbol& symbol : chunk->symbols) {
          bytes += sizeof(StoredSymbol) + symbol.name.capacity() + symbol.file.capacity();
        }
        auto shared = std::make_shared<const SymbolChunk>(std::move(*chunk));
        std::unique_lock lock(image.mutex);
        if (image.symbols.emplace(*begin, SymbolSlot{end, shared}).second) account(image, bytes);
        return Status::ok();
      }
    }
    // Below the first chunk.
    it->Seek(symbolKey(image.id, 0));
    if (!it->Valid() && !it->status().ok()) return storeError(it->status());
    uint64_t gap_end = UINT64_MAX;
    if (it->Valid()) {
      if (auto first = addressOfKey('S', image.id, it->key().ToStringView())) gap_end = *first;
    }
    if (gap_end <= address) gap_end = address + 1;
    std::unique_lock lock(image.mutex);
    if (image.symbols.emplace(0, SymbolSlot{gap_end, nullptr}).second) account(image, 64);
    return Status::ok();
  }

  // ---- lookups in one image

  Expected<FrameLookup> lookupInImage(Image& image, const stack::NativeFrameLine& frame, uint64_t address) {
    // Stamped only when another image was used since: the clock is shared by every restore
    // thread, and a write to it per frame bounces its cache line between the cores.
    if (image.last_used.load(std::memory_order_relaxed) + 1 != clock.load(std::memory_order_relaxed)) {
      image.last_used.store(clock.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
    }
    if (image.info.has_dwarf) {
      for (int attempt = 0; attempt < 2; ++attempt) {
        // Not a shared_ptr copy: slots are never removed or replaced, so what a slot holds lives as
        // long as the image, which the caller holds. A copy costs two atomic writes to a count that
        // every restore thread shares, and under the load test that was a tenth of this function.
        const DecodedFunction* function = nullptr;
        bool known = false;
        bool rebuild = false;
        {
          std::shared_lock lock(image.mutex);
          const FunctionSlot* slot = findFlat(image, address);
          if (!slot) {
            slot = findSlot(image.functions, address);
            if (slot) {
              image.flat_misses.fetch_add(1, std::memory_order_relaxed);
              rebuild = flatIsStale(image);
            }
          }
          if (slot) {
            known = true;
            function = slot->function.get();
          }
        }
        if (rebuild) {
          std::unique_lock lock(image.mutex);
          if (flatIsStale(image)) rebuildFlat(image);
        }
        if (known) {
          if (function) return restoreDwarf(image, frame, *function, address);
          break;
        }
        RESTACK_RETURN_IF_ERROR(loadFunction(image, address));
      }
    }
    if (image.info.has_symbols) {
      for (int attempt = 0; attempt < 2; ++attempt) {
        const SymbolChunk* chunk = nullptr;  // as `function` above
        bool known = false;
        {
          std::shared_lock lock(image.mutex);
          if (const SymbolSlot* slot = findSlot(image.symbols, address)) {
            known = true;
            chunk = slot->chunk.get();
          }
        }
        if (known) {
          if (chunk) {
            if (auto restored = restoreSymbol(image, frame, *chunk, address)) return std::move(*restored);
          }
          break;
        }
        RESTACK_RETURN_IF_ERROR(loadSymbols(image, address));
      }
    }
    return FrameLookup::notFound(FrameReason::kAddressOutsideModule, hexAddress(address) +
                                                                         " is outside every function and symbol of " +
                                                                         image.info.module + " (" + image.id_hex + ")");
  }

  void describe(const Image& image, const stack::NativeFrameLine& frame, SymbolizedFrame& out) {
    out.module = image.info.module.empty() ? frame.module : image.info.module;
    out.in_app = !image.info.shared;
  }

  FrameLookup restoreDwarf(const Image& image, const stack::NativeFrameLine& frame, const DecodedFunction& function,
                           uint64_t address) {
    FrameLookup result;
    result.status = FrameStatus::kSymbolicated;
    result.tier = "dwarf";
    const size_t tiles_below = function.tile_offsets.rowsAtOrBelow(function.tiles, address);
    uint32_t node = tiles_below == 0 ? 0 : function.tiles[tiles_below - 1].node;
    const size_t lines_below = function.line_offsets.rowsAtOrBelow(function.lines, address);
    // Frames are built in place: the chain's depth first, so the vector is allocated once.
    size_t depth = 1;
    for (uint32_t up = function.nodes[node].parent; up != UINT32_MAX; up = function.nodes[up].parent) ++depth;
    result.frames.reserve(depth);
    SymbolizedFrame& innermost = result.frames.emplace_back();
    describe(image, frame, innermost);
    if (lines_below != 0) {
      const DecodedLine& span = function.lines[lines_below - 1];
      if (span.file) innermost.file = *span.file;
      innermost.line = span.line;
      innermost.column = span.column;
    }
    // A function the DWARF knows without a line row for this address (assembly, a unit built
    // without -g line tables): restored by name only.
    if (innermost.line == 0) result.reason = FrameReason::kNoLineInfo;
    const DecodedNode* current = &function.nodes[node];
    if (current->name) innermost.function = *current->name;
    if (current->scope) innermost.scope = *current->scope;
    while (current->parent != UINT32_MAX) {
      const DecodedNode* caller = &function.nodes[current->parent];
      result.frames.back().inlined = true;
      SymbolizedFrame& outer = result.frames.emplace_back();
      describe(image, frame, outer);
      if (caller->name) outer.function = *caller->name;
      if (caller->scope) outer.scope = *caller->scope;
      if (current->call_file) outer.file = *current->call_file;
      outer.line = current->call_line;
      outer.column = current->call_column;
      current = caller;
    }
    if (function.outer_name) result.frames.back().function = *function.outer_name;
    if (function.clone) result.frames.back().clone = *function.clone;
    demangleSwiftNames(result);
    return result;
  }

  std::optional<FrameLookup> restoreSymbol(const Image& image, const stack::NativeFrameLine& frame,
                                           const SymbolChunk& chunk, uint64_t address) {
    auto it = std::upper_bound(chunk.symbols.begin(), chunk.symbols.end(), address,
                               [](uint64_t a, const StoredSymbol& s) { return a < s.begin; });
    if (it == chunk.symbols.begin()) return std::nullopt;
    const StoredSymbol& symbol = *std::prev(it);
    if (symbol.size != 0 && address - symbol.begin >= symbol.size) return std::nullopt;
    FrameLookup result;
    result.status = FrameStatus::kSymbolicated;
    result.tier = symbol.source == 1 ? "objc" : "symtab";
    // Symbol table or Objective-C metadata: the function and offset, never a line; an ELF local
    // symbol's object file name (formats/native/symbol_table.h), as llvm-symbolizer prints it.
    result.reason = FrameReason::kNoLineInfo;
    SymbolizedFrame restored;
    describe(image, frame, restored);
    restored.function = symbol.name;
    restored.file = symbol.file;
    restored.symbol_offset = address - symbol.begin;
    result.frames.push_back(std::move(restored));
    demangleSwiftNames(result);
    return result;
  }

  // ---- cache bound

  void account(Image& image, size_t bytes) {
    image.bytes.fetch_add(bytes, std::memory_order_relaxed);
    size_t total = total_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (total > options.cache_bytes) evict(&image);
  }

  // Drops least recently used images until the cache is at 3/4 of its bound. `keep` (the image
  // being filled) goes last; callers hold it through a shared_ptr, so dropping it is safe.
  void evict(const Image* keep) {
    std::unique_lock lock(mutex, std::try_to_lock);
    if (!lock.owns_lock()) return;  // another thread is evicting (or loading); next time
    std::vector<std::shared_ptr<Image>> distinct;
    for (const auto& [key, image] : images) {
      if (image->id_hex == key) distinct.push_back(image);
    }
    std::sort(distinct.begin(), distinct.end(), [keep](const auto& a, const auto& b) {
      if ((a.get() == keep) != (b.get() == keep)) return b.get() == keep;
      return a->last_used.load() < b->last_used.load();
    });
    size_t target = options.cache_bytes / 4 * 3;
    for (const auto& image : distinct) {
      if (total_bytes.load() <= target) break;
      dropLocked(*image);
    }
  }

  void dropLocked(Image& image) {
    images_dropped.fetch_add(1, std::memory_order_release);
    for (auto it = images.begin(); it != images.end();) {
      it = it->second.get() == &image ? images.erase(it) : std::next(it);
    }
    total_bytes.fetch_sub(image.bytes.exchange(0), std::memory_order_relaxed);
  }
};

NativeResolver::NativeResolver(SymbolStore& store, const NativeResolverOptions& options)
    : impl_(new Impl(store, options)) {}
NativeResolver::~NativeResolver() = default;

namespace {

// The image as the device named it: its path where the line printed one, else its name.
std::string_view imagePathOf(const stack::NativeFrameLine& frame) {
  return frame.module_path.empty() ? std::string_view(frame.module) : frame.module_path;
}

NativeImageClass imageOf(const stack::NativeFrameLine& frame) {
  return classifyNativeImage(imagePathOf(frame));
}

// The architecture (as ingest names an ELF image's, LLVM's spelling) that a frame without a build
// id says it ran on, or "" when it does not say. Android installs an app's libraries of the ABI
// the process runs under to "<app dir>/lib/<isa>/" and its unwinder prints that path
// ("/data/app/~~x==/com.shop-y==/lib/arm64/libshop.so"); the SDK form names the ABI
// ("[armeabi-v7a::…]"), and an APK's own folders are named by ABI ("lib/arm64-v8a/").
std::string_view architectureNamedBy(const stack::NativeFrameLine& frame) {
  auto byName = [](std::string_view name) -> std::string_view {
    if (name == "arm64" || name == "arm64-v8a") return "aarch64";
    if (name == "arm" || name == "armeabi-v7a" || name == "armeabi") return "arm";
    if (name == "x86_64") return "x86_64";
    if (name == "x86") return "i386";
    return {};
  };
  if (!frame.abi.empty()) return byName(frame.abi);
  const std::string_view path = frame.module_path;
  const size_t last_slash = path.rfind('/');
  if (last_slash == std::string_view::npos) return {};
  const std::string_view folders = path.substr(0, last_slash);
  const size_t folder_start = folders.rfind('/');
  if (folder_start == std::string_view::npos || folder_start < 4) return {};
  const std::string_view parent = folders.substr(0, folder_start);
  if (!parent.ends_with("/lib") && !parent.ends_with("!lib")) return {};
  return byName(folders.substr(folder_start + 1));
}

}  // namespace

namespace {
// A frame of an operating-system image whose symbols are missing: no app build uploads them.
void markSystemImage(FrameLookup& lookup) {
  lookup.reason = FrameReason::kSystemImage;
  lookup.note = "an operating-system image, whose symbols only a shared upload brings";
}
}  // namespace

std::optional<FrameLookup> unrestorableNativeFrame(const stack::NativeFrameLine& frame) {
  // Android prints the memory map's name where the pc ran, Apple "???" for an address in no
  // image (a call through a null pointer). Told by the first byte, since every native frame of
  // every event comes here.
  const std::string_view path = imagePathOf(frame);
  if (path.empty()) return std::nullopt;
  switch (path.front()) {
    case '?':
      if (path == "???") {
        return FrameLookup::notFound(FrameReason::kAddressOutsideModule, "the device found no image at this address");
      }
      return std::nullopt;
    case '<':
      if (path == "<unknown>") {
        return FrameLookup::notFound(FrameReason::kAddressOutsideModule, "the device found no mapping at this address");
      }
      if (path.starts_with("<anonymous")) break;
      return std::nullopt;
    case '[':
      if (path == "[vdso]") return FrameLookup::notFound(FrameReason::kRuntimeCode, "the kernel's vDSO");
      if (path.starts_with("[anon:")) break;
      return std::nullopt;
    case '/': {
      if (path.starts_with("/memfd:") && path.find("jit") != std::string_view::npos) {
        return FrameLookup::notFound(FrameReason::kRuntimeCode, "ART's JIT code cache");
      }
      // ART's ahead-of-time compiled Java: a method of the app's or the framework's dex code,
      // which the Java frames of the same stack restore; no native symbol file exists for it.
      for (std::string_view ending : {".oat", ".odex", ".art", ".vdex"}) {
        if (path.ends_with(ending)) {
          return FrameLookup::notFound(FrameReason::kRuntimeCode, "ART's compiled Java code (.oat/.odex)");
        }
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
  return FrameLookup::notFound(FrameReason::kRuntimeCode, "code in anonymous memory (JIT or generated at run time)");
}

Expected<FrameLookup> NativeResolver::lookup(const EventScope& scope, const stack::NativeFrameLine& frame,
                                             uint64_t lookup_address) {
  if (auto unrestorable = unrestorableNativeFrame(frame)) return std::move(*unrestorable);
  if (frame.image_offset_unknown) {
    // No address within the image can be computed (no load address, no offset): no symbol file
    // would restore it, so nothing waits for one. An operating-system image stays one. Why no
    // other line placed it is the caller's to add (worker/pipeline/kinds/native_kind.cc reads
    // the whole event).
    if (isSystemImage(imageOf(frame))) {
      FrameLookup system = FrameLookup::missing(frame.module, MissingIdKind::kModule);
      markSystemImage(system);
      return system;
    }
    return FrameLookup::notFound(
        FrameReason::kNoPosition,
        "the line gives the runtime address but not the load address of " + frame.module + " nor the offset in it");
  }
  // A record that cannot be read (records::RecordReader) leaves this frame unrestored, with why;
  // the rest of the event is still restored.
  auto answer = [&]() -> Expected<FrameLookup> {
    if (!frame.debug_id.empty()) {
      auto image = impl_->imageFor(frame.debug_id);
      if (!image) return image.error();
      if (*image == nullptr) return FrameLookup::missing(frame.debug_id, MissingIdKind::kDebugId);
      return impl_->lookupInImage(**image, frame, lookup_address);
    }
    if (frame.module.empty()) return FrameLookup::missing("", MissingIdKind::kNone);
    auto ids = impl_->idsForModule(scope, frame.module);
    if (!ids) return ids.error();
    std::vector<std::shared_ptr<Image>> images;
    images.reserve(ids->size());
    for (const std::string& id : *ids) {
      auto image = impl_->imageById(id);
      if (!image) return image.error();
      if (*image) images.push_back(std::move(*image));
    }
    // The frame says which architecture ran: another one's image of that name is not it. When
    // none of that architecture was uploaded, every image of the name is considered, as if the
    // frame said nothing.
    const std::string_view named_arch = architectureNamedBy(frame);
    if (!named_arch.empty() &&
        std::any_of(images.begin(), images.end(), [&](const auto& image) { return image->info.arch == named_arch; })) {
      std::erase_if(images, [&](const auto& image) { return image->info.arch != named_arch; });
    }
    std::optional<FrameLookup> first, restored;
    std::string restored_arch;
    for (const std::shared_ptr<Image>& image : images) {
      auto result = impl_->lookupInImage(*image, frame, lookup_address);
      if (!result) return result.error();
      if (result->status != FrameStatus::kSymbolicated) {
        if (!first) first = std::move(*result);
        continue;
      }
      if (!restored) {
        restored = std::move(*result);
        restored_arch = image->info.arch;
        continue;
      }
      // Another architecture's image of that name restores the address too (every ABI of an
      // Android library, the slices of a fat file), and the frame names no build id to choose:
      // a different answer is kept beside the first, as for an ambiguous mapping, instead of
      // the first passing for the truth.
      if (image->info.arch == restored_arch || result->frames.empty() || restored->frames.empty() ||
          result->frames.front().function == restored->frames.front().function) {
        continue;
      }
      restored->reason = FrameReason::kAmbiguous;
      restored->note = "the frame names no build id and " + frame.module +
                       " is uploaded for several architectures; the first answer is shown";
      auto& alternative = restored->alternatives.emplace_back();
      for (SymbolizedFrame& answer : result->frames) alternative.push_back(std::move(answer));
    }
    if (restored) return std::move(*restored);
    if (first) return std::move(*first);
    return FrameLookup::missing(frame.module, MissingIdKind::kModule);
  }();
  // Assigned rather than returned, so that every path returns `answer` itself (no move of it).
  if (!answer && records::isUnreadableRecord(answer.error())) {
    answer = FrameLookup::notFound(FrameReason::kMalformedSymbols, answer.error().message());
  } else if (answer && answer->reason == FrameReason::kMissingSymbols && !impl_->options.await_system_symbols &&
             isSystemImage(imageOf(frame))) {
    // The operating system's libraries (libc.so, libart.so, UIKitCore) differ per device build
    // and no app build uploads them: waiting would hold nearly every native event pending, and
    // fill the pending store, for symbols that only a shared upload brings, if any.
    markSystemImage(*answer);
  }
  return answer;
}

void NativeResolver::forget(std::string_view debug_id) {
  std::unique_lock lock(impl_->mutex);
  std::string hex(debug_id);
  impl_->missing.erase(hex);
  impl_->modules.clear();
  auto found = impl_->images.find(hex);
  if (found != impl_->images.end()) {
    std::shared_ptr<Image> image = found->second;
    impl_->dropLocked(*image);
  }
  // Aliases of ids never seen may be cached as missing under another spelling.
  impl_->missing.clear();
}

void NativeResolver::clear() {
  std::unique_lock lock(impl_->mutex);
  impl_->images_dropped.fetch_add(1, std::memory_order_release);
  impl_->images.clear();
  impl_->missing.clear();
  impl_->modules.clear();
  impl_->total_bytes.store(0);
}

size_t NativeResolver::rememberedCount() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->missing.size() + impl_->modules.size();
}

size_t NativeResolver::cachedBytes() const {
  return impl_->total_bytes.load();
}

std::unique_ptr<Resolver> makeNativeResolver(SymbolStore& store, const SymbolizerOptions& options) {
  NativeResolverOptions resolver_options;
  resolver_options.cache_bytes = options.cacheBytes("native", resolver_options.cache_bytes);
  resolver_options.await_system_symbols = options.await_system_symbols;
  return std::make_unique<NativeResolver>(store, resolver_options);
}

}  // namespace restack
