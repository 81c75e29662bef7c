// ProguardResolver: picks the mapping for an event (app + build, R8 map ids), keeps decoded class
// records in a byte-bounded CLOCK cache in front of RocksDB (clock_cache.h), and retraces runs of
// Java lines with the rules of proguard_retrace.h.
//
// Choices documented here because the worker and its readers depend on them:
//  - A frame whose class is not in the mapping was not obfuscated (framework, library, kept
//    class): like R8's retrace it is returned unchanged, status kSymbolicated, note
//    "not in mapping".
//  - A frame whose class is mapped but whose method (at that line) is not: the class name is
//    restored, the method name kept, status kSymbolicated, note saying so (R8 prints the same).
//  - Frames R8 drops (synthesized, outline, rewriteFrame): status kSymbolicated, removed=true.
//    A class marked synthesized (com.android.tools.r8.synthesized under the class line) makes
//    every frame of its own methods synthesized: frames inlined into them from other classes
//    stay, a frame of it whose method the mapping does not have at all is dropped.
//  - A Java 9+ module / class-loader prefix ("app//", "java.base@17/", "loader/mod@1.0/") is
//    kept in SymbolizedFrame::module exactly as it is to be printed before the class name, with
//    a class loader name that is itself an obfuscated class restored (as R8 does).
//  - No mapping for the event: kMissingSymbols, missing_id "<app>:<build_id>" (or the map id
//    the event or the frame's r8-map-id-<id> source file names).
//  - Exception header lines: exception_class restored (or the input when unknown), and
//    exception_message set when names inside the message were restored (proguard_message.h);
//    when class merging put several original classes under the obfuscated name (mergedClasses),
//    the frames below the line choose among them (chooseMergedClass), and the candidates left
//    are listed in exception_class_alternatives;
//    "... N more" and other lines: kSymbolicated with nothing to restore.
#include "symbolstore/proguard/proguard_resolver.h"

#include <algorithm>
#include <array>
#include <shared_mutex>
#include <unordered_map>

#include "symbolstore/proguard/clock_cache.h"
#include "symbolstore/proguard/proguard_message.h"
#include "symbolstore/proguard/proguard_records.h"
#include "symbolstore/proguard/proguard_retrace.h"
#include "symbolstore/record_codec.h"

namespace restack {
namespace {

using proguard::ClassRecord;

constexpr std::string_view kMapIdFilePrefix = "r8-map-id-";

// The 16 hex digits of a load id as a number: the cache namespace of that mapping's records.
uint64_t loadKey(std::string_view load_id) {
  uint64_t key = 0;
  for (char c : load_id) {
    uint64_t digit = c >= '0' && c <= '9' ? uint64_t(c - '0') : c >= 'a' && c <= 'f' ? uint64_t(c - 'a' + 10) : 0;
    key = (key << 4) | digit;
  }
  return key;
}

struct MapHandle {
  std::string load_id;
  uint64_t load_key = 0;  // loadKey(load_id)
  std::string app;
  std::string build_id;
  std::string pg_map_id;
  std::string pg_map_hash;  // hex part only

  bool hasId(std::string_view id) const { return !id.empty() && (id == pg_map_id || id == pg_map_hash); }
  std::string describe() const { return app + ":" + build_id; }
};

std::string hashHex(std::string_view pg_map_hash) {
  size_t space = pg_map_hash.rfind(' ');
  return std::string(space == std::string_view::npos ? pg_map_hash : pg_map_hash.substr(space + 1));
}

// Which mapping a line uses, or why there is none.
struct MapChoice {
  std::shared_ptr<const MapHandle> map;
  std::string missing_id;
  MissingIdKind missing_kind = MissingIdKind::kNone;
  std::string note;
};

}  // namespace

struct ProguardResolver::Impl {
  SymbolStore& store;
  ProguardResolverOptions options;
  proguard::ClockCache<ClassRecord> classes;
  proguard::ClockCache<std::string> source_files;

  std::shared_mutex pointers_mutex;
  uint64_t pointers_epoch = 0;
  std::unordered_map<std::string, std::shared_ptr<const MapHandle>> by_build;  // null: none
  std::unordered_map<std::string, std::shared_ptr<const MapHandle>> by_id;

  Impl(SymbolStore& store_in, const ProguardResolverOptions& options_in)
      : store(store_in),
        options(options_in),
        classes(options_in.cache_bytes - options_in.cache_bytes / 16),
        source_files(options_in.cache_bytes / 16) {}

  // Drops the pointer caches when an ingest happened since they were filled.
  void syncEpoch() {
    uint64_t now = proguard::proguardStoreEpoch().load(std::memory_order_acquire);
    {
      std::shared_lock lock(pointers_mutex);
      if (now == pointers_epoch) return;
    }
    std::unique_lock lock(pointers_mutex);
    if (now == pointers_epoch) return;
    by_build.clear();
    by_id.clear();
    pointers_epoch = now;
  }

  bool cachedPointer(std::unordered_map<std::string, std::shared_ptr<const MapHandle>>& table, const std::string& key,
                     std::shared_ptr<const MapHandle>& out) {
    std::shared_lock lock(pointers_mutex);
    auto it = table.find(key);
    if (it == table.end()) return false;
    out = it->second;
    return true;
  }

  // `read_epoch`: proguardStoreEpoch() before the store was read for `value`. An ingest since then
  // may have replaced what was read (and another thread may already have cleared the tables for
  // it): the value still answers the lookup that read it, but is not kept, or it would outlive
  // the clear and send every later run to a replaced mapping.
  void storePointer(std::unordered_map<std::string, std::shared_ptr<const MapHandle>>& table, const std::string& key,
                    std::shared_ptr<const MapHandle> value, uint64_t read_epoch) {
    std::unique_lock lock(pointers_mutex);
    if (proguard::proguardStoreEpoch().load(std::memory_order_acquire) != read_epoch) return;
    constexpr size_t kMaxPointers = 100000;  // builds seen by one worker; cheap to refill
    if (table.size() >= kMaxPointers) table.clear();
    table[key] = std::move(value);
  }

  Expected<std::shared_ptr<const MapHandle>> mapForBuild(const std::string& app, const std::string& build) {
    std::string key = proguard::buildPointerKey(app, build);
    std::shared_ptr<const MapHandle> handle;
    if (cachedPointer(by_build, key, handle)) return handle;
    const uint64_t read_epoch = proguard::proguardStoreEpoch().load(std::memory_order_acquire);
    auto value = store.lookup(proguard::kProguardFamily, key);
    if (!value) return value.error();
    if (value->has_value()) {
      auto pointer = proguard::decodeBuildPointer(**value, key);
      if (!pointer) return pointer.error();
      auto made = std::make_shared<MapHandle>();
      made->load_id = pointer->load_id;
      made->load_key = loadKey(made->load_id);
      made->app = app;
      made->build_id = build;
      made->pg_map_id = pointer->pg_map_id;
      made->pg_map_hash = hashHex(pointer->pg_map_hash);
      handle = std::move(made);
    }
    storePointer(by_build, key, handle, read_epoch);
    return handle;
  }

  Expected<std::shared_ptr<const MapHandle>> mapForId(const std::string& id) {
    std::shared_ptr<const MapHandle> handle;
    if (cachedPointer(by_id, id, handle)) return handle;
    const uint64_t read_epoch = proguard::proguardStoreEpoch().load(std::memory_order_acquire);
    const std::string key = proguard::idPointerKey(id);
    auto value = store.lookup(proguard::kProguardFamily, key);
    if (!value) return value.error();
    if (value->has_value()) {
      auto pointer = proguard::decodeIdPointer(**value, key);
      if (!pointer) return pointer.error();
      // The build pointer of that app build carries both ids; fall back to the id alone.
      auto by_build_handle = mapForBuild(pointer->app, pointer->build_id);
      if (!by_build_handle) return by_build_handle.error();
      if (*by_build_handle && (*by_build_handle)->load_id == pointer->load_id) {
        handle = *by_build_handle;
      } else {
        auto made = std::make_shared<MapHandle>();
        made->load_id = pointer->load_id;
        made->load_key = loadKey(made->load_id);
        made->app = pointer->app;
        made->build_id = pointer->build_id;
        made->pg_map_id = id;
        handle = std::move(made);
      }
    }
    storePointer(by_id, id, handle, read_epoch);
    return handle;
  }

  Expected<MapChoice> chooseEventMap(const EventScope& scope) {
    MapChoice choice;
    std::shared_ptr<const MapHandle> build_map;
    if (!scope.app.empty() || !scope.build_id.empty()) {
      auto found = mapForBuild(scope.app, scope.build_id);
      if (!found) return found.error();
      build_map = *found;
    }
    const std::string build_name = scope.app + ":" + scope.build_id;
    const std::string& map_id = scope.symbol_ids.get(kProguardScopeKind);
    if (!map_id.empty()) {
      auto by_map_id = mapForId(map_id);
      if (!by_map_id) return by_map_id.error();
      if (*by_map_id) {
        choice.map = *by_map_id;
        if (build_map && build_map->load_id != choice.map->load_id) {
          choice.note = "pg_map_id " + map_id + " selects the mapping of " + choice.map->describe() +
                        ", not the one uploaded for " + build_name;
        }
        return choice;
      }
      if (build_map && build_map->pg_map_id.empty()) {
        choice.map = build_map;
        choice.note = "the mapping of " + build_name + " has no pg_map_id to check the event's " + map_id + " against";
        return choice;
      }
      choice.missing_id = map_id;
      choice.missing_kind = MissingIdKind::kMapId;
      if (build_map) {
        choice.note = "the mapping uploaded for " + build_name + " has pg_map_id " + build_map->pg_map_id +
                      ", the event names " + map_id;
      }
      return choice;
    }
    if (build_map) {
      choice.map = build_map;
    } else {
      choice.missing_id = build_name;
      choice.missing_kind = MissingIdKind::kAppBuild;
    }
    return choice;
  }

  // A frame printed with an R8 map id as its source file picks (or checks) the mapping itself.
  Expected<MapChoice> chooseFrameMap(const MapChoice& event_choice, std::string_view file) {
    if (!file.starts_with(kMapIdFilePrefix)) return event_choice;
    std::string id(file.substr(kMapIdFilePrefix.size()));
    if (event_choice.map && event_choice.map->hasId(id)) return event_choice;
    auto found = mapForId(id);
    if (!found) return found.error();
    MapChoice choice;
    if (*found) {
      choice.map = *found;
    } else {
      choice.missing_id = id;
      choice.missing_kind = MissingIdKind::kMapId;
      if (event_choice.map) {
        choice.note = "the frame names mapping " + id + "; the event's mapping (" + event_choice.map->describe() +
                      ") is " +
                      (event_choice.map->pg_map_id.empty() ? "without a map id" : event_choice.map->pg_map_id);
      }
    }
    return choice;
  }

  Expected<std::shared_ptr<const ClassRecord>> classRecord(const MapHandle& map, std::string_view name) {
    return classRecord(map, name, classes.hashOf(map.load_key, name));
  }
  // The same with classes.hashOf(map.load_key, name) computed by the caller.
  Expected<std::shared_ptr<const ClassRecord>> classRecord(const MapHandle& map, std::string_view name, uint64_t hash) {
    std::shared_ptr<const ClassRecord> record;
    if (classes.get(map.load_key, name, hash, record)) return record;
    const std::string key = proguard::classKey(map.load_id, name);
    auto value = store.lookup(proguard::kProguardFamily, key);
    if (!value) return value.error();
    size_t cost = 0;
    if (value->has_value()) {
      auto decoded = proguard::decodeClassRecord(**value, key);
      if (!decoded) return decoded.error();
      cost = decoded->memoryBytes();
      record = std::make_shared<const ClassRecord>(std::move(*decoded));
    }
    classes.put(map.load_key, name, hash, record, cost);
    return record;
  }

  // The file of a restored frame: the holder class's `sourceFile` entry, else R8's inference.
  Expected<std::string> fileFor(const MapHandle& map, const ClassRecord& frame_class, std::string_view holder,
                                std::string_view printed_file) {
    if (printed_file == "Native Method") return std::string(printed_file);
    if (holder == frame_class.original_name) {
      if (!frame_class.source_file.empty()) return std::string(frame_class.source_file);
      return proguard::inferSourceFile(holder, printed_file);
    }
    // Frames inlined from other classes: that class's own `sourceFile` entry, if any.
    const uint64_t hash = source_files.hashOf(map.load_key, holder);
    std::shared_ptr<const std::string> file;
    if (!source_files.get(map.load_key, holder, hash, file)) {
      const std::string key = proguard::sourceFileKey(map.load_id, holder);
      auto value = store.lookup(proguard::kProguardFamily, key);
      if (!value) return value.error();
      if (value->has_value()) {
        auto decoded = proguard::decodeSourceFile(**value, key);
        if (!decoded) return decoded.error();
        file = std::make_shared<const std::string>(std::move(*decoded));
      }
      source_files.put(map.load_key, holder, hash, file, file ? file->size() : 0);
    }
    if (file && !file->empty()) return *file;
    return proguard::inferSourceFile(holder, printed_file);
  }

  // "loader/module@1.0/" with an obfuscated class as the loader name: the loader restored.
  Expected<std::string> modulePrefix(const MapHandle& map, std::string_view prefix) {
    size_t first = prefix.find('/');
    if (first == std::string_view::npos || first == 0 || first + 1 == prefix.size()) return std::string(prefix);
    auto loader = classRecord(map, prefix.substr(0, first));  // only "loader/…/" has two slashes
    if (!loader) return loader.error();
    if (!*loader) return std::string(prefix);
    return std::string((*loader)->original_name) + std::string(prefix.substr(first));
  }

  // The record of the class a line names (null: not in the mapping), through a one-entry memo
  // of the current run: traces often repeat a class on consecutive lines, and the memo holds
  // the only extra reference, so the record stays alive until the memo moves on.
  struct RunMemo {
    uint64_t load_key = 0;
    bool valid = false;
    std::string name;
    std::shared_ptr<const ClassRecord> record;
  };
  Expected<const ClassRecord*> classRecord(const MapHandle& map, std::string_view name, RunMemo& memo) {
    if (memo.valid && memo.load_key == map.load_key && memo.name == name) return memo.record.get();
    memo.valid = false;
    auto record = classRecord(map, name);
    if (!record) return record.error();
    memo.valid = true;
    memo.load_key = map.load_key;
    memo.name.assign(name);
    memo.record = std::move(*record);
    return memo.record.get();
  }

  // A run's frames of the event's mapping, with their class records looked up ahead (null:
  // the class is not in the mapping). `ready` false: not looked up ahead (another mapping, or
  // an error the frame's own lookup reports). The record is kept alive by the run's RunClasses.
  struct PreparedClass {
    bool ready = false;
    const ClassRecord* record = nullptr;
    uint64_t method_hash = 0;  // proguard::hashName(frame.method), set when `record` is
  };

  // The distinct classes of one run's frames (of the event's mapping), each looked up in the
  // shared cache once: a trace repeats its classes (the load test's real-sized Java stacks name
  // about one distinct class per three frames), and every cache lookup takes a shard's mutex,
  // which the restore threads contend for. Holding the references here also keeps the frames
  // from touching the records' shared reference counts one by one.
  struct RunClasses {
    struct Entry {
      uint64_t hash = 0;      // classes.hashOf(load_key, name)
      std::string_view name;  // into the run's lines
      std::shared_ptr<const ClassRecord> record;
      bool ready = false;  // looked up without error
    };
    std::vector<Entry> entries;
    std::vector<uint32_t> slots;  // open addressing by hash: entry index + 1, 0 = empty

    // The entry of `name`, added (not yet looked up) when new; `added` tells which.
    size_t findOrAdd(uint64_t hash, std::string_view name, bool& added) {
      if ((entries.size() + 1) * 2 > slots.size()) {
        slots.assign(std::max<size_t>(16, slots.size() * 2), 0);
        for (size_t e = 0; e < entries.size(); ++e) place(entries[e].hash, e);
      }
      const size_t mask = slots.size() - 1;
      for (size_t i = hash & mask;; i = (i + 1) & mask) {
        if (slots[i] == 0) {
          slots[i] = static_cast<uint32_t>(entries.size() + 1);
          entries.push_back({hash, name, nullptr, false});
          added = true;
          return entries.size() - 1;
        }
        const Entry& entry = entries[slots[i] - 1];
        if (entry.hash == hash && entry.name == name) {
          added = false;
          return slots[i] - 1;
        }
      }
    }
    void clear() {
      entries.clear();
      // A table grown for a long run is dropped rather than zeroed on every later run.
      if (slots.size() > 64) {
        slots = {};
      } else {
        std::fill(slots.begin(), slots.end(), 0);
      }
    }
    void place(uint64_t hash, size_t entry) {
      const size_t mask = slots.size() - 1;
      size_t i = hash & mask;
      while (slots[i] != 0) i = (i + 1) & mask;
      slots[i] = static_cast<uint32_t>(entry + 1);
    }
  };

  // Lines looked up ahead at a time: enough frames for their memory reads to overlap, few
  // enough that what the first step fetched is still in the CPU cache when the last one runs
  // (a StackOverflowError trace has over a thousand frames).
  static constexpr size_t kPrepareWindow = 32;

  // Looks up the class records of lines [begin, end) of a run and brings the data their methods
  // need into the CPU cache, one step over all frames at a time (ClassRecord's prefetch steps):
  // with the decoded records of a large mapping far larger than the CPU caches, the frames'
  // memory reads then overlap instead of waiting for each other (docs/benchmarks.md, ProGuard).
  // Only classes new to the run (`run`) go to the shared cache. `prepared` holds one entry per
  // line of the run.
  void prepareWindow(const MapChoice& choice, std::span<const stack::StackLine> lines, size_t begin, size_t end,
                     RunClasses& run, std::vector<PreparedClass>& prepared) {
    if (!choice.map) return;
    const MapHandle& map = *choice.map;
    constexpr size_t kNone = SIZE_MAX;
    std::array<size_t, kPrepareWindow> entry_of;  // the run entry of each frame line, kNone else
    entry_of.fill(kNone);
    const size_t first_new = run.entries.size();
    auto frameAt = [&](size_t i) -> const stack::JavaFrameLine* {
      const stack::JavaFrameLine* frame = stack::asJavaFrame(lines[i]);
      return frame != nullptr && !frame->file.starts_with(kMapIdFilePrefix) ? frame : nullptr;
    };
    const stack::JavaFrameLine* previous = nullptr;
    size_t previous_entry = kNone;
    for (size_t i = begin; i < end; ++i) {
      const stack::JavaFrameLine* frame = frameAt(i);
      if (frame == nullptr) {
        previous = nullptr;
        continue;
      }
      if (previous != nullptr && previous_entry != kNone && previous->class_name == frame->class_name) {
        entry_of[i - begin] = previous_entry;  // consecutive frames of one class: no hashing
      } else {
        bool added = false;
        const uint64_t hash = classes.hashOf(map.load_key, frame->class_name);
        entry_of[i - begin] = run.findOrAdd(hash, frame->class_name, added);
        if (added) classes.prefetchSlot(hash);
      }
      previous = frame;
      previous_entry = entry_of[i - begin];
    }
    for (size_t e = first_new; e < run.entries.size(); ++e) {
      classes.prefetchValue(map.load_key, run.entries[e].name, run.entries[e].hash);
    }
    for (size_t e = first_new; e < run.entries.size(); ++e) {
      RunClasses::Entry& entry = run.entries[e];
      auto record = classRecord(map, entry.name, entry.hash);
      if (!record) continue;  // the frame's own lookup reports the error
      entry.ready = true;
      entry.record = std::move(*record);
    }
    for (size_t i = begin; i < end; ++i) {
      if (entry_of[i - begin] == kNone) continue;
      const RunClasses::Entry& entry = run.entries[entry_of[i - begin]];
      if (!entry.ready) continue;
      prepared[i].ready = true;
      prepared[i].record = entry.record.get();
      if (prepared[i].record) prepared[i].method_hash = proguard::hashName(stack::asJavaFrame(lines[i])->method);
    }
    for (ClassRecord::PrefetchStep step : ClassRecord::kPrefetchSteps) {
      for (size_t i = begin; i < end; ++i) {
        if (prepared[i].record) {
          prepared[i].record->prefetchMethod(stack::asJavaFrame(lines[i])->method, prepared[i].method_hash, step);
        }
      }
    }
  }

  Expected<std::optional<std::string>> restoreMessage(const MapHandle& map, std::string_view message) {
    proguard::ClassLookup lookup = [&](std::string_view name) -> Expected<std::shared_ptr<const ClassRecord>> {
      auto record = classRecord(map, name);
      // A class name that is not a valid store key, or a corrupt record: leave the name as it is.
      if (!record && record.error().code() != ErrorCode::kIo) return std::shared_ptr<const ClassRecord>();
      return record;
    };
    return proguard::restoreExceptionMessage(message, lookup);
  }

  // Fills `lookup`, the line's answer where the caller keeps it (default-constructed): a
  // FrameLookup holds its first frame inline (frame_lookup.h), so returning one and assigning it
  // would move each frame's strings twice.
  Status retraceFrame(const MapChoice& event_choice, const stack::JavaFrameLine& frame, const PreparedClass& prepared,
                      proguard::RetraceContext& context, RunMemo& memo, FrameLookup& lookup);
};

namespace {

// The class part of a restored frame's "com.example.Foo.bar".
std::string_view frameClass(const SymbolizedFrame& frame) {
  size_t dot = frame.function.rfind('.');
  return dot == std::string::npos ? std::string_view() : std::string_view(frame.function).substr(0, dot);
}

// Number of leading package segments ("com", "example") two class names share.
size_t sharedPackageDepth(std::string_view a, std::string_view b) {
  size_t depth = 0;
  for (size_t i = 0; i < a.size() && i < b.size() && a[i] == b[i]; ++i) {
    if (a[i] == '.') ++depth;
  }
  return depth;
}

// The original classes an object of this obfuscated class may have been created as: its own,
// those of other class blocks under the same name (ClassRecord::merged_names), and classes whose
// constructors the class holds as methods of their own ("void a.Sub.<init>(…) -> <init>", not
// inlined into another method): the classes merged into it by a mapping that lists no block
// for them (ProGuard 6 merging InvalidFormatException into MismatchedInputException). Mapping
// order, the block's own class first.
std::vector<std::string> mergedClasses(const proguard::ClassRecord& record) {
  std::vector<std::string> candidates{std::string(record.original_name)};
  for (std::string_view merged : record.merged_names) candidates.emplace_back(merged);
  if (const proguard::MethodRecord* init = record.findMethod("<init>")) {
    for (const auto& chain : init->chains) {
      std::string_view holder = record.strings[init->outermost(chain).holder];
      if (!holder.empty() && std::find(candidates.begin(), candidates.end(), holder) == candidates.end()) {
        candidates.emplace_back(holder);
      }
    }
  }
  return candidates;
}

// Picks, among the original classes one obfuscated exception class stands for, those the frames
// of its trace point to: a class whose own code (or whose nested or outer class's code) appears
// in the frames is the strongest sign (a factory method, a `throw` inside the class); failing
// that, the classes sharing the most package segments with the innermost restored frame, since
// code mostly throws exceptions declared next to it. Returns every candidate with the best score
// (mapping order), so more than one left means the trace does not tell.
std::vector<std::string> chooseMergedClass(const std::vector<std::string>& candidates,
                                           std::span<const JavaLineResult> below) {
  auto related = [](std::string_view candidate, std::string_view frame_class) {
    auto nested = [](std::string_view outer, std::string_view inner) {
      return inner.size() > outer.size() && inner.starts_with(outer) && inner[outer.size()] == '$';
    };
    return frame_class == candidate || nested(candidate, frame_class) || nested(frame_class, candidate);
  };
  std::string_view innermost;
  for (const JavaLineResult& line : below) {
    if (line.lookup.note != "not in mapping" && !line.lookup.removed && !line.lookup.frames.empty()) {
      innermost = frameClass(line.lookup.frames.front());
      break;
    }
  }
  std::vector<std::pair<size_t, size_t>> scores;  // (frames of the class, shared package depth)
  for (const std::string& candidate : candidates) {
    size_t own = 0;
    for (const JavaLineResult& line : below) {
      for (const SymbolizedFrame& frame : line.lookup.frames) own += related(candidate, frameClass(frame)) ? 1 : 0;
    }
    scores.emplace_back(own > 0 ? 1 : 0, innermost.empty() ? 0 : sharedPackageDepth(candidate, innermost));
  }
  const auto best = *std::max_element(scores.begin(), scores.end());
  std::vector<std::string> chosen;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (scores[i] == best) chosen.push_back(candidates[i]);
  }
  return chosen;
}

// Lines a frame's result prints (without "<OR>" lines): the deepest answer, 0 when dropped.
size_t printedDepth(const FrameLookup& lookup) {
  if (lookup.status != FrameStatus::kSymbolicated) return 1;  // printed as received
  if (lookup.removed) return 0;
  size_t depth = lookup.frames.size();
  for (const auto& alternative : lookup.alternatives) depth = std::max(depth, alternative.size());
  return depth;
}

// Sets JavaLineResult::more_count for the "... N more" lines of a run. The N elided frames are
// the last N of the enclosing trace (the previous trace at the same indentation for "Caused
// by:", the nearest one indented less for "Suppressed:"), whose own "... M more" is expanded
// the same way; their restored lines are counted.
void countMoreLines(std::span<const stack::StackLine> lines, std::vector<JavaLineResult>& results) {
  struct Block {
    size_t indent = 0;
    std::vector<size_t> frames;  // line indices, "... M more" expanded
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < lines.size(); ++i) {
    const stack::StackLine& line = lines[i];
    if (stack::asJavaException(line) != nullptr) {
      blocks.push_back({line.indent.size(), {}});
    } else if (stack::asJavaFrame(line) != nullptr) {
      if (!blocks.empty()) blocks.back().frames.push_back(i);
    } else if (const auto* more = stack::asJavaMore(line); more != nullptr && blocks.size() >= 2) {
      const Block* enclosing = nullptr;
      for (size_t b = blocks.size() - 1; b-- > 0;) {
        if (blocks[b].indent <= blocks.back().indent) {
          enclosing = &blocks[b];
          break;
        }
      }
      if (enclosing == nullptr || more->count > enclosing->frames.size()) continue;
      std::vector<size_t> tail(enclosing->frames.end() - more->count, enclosing->frames.end());
      size_t printed = 0;
      for (size_t frame : tail) printed += printedDepth(results[frame].lookup);
      if (printed != more->count) results[i].more_count = static_cast<uint32_t>(printed);
      blocks.back().frames.insert(blocks.back().frames.end(), tail.begin(), tail.end());
    }
  }
}

// "holder.method" as a restored frame's function, sized once.
void setQualifiedName(FrameString& function, std::string_view holder, std::string_view method) {
  function.reserve(holder.size() + 1 + method.size());
  function.append(holder).append(".").append(method);
}

// The frame as printed, for a class the mapping does not list, into a fresh `lookup`.
void fillUnchangedFrame(const stack::JavaFrameLine& frame, std::string_view note, FrameLookup& lookup) {
  lookup.status = FrameStatus::kSymbolicated;
  lookup.tier = "mapping";
  SymbolizedFrame& out = lookup.frames.emplace_back();
  setQualifiedName(out.function, frame.class_name, frame.method);
  out.file = frame.file;
  out.line = frame.line.value_or(0);
  lookup.note = note;
}

}  // namespace

Status ProguardResolver::Impl::retraceFrame(const MapChoice& event_choice, const stack::JavaFrameLine& frame,
                                            const PreparedClass& prepared, proguard::RetraceContext& context,
                                            RunMemo& memo, FrameLookup& lookup) {
  const MapChoice* choice = &event_choice;
  MapChoice frame_choice;
  if (frame.file.starts_with(kMapIdFilePrefix)) {
    auto chosen = chooseFrameMap(event_choice, frame.file);
    if (!chosen) return chosen.error();
    frame_choice = std::move(*chosen);
    choice = &frame_choice;
  }
  if (!choice->map) {
    lookup = FrameLookup::missing(choice->missing_id, choice->missing_kind);
    lookup.note = choice->note;
    context.reset();
    return Status::ok();
  }
  const MapHandle& map = *choice->map;
  auto record =
      prepared.ready ? Expected<const ClassRecord*>(prepared.record) : classRecord(map, frame.class_name, memo);
  if (!record) {
    if (record.error().code() == ErrorCode::kIo) return record.error();
    context.reset();
    lookup = FrameLookup::notFound(FrameReason::kMalformedSymbols, record.error().message());
    return Status::ok();
  }
  std::string module;
  if (!frame.module_prefix.empty()) {
    auto prefix = modulePrefix(map, frame.module_prefix);
    if (!prefix) return prefix.error();
    module = std::move(*prefix);
  }
  if (*record == nullptr) {
    context.reset();
    fillUnchangedFrame(frame, "not in mapping", lookup);
    lookup.frames[0].module = std::move(module);
    return Status::ok();
  }
  const ClassRecord& cls = **record;              // alive while `prepared` or `memo` holds it
  thread_local proguard::MethodRetrace retraced;  // storage reused frame after frame
  const uint64_t method_hash = prepared.ready ? prepared.method_hash : proguard::hashName(frame.method);
  proguard::retraceMethod(cls, frame.method, method_hash, frame.line, context, retraced);
  context.reset();
  context.outline_position = retraced.next_outline_position;

  lookup.status = FrameStatus::kSymbolicated;
  lookup.tier = "mapping";
  lookup.note = retraced.note;
  if (!choice->note.empty()) lookup.note += (lookup.note.empty() ? "" : "; ") + choice->note;
  if (!retraced.method_found && cls.synthesized) {  // a compiler-made class: nothing to show
    lookup.removed = true;
    lookup.note = "frame of a synthesized class";
    return Status::ok();
  }
  if (!retraced.method_found) {
    SymbolizedFrame& out = lookup.frames.emplace_back();
    setQualifiedName(out.function, cls.original_name, frame.method);
    out.module = module;
    auto file = fileFor(map, cls, cls.original_name, frame.file);
    if (!file) return file.error();
    out.file = std::move(*file);
    out.line = frame.line.value_or(0);
    lookup.reason = FrameReason::kMethodNotMapped;
    std::string note = "method not in mapping at this line; class name restored";
    lookup.note = lookup.note.empty() ? note : note + "; " + lookup.note;
    return Status::ok();
  }
  if (retraced.removed) {
    lookup.removed = true;
    return Status::ok();
  }
  for (size_t a = 0; a < retraced.alternatives.size(); ++a) {
    // Frames are built in place, the first candidate's in lookup.frames itself: the first frame is
    // held inline (frame_lookup.h), so moving a frame or the list copies it.
    SymbolizedFrames later;
    SymbolizedFrames& frames = a == 0 ? lookup.frames : later;
    const auto& answer = retraced.alternatives[a];
    frames.reserve(answer.size());
    for (size_t i = 0; i < answer.size(); ++i) {
      SymbolizedFrame& out = frames.emplace_back();
      // The file first: a desugared interface method's companion class carries the interface's.
      auto file = fileFor(map, cls, answer[i].holder, frame.file);
      if (!file) return file.error();
      std::string_view holder = answer[i].holder, method = answer[i].method;
      proguard::restoreDesugaredInterfaceMethod(holder, method);
      setQualifiedName(out.function, holder, method);
      out.file = std::move(*file);
      out.line = answer[i].line.value_or(0);
      out.inlined = i + 1 < answer.size();
      out.module = module;
    }
    // Answers that differ only in what the output does not show (parameter types of
    // overloads printed without a line) are shown once.
    auto same = [&](const auto& other) {
      return std::equal(frames.begin(), frames.end(), other.begin(), other.end(),
                        [](const SymbolizedFrame& x, const SymbolizedFrame& y) {
                          return x.function == y.function && x.file == y.file && x.line == y.line;
                        });
    };
    if (a != 0 && !same(lookup.frames) && std::none_of(lookup.alternatives.begin(), lookup.alternatives.end(), same)) {
      lookup.alternatives.emplace_back(std::make_move_iterator(frames.begin()), std::make_move_iterator(frames.end()));
    }
  }
  // Several answers the output tells apart: restored, with the candidates listed.
  if (!lookup.alternatives.empty()) lookup.reason = FrameReason::kAmbiguous;
  return Status::ok();
}

ProguardResolver::ProguardResolver(SymbolStore& store, const ProguardResolverOptions& options)
    : impl_(new Impl(store, options)) {}
ProguardResolver::~ProguardResolver() = default;

void ProguardResolver::storeChanged() {
  proguard::proguardStoreEpoch().fetch_add(1, std::memory_order_release);
}

Expected<std::vector<JavaLineResult>> ProguardResolver::retrace(const EventScope& scope,
                                                                std::span<const stack::StackLine> lines) {
  impl_->syncEpoch();
  std::vector<JavaLineResult> results(lines.size());
  auto event_choice = impl_->chooseEventMap(scope);
  if (!event_choice) {
    if (!records::isUnreadableRecord(event_choice.error())) return event_choice.error();
    // The pointer to the build's mapping cannot be read (records::RecordReader): every frame of
    // the run is unrestored, with why; the other lines stay as they are.
    for (size_t i = 0; i < lines.size(); ++i) {
      if (stack::asJavaFrame(lines[i]) != nullptr) {
        results[i].lookup = FrameLookup::notFound(FrameReason::kMalformedSymbols, event_choice.error().message());
      } else {
        results[i].lookup.status = FrameStatus::kSymbolicated;
        if (const auto* exception = stack::asJavaException(lines[i]))
          results[i].exception_class = exception->class_name;
      }
    }
    countMoreLines(lines, results);
    return results;
  }
  std::vector<Impl::PreparedClass> prepared(lines.size());
  // Storage reused run after run on this thread; emptied when the run is done, so that it holds
  // no record beyond the call.
  thread_local Impl::RunClasses run_classes;
  struct EmptyAtExit {
    Impl::RunClasses& run;
    ~EmptyAtExit() { run.clear(); }
  } empty_at_exit{run_classes};
  proguard::RetraceContext context;
  Impl::RunMemo memo;
  std::vector<std::pair<size_t, std::vector<std::string>>> merged_headers;  // line, candidates
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i % Impl::kPrepareWindow == 0) {
      impl_->prepareWindow(*event_choice, lines, i, std::min(lines.size(), i + Impl::kPrepareWindow), run_classes,
                           prepared);
    }
    const stack::StackLine& line = lines[i];
    JavaLineResult& result = results[i];
    if (const auto* frame = stack::asJavaFrame(line)) {
      Status retraced = impl_->retraceFrame(*event_choice, *frame, prepared[i], context, memo, result.lookup);
      if (!retraced && records::isUnreadableRecord(retraced.error())) {
        // A record this frame needs cannot be read (records::RecordReader): unrestored, with why.
        result.lookup = FrameLookup::notFound(FrameReason::kMalformedSymbols, retraced.error().message());
      } else if (!retraced) {
        return retraced.error();
      }
      continue;
    }
    context.reset();
    if (const auto* exception = stack::asJavaException(line)) {
      result.exception_class = exception->class_name;
      result.lookup.status = FrameStatus::kSymbolicated;
      if (event_choice->map) {
        auto record = impl_->classRecord(*event_choice->map, exception->class_name, memo);
        if (!record && record.error().code() == ErrorCode::kIo) return record.error();
        if (record && *record != nullptr) {
          result.exception_class = std::string((*record)->original_name);
          result.lookup.tier = "mapping";
          std::vector<std::string> candidates = mergedClasses(**record);
          if (candidates.size() > 1) merged_headers.emplace_back(i, std::move(candidates));
        }
        if (exception->has_message) {
          auto message = impl_->restoreMessage(*event_choice->map, exception->message);
          if (!message) return message.error();
          if (*message) result.exception_message = std::move(**message);
        }
      } else {
        result.lookup = FrameLookup::missing(event_choice->missing_id, event_choice->missing_kind);
        result.lookup.note = event_choice->note;
      }
      context.thrown_obfuscated = exception->class_name;
      context.thrown_original = result.exception_class;
      continue;
    }
    result.lookup.status = FrameStatus::kSymbolicated;  // "... N more", blank: nothing to restore
  }
  countMoreLines(lines, results);
  for (auto& [index, candidates] : merged_headers) {
    // The frames under the header, after the lines a multi-line message continues on.
    size_t begin = index + 1;
    while (begin < lines.size() && lines[begin].isUnknown()) ++begin;
    size_t end = begin;
    while (end < lines.size() && stack::asJavaFrame(lines[end]) != nullptr) ++end;
    std::vector<std::string> chosen =
        chooseMergedClass(candidates, std::span<const JavaLineResult>(results).subspan(begin, end - begin));
    JavaLineResult& header = results[index];
    header.exception_class = chosen.front();
    header.exception_class_alternatives.assign(chosen.begin() + 1, chosen.end());
  }
  return results;
}

Expected<std::optional<std::string>> ProguardResolver::deobfuscateClass(const EventScope& scope,
                                                                        std::string_view obfuscated) {
  impl_->syncEpoch();
  auto choice = impl_->chooseEventMap(scope);
  // A record that cannot be read (records::RecordReader): the name stays as it is.
  if (!choice)
    return records::isUnreadableRecord(choice.error()) ? Expected<std::optional<std::string>>(std::nullopt)
                                                       : choice.error();
  if (!choice->map) return std::optional<std::string>();
  auto record = impl_->classRecord(*choice->map, obfuscated);
  if (!record)
    return records::isUnreadableRecord(record.error()) ? Expected<std::optional<std::string>>(std::nullopt)
                                                       : record.error();
  if (!*record) return std::optional<std::string>();
  return std::optional<std::string>(std::string((*record)->original_name));
}

Expected<std::optional<std::string>> ProguardResolver::deobfuscateMessage(const EventScope& scope,
                                                                          std::string_view message) {
  impl_->syncEpoch();
  auto choice = impl_->chooseEventMap(scope);
  if (!choice)
    return records::isUnreadableRecord(choice.error()) ? Expected<std::optional<std::string>>(std::nullopt)
                                                       : choice.error();
  if (!choice->map) return std::optional<std::string>();
  return impl_->restoreMessage(*choice->map, message);
}

std::unique_ptr<Resolver> makeProguardResolver(SymbolStore& store, const SymbolizerOptions& options) {
  ProguardResolverOptions resolver_options;
  resolver_options.cache_bytes = options.cacheBytes("proguard", resolver_options.cache_bytes);
  return std::make_unique<ProguardResolver>(store, resolver_options);
}

}  // namespace restack
