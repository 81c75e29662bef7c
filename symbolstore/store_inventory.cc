#include "symbolstore/store_inventory.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "symbolstore/native/native_records.h"
#include "symbolstore/proguard/proguard_records.h"
#include "symbolstore/record_codec.h"
#include "symbolstore/sourcemap/sourcemap_records.h"
#include "symbolstore/usage.h"

namespace restack::inventory {
namespace {

namespace ns = native_store;
namespace pg = proguard;
namespace sm = sourcemap_records;

// Counts one record into a set's totals.
struct Tally {
  uint64_t bytes = 0;
  uint64_t records = 0;
  std::map<std::string, uint64_t> types;
  std::map<uint32_t, uint64_t> versions;

  void add(std::string_view type, std::string_view key, std::string_view value) {
    bytes += key.size() + value.size();
    ++records;
    ++types[std::string(type)];
    if (!value.empty()) ++versions[static_cast<uint8_t>(value[0])];
  }
  void into(SymbolSet& set) const {
    set.bytes += bytes;
    set.records += records;
    for (const auto& [type, count] : types) set.record_types[type] += count;
    for (const auto& [version, count] : versions) set.versions[version] += count;
  }
};

// Splits "a\0b\0rest" (after a key's type prefix) into its three parts; false when it has fewer.
bool splitThree(std::string_view text, std::string& a, std::string& b, std::string& rest) {
  const size_t first = text.find('\0');
  if (first == std::string_view::npos) return false;
  const size_t second = text.find('\0', first + 1);
  if (second == std::string_view::npos) return false;
  a.assign(text.substr(0, first));
  b.assign(text.substr(first + 1, second - first - 1));
  rest.assign(text.substr(second + 1));
  return true;
}

std::string hex64(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string hexAddress(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

uint64_t readU64BE(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8 && i < bytes.size(); ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

std::string u64BE(uint64_t value) {
  std::string out;
  records::RecordWriter::putBigEndian(out, value, 8);
  return out;
}

// Visits every key and value of a family.
template <typename Visit>
Status scanFamily(SymbolStore& store, const StoreFamily& family, Visit visit) {
  rocksdb::ReadOptions options;
  options.fill_cache = false;  // a one-off scan must not push the worker's hot blocks out
  std::unique_ptr<rocksdb::Iterator> it(store.db().NewIterator(options, store.family(family)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    visit(std::string_view(it->key().data(), it->key().size()),
          std::string_view(it->value().data(), it->value().size()));
  }
  if (!it->status().ok()) {
    return ioError("symbol store " + store.options().path + ": cannot read the " + family.name() +
                   " family: " + it->status().ToString());
  }
  return Status::ok();
}

std::string problem(std::string_view family, std::string_view key, const Error& error) {
  return std::string(family) + " " + records::printableKey(key) + ": " + error.message();
}

struct UsageTimes {
  std::map<std::string, int64_t> uploaded;
  std::map<std::string, int64_t> last_used;
  int64_t uploadedOf(const std::string& set) const {
    auto found = uploaded.find(set);
    return found == uploaded.end() ? 0 : found->second;
  }
  int64_t lastUsedOf(const std::string& set) const {
    auto found = last_used.find(set);
    return found == last_used.end() ? 0 : found->second;
  }
};

Status readNative(SymbolStore& store, Inventory& inventory, const UsageTimes& times) {
  std::map<std::string, Tally> by_id;
  std::map<std::string, ns::ImageRecord> images;
  std::map<std::string, std::vector<std::string>> alias_keys;  // id -> 'A' keys
  struct Range {
    std::optional<uint64_t> low, high;
    void add(uint64_t address) {
      low = low ? std::min(*low, address) : address;
      high = high ? std::max(*high, address) : address;
    }
  };
  std::map<std::string, Range> function_ranges, symbol_ranges;
  std::map<std::string, Tally> index_tallies;  // module-index key -> tally
  Status scanned = scanFamily(store, ns::kNativeFamily, [&](std::string_view key, std::string_view value) {
    if (key.empty()) return;
    const char type = key[0];
    if (type == 'I') {
      const std::string id(key.substr(1));
      auto image = ns::decodeImage(value, key);
      if (image) {
        images[id] = std::move(*image);
      } else {
        inventory.problems.push_back(problem("native", key, image.error()));
      }
      by_id[id].add("image", key, value);
    } else if (type == 'A') {
      auto id = ns::decodeAlias(value, key);
      if (!id) {
        inventory.problems.push_back(problem("native", key, id.error()));
        return;
      }
      by_id[*id].add("alias", key, value);
      alias_keys[*id].emplace_back(key);
    } else if (type == 'N') {
      ModuleIndex index;
      index.key.assign(key);
      if (!splitThree(key.substr(1), index.app, index.build, index.module)) return;
      auto ids = ns::decodeIdList(value, key);
      if (!ids) {
        inventory.problems.push_back(problem("native", key, ids.error()));
      } else {
        index.ids = std::move(*ids);
      }
      index_tallies[index.key].add("module index", key, value);
      inventory.modules.push_back(std::move(index));
    } else if ((type == 'F' || type == 'S' || type == 'T') && key.size() >= 2) {
      const size_t length = static_cast<uint8_t>(key[1]);
      if (key.size() < 2 + length) return;
      const std::string id(key.substr(2, length));
      by_id[id].add(type == 'F' ? "function" : type == 'S' ? "symbol chunk" : "string block", key, value);
      if (type != 'T') {
        if (auto address = ns::addressOfKey(type, id, key)) {
          (type == 'F' ? function_ranges : symbol_ranges)[id].add(*address);
        }
      }
    }
  });
  RESTACK_RETURN_IF_ERROR(scanned);

  // A module index counts towards the first image it lists.
  std::map<std::string, std::vector<const ModuleIndex*>> indexes_of;  // id -> indexes listing it
  for (const ModuleIndex& index : inventory.modules) {
    for (const std::string& id : index.ids) indexes_of[id].push_back(&index);
  }

  for (const auto& [id, tally] : by_id) {
    SymbolSet set;
    set.family = "native";
    set.native_id = id;
    set.identifier = ns::bytesToHex(id);
    tally.into(set);
    auto image = images.find(id);
    if (image != images.end()) {
      const ns::ImageRecord& record = image->second;
      set.kind = record.format == native::ObjectFormat::kMachO ? "macho" : "elf";
      set.app = record.app;
      set.build = record.build_id;
      set.name = record.module;
      set.shared = record.shared || (record.app.empty() && record.build_id.empty());
      set.keys.push_back(ns::imageKey(id));
      set.details.push_back("arch " + (record.arch.empty() ? std::string("unknown") : record.arch));
      std::string tiers;
      if (record.has_dwarf) tiers += " dwarf";
      if (record.has_symbols) tiers += record.symbols_from_debug_file ? " symbols (from a debug file)" : " symbols";
      if (record.has_objc) tiers += " objc";
      set.details.push_back("tiers" + (tiers.empty() ? std::string(" none") : tiers));
      set.details.push_back("image base " + hexAddress(record.image_base) + ", " + std::to_string(record.functions) +
                            " functions, " + std::to_string(record.symbols) + " symbols, " +
                            std::to_string(record.strings) + " strings");
    } else {
      set.kind = "native";
      set.details.push_back("no image record: records left by an interrupted upload; delete with --debug-id");
    }
    if (auto range = function_ranges.find(id); range != function_ranges.end()) {
      set.details.push_back("functions from " + hexAddress(*range->second.low) + " to " +
                            hexAddress(*range->second.high));
    }
    if (auto range = symbol_ranges.find(id); range != symbol_ranges.end()) {
      set.details.push_back("symbol chunks from " + hexAddress(*range->second.low) + " to " +
                            hexAddress(*range->second.high));
    }
    std::vector<std::string> alias_hex;
    if (auto aliases = alias_keys.find(id); aliases != alias_keys.end()) {
      for (const std::string& key : aliases->second) {
        set.keys.push_back(key);
        alias_hex.push_back(key.substr(1));
      }
      std::string line = "aliases";
      for (const std::string& alias : alias_hex) line += " " + alias;
      set.details.push_back(line);
    }
    if (auto listed = indexes_of.find(id); listed != indexes_of.end()) {
      for (const ModuleIndex* index : listed->second) {
        set.details.push_back("module index " + buildLabel(index->app, index->build) + " " + index->module);
        if (index->app != set.app || index->build != set.build) {
          set.also_used_by.push_back(buildLabel(index->app, index->build));
        }
        if (index->ids.front() == id) index_tallies[index->key].into(set);
      }
    }
    const std::string image_set = usage::imageSet(set.identifier);
    set.uploaded = times.uploadedOf(image_set);
    set.last_used = times.lastUsedOf(image_set);
    for (const std::string& alias : alias_hex) {
      set.last_used = std::max(set.last_used, times.lastUsedOf(usage::imageSet(alias)));
    }
    if (!set.shared) {
      const std::string build_set = usage::buildSet("native", set.app, set.build);
      if (set.uploaded == 0) set.uploaded = times.uploadedOf(build_set);
      set.last_used = std::max(set.last_used, times.lastUsedOf(build_set));
    }
    inventory.sets.push_back(std::move(set));
  }
  return Status::ok();
}

Status readProguard(SymbolStore& store, Inventory& inventory, const UsageTimes& times) {
  std::map<std::string, Tally> by_load;
  std::map<std::string, pg::MapInfo> infos;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> served_by;  // load -> builds
  Status scanned = scanFamily(store, pg::kProguardFamily, [&](std::string_view key, std::string_view value) {
    if (key.size() < 2 || key[1] != '\0') return;
    const char type = key[0];
    if (type == 'B') {
      Inventory::BuildKey build_key{"proguard", std::string(key), {}, {}};
      const std::string_view rest = key.substr(2);
      const size_t zero = rest.find('\0');
      if (zero == std::string_view::npos) return;
      build_key.app.assign(rest.substr(0, zero));
      build_key.build.assign(rest.substr(zero + 1));
      auto pointer = pg::decodeBuildPointer(value, key);
      if (!pointer) {
        inventory.problems.push_back(problem("proguard", key, pointer.error()));
      } else {
        served_by[pointer->load_id].emplace_back(build_key.app, build_key.build);
        by_load[pointer->load_id].add("build pointer", key, value);
      }
      inventory.build_keys.push_back(std::move(build_key));
    } else if (type == 'I') {
      auto pointer = pg::decodeIdPointer(value, key);
      if (!pointer) {
        inventory.problems.push_back(problem("proguard", key, pointer.error()));
        return;
      }
      by_load[pointer->load_id].add("map id pointer", key, value);
      inventory.build_keys.push_back({"proguard", std::string(key), pointer->app, pointer->build_id});
    } else if (type == 'L') {
      const std::string_view rest = key.substr(2);
      const size_t zero = rest.find('\0');
      if (zero == std::string_view::npos || zero + 1 >= rest.size()) return;
      const std::string load(rest.substr(0, zero));
      const char record = rest[zero + 1];
      if (record == 'M') {
        auto info = pg::decodeMapInfo(value, key);
        if (info) {
          infos[load] = std::move(*info);
        } else {
          inventory.problems.push_back(problem("proguard", key, info.error()));
        }
        by_load[load].add("map info", key, value);
      } else {
        by_load[load].add(record == 'C' ? "class" : record == 'S' ? "source file" : "other", key, value);
      }
    }
  });
  RESTACK_RETURN_IF_ERROR(scanned);
  for (const auto& [load, tally] : by_load) {
    SymbolSet set;
    set.family = "proguard";
    set.kind = "proguard";
    set.proguard_load = load;
    tally.into(set);
    auto info = infos.find(load);
    if (info != infos.end()) {
      set.app = info->second.app;
      set.build = info->second.build_id;
      set.identifier = !info->second.pg_map_id.empty() ? info->second.pg_map_id : info->second.pg_map_hash;
      set.name = info->second.compiler;
      if (!info->second.map_version.empty()) set.name += (set.name.empty() ? "" : " ") + info->second.map_version;
      set.details.push_back(std::to_string(info->second.classes) + " classes");
      if (!info->second.pg_map_hash.empty()) set.details.push_back("pg_map_hash " + info->second.pg_map_hash);
    } else {
      set.details.push_back("no map info: records left by an interrupted upload");
    }
    if (set.identifier.empty()) set.identifier = "load " + load;
    set.details.push_back("load " + load);
    bool served = false;
    for (const auto& [app, build] : served_by[load]) {
      if (app == set.app && build == set.build) {
        served = true;
      } else {
        set.also_used_by.push_back(buildLabel(app, build));
        set.details.push_back("serves " + buildLabel(app, build));
      }
    }
    if (!served) set.details.push_back("not served: a later upload of the build replaced it");
    const std::string build_set = usage::buildSet("proguard", set.app, set.build);
    if (served) {
      set.uploaded = times.uploadedOf(build_set);
      set.last_used = times.lastUsedOf(build_set);
    }
    if (info != infos.end()) {
      for (const std::string* id : {&info->second.pg_map_id, &info->second.pg_map_hash}) {
        if (!id->empty()) set.last_used = std::max(set.last_used, times.lastUsedOf(usage::idSet("proguard", *id)));
      }
    }
    inventory.sets.push_back(std::move(set));
  }
  return Status::ok();
}

Status readSourcemap(SymbolStore& store, Inventory& inventory, const UsageTimes& times) {
  struct Pointer {
    std::string app, build, name;
  };
  std::map<uint64_t, Tally> by_map;
  std::map<uint64_t, sm::MapHeader> headers;
  std::map<uint64_t, std::vector<Pointer>> pointers;
  std::vector<std::pair<Pointer, Tally>> minified;
  Status scanned = scanFamily(store, sm::kSourcemapFamily, [&](std::string_view key, std::string_view value) {
    if (key.empty()) return;
    const char type = key[0];
    if (type == 'p' || type == 'm') {
      Pointer pointer;
      if (!splitThree(key.substr(1), pointer.app, pointer.build, pointer.name)) return;
      inventory.build_keys.push_back({"sourcemap", std::string(key), pointer.app, pointer.build});
      if (type == 'm') {
        Tally tally;
        tally.add("minified file", key, value);
        minified.emplace_back(std::move(pointer), std::move(tally));
        return;
      }
      auto map_id = sm::decodePointer(value, key);
      if (!map_id) {
        inventory.problems.push_back(problem("sourcemap", key, map_id.error()));
        return;
      }
      by_map[*map_id].add("pointer", key, value);
      pointers[*map_id].push_back(std::move(pointer));
    } else if ((type == 'h' || type == 's' || type == 't' || type == 'g' || type == 'f') && key.size() >= 9) {
      const uint64_t map_id = readU64BE(key.substr(1, 8));
      if (type == 'h') {
        auto header = sm::decodeHeader(value, key);
        if (header) {
          headers[map_id] = std::move(*header);
        } else {
          inventory.problems.push_back(problem("sourcemap", key, header.error()));
        }
      }
      by_map[map_id].add(type == 'h'   ? "header"
                         : type == 's' ? "source"
                         : type == 't' ? "source text"
                         : type == 'g' ? "mapping chunk"
                                       : "generated functions",
                         key, value);
    }
  });
  RESTACK_RETURN_IF_ERROR(scanned);

  // Index-map sections and RAM-bundle segments are maps of their own, owned by their parent.
  std::map<uint64_t, uint64_t> parent;
  for (const auto& [id, header] : headers) {
    for (const sm::Section& section : header.sections) {
      if (section.child && *section.child != id) parent[*section.child] = id;
    }
    for (const auto& [segment, child] : header.facebook_segments) {
      if (child != id) parent[child] = id;
    }
  }
  auto rootOf = [&](uint64_t id) {
    for (int depth = 0; depth < 64; ++depth) {
      auto up = parent.find(id);
      if (up == parent.end() || pointers.count(id)) break;
      id = up->second;
    }
    return id;
  };
  std::map<uint64_t, std::vector<uint64_t>> members;
  for (const auto& [id, tally] : by_map) members[rootOf(id)].push_back(id);

  for (const auto& [root, ids] : members) {
    SymbolSet set;
    set.family = "sourcemap";
    set.kind = "sourcemap";
    set.map_ids.push_back(root);
    for (uint64_t id : ids) {
      if (id != root) set.map_ids.push_back(id);
      by_map[id].into(set);
    }
    if (set.map_ids.size() > 1) set.details.push_back(std::to_string(set.map_ids.size() - 1) + " section maps");
    auto header = headers.find(root);
    if (header != headers.end()) {
      set.identifier = header->second.debug_id;
      set.name = header->second.file;
      set.details.push_back(std::to_string(header->second.source_count) + " sources");
      if (header->second.index_map) set.details.push_back("index map");
      if (header->second.hermes) set.details.push_back("Hermes");
      if (header->second.ram_bundle) set.details.push_back("RAM bundle");
    } else {
      set.details.push_back("no header record: records left by an interrupted upload");
    }
    if (set.identifier.empty()) set.identifier = hex64(root);
    set.details.push_back("map id " + hex64(root));
    auto served = pointers.find(root);
    if (served != pointers.end()) {
      // A build's pointer before the app's build-less one (the Web H5 key, sourcemap_records.h),
      // which the latest upload of that file name for the app owns.
      std::sort(served->second.begin(), served->second.end(), [](const Pointer& a, const Pointer& b) {
        return std::tuple(a.app, a.build.empty(), a.build, a.name) <
               std::tuple(b.app, b.build.empty(), b.build, b.name);
      });
      const Pointer& first = served->second.front();
      set.app = first.app;
      set.build = first.build;
      for (const Pointer& pointer : served->second) {
        const std::string name =
            pointer.name == sm::kRamBundlePointerName ? std::string("(RAM bundle modules)") : pointer.name;
        set.details.push_back("serves " + name + " for " + buildLabel(pointer.app, pointer.build));
        if (pointer.app == first.app && pointer.build == first.build) {
          if (set.name.empty() || pointer.name == first.name) set.name = name;
        } else if (pointer.app == first.app && pointer.build.empty()) {
          set.keys.push_back(sm::pointerKey(pointer.app, pointer.build, pointer.name));  // goes with the map
        } else if (std::find(set.also_used_by.begin(), set.also_used_by.end(),
                             buildLabel(pointer.app, pointer.build)) == set.also_used_by.end()) {
          set.also_used_by.push_back(buildLabel(pointer.app, pointer.build));
        }
        const std::string build_set = usage::buildSet("sourcemap", pointer.app, pointer.build);
        set.uploaded = std::max(set.uploaded, times.uploadedOf(build_set));
        set.last_used = std::max(set.last_used, times.lastUsedOf(build_set));
      }
      set.shared = first.app.empty();
    } else {
      set.details.push_back("not served: no file name points at it");
    }
    inventory.sets.push_back(std::move(set));
  }
  for (auto& [pointer, tally] : minified) {
    SymbolSet set;
    set.family = "sourcemap";
    set.kind = "minified";
    set.app = pointer.app;
    set.build = pointer.build;
    set.identifier = pointer.name;
    set.name = pointer.name;
    set.shared = pointer.app.empty();
    tally.into(set);
    set.details.push_back("the minified file, kept to name the functions of a map uploaded after it");
    set.uploaded = times.uploadedOf(usage::buildSet("sourcemap", pointer.app, pointer.build));
    inventory.sets.push_back(std::move(set));
  }
  return Status::ok();
}

Status readUsage(SymbolStore& store, UsageTimes& times, Inventory& inventory) {
  return scanFamily(store, kUsageFamily, [&](std::string_view key, std::string_view value) {
    if (key.size() < 2 || (key[0] != 'U' && key[0] != 'L')) return;
    auto minutes = usage::decodeTime(value, key);
    if (!minutes) {
      inventory.problems.push_back(problem("usage", key, minutes.error()));
      return;
    }
    (key[0] == 'U' ? times.uploaded : times.last_used)[std::string(key.substr(1))] = *minutes;
  });
}

bool sameBuild(const SymbolSet& set, std::string_view app, std::string_view build) {
  return !set.shared && set.app == app && set.build == build;
}

// Keeps the smallest and largest key touched in each family, for the compaction afterwards.
struct TouchedRange {
  std::string low, high;
  bool any = false;
  void add(std::string_view begin, std::string_view end) {
    if (!any || begin < low) low.assign(begin);
    if (!any || end > high) high.assign(end);
    any = true;
  }
};

}  // namespace

std::string buildLabel(std::string_view app, std::string_view build) {
  if (app.empty() && build.empty()) return "(shared)";
  return std::string(app) + ":" + std::string(build);
}

Expected<Inventory> readInventory(SymbolStore& store) {
  Inventory inventory;
  UsageTimes times;
  RESTACK_RETURN_IF_ERROR(readUsage(store, times, inventory));
  RESTACK_RETURN_IF_ERROR(readNative(store, inventory, times));
  RESTACK_RETURN_IF_ERROR(readProguard(store, inventory, times));
  RESTACK_RETURN_IF_ERROR(readSourcemap(store, inventory, times));
  std::sort(inventory.sets.begin(), inventory.sets.end(), [](const SymbolSet& a, const SymbolSet& b) {
    return std::tie(a.app, a.build, a.family, a.kind, a.name, a.identifier) <
           std::tie(b.app, b.build, b.family, b.kind, b.name, b.identifier);
  });
  return inventory;
}

std::vector<const SymbolSet*> findSets(const Inventory& inventory, std::string_view target) {
  std::vector<const SymbolSet*> found;
  const std::string as_id = usage::normalizeDebugId(target);
  for (const SymbolSet& set : inventory.sets) {
    if (set.identifier == target || (!as_id.empty() && usage::normalizeDebugId(set.identifier) == as_id) ||
        (!set.name.empty() && set.name == target)) {
      found.push_back(&set);
    }
  }
  if (!found.empty()) return found;
  const size_t colon = target.find(':');
  if (colon == std::string_view::npos) return found;
  const std::string_view app = target.substr(0, colon);
  const std::string_view build = target.substr(colon + 1);
  for (const SymbolSet& set : inventory.sets) {
    if (set.app == app && set.build == build) found.push_back(&set);
  }
  return found;
}

DeletePlan planDelete(const Inventory& inventory, std::string_view app, std::string_view build,
                      const std::vector<std::string>& debug_ids) {
  DeletePlan plan;
  const bool by_build = !app.empty() || !build.empty();
  for (const SymbolSet& set : inventory.sets) {
    const bool named =
        set.family == "native" && std::find(debug_ids.begin(), debug_ids.end(), set.identifier) != debug_ids.end();
    if (named) {
      plan.deleted.push_back(&set);
      continue;
    }
    if (!by_build || !sameBuild(set, app, build)) continue;
    if (!set.also_used_by.empty()) {
      std::string others;
      for (const std::string& other : set.also_used_by) others += (others.empty() ? "" : ", ") + other;
      std::string reason = "also used by " + others;
      if (set.family == "native") reason += "; pass --debug-id " + set.identifier + " to delete it anyway";
      plan.kept.emplace_back(&set, reason);
      continue;
    }
    plan.deleted.push_back(&set);
  }
  for (const SymbolSet* set : plan.deleted) {
    plan.bytes += set->bytes;
    plan.records += set->records;
  }
  if (by_build) {
    for (const ModuleIndex& index : inventory.modules) {
      if (index.app == app && index.build == build) {
        plan.index_changes.push_back("module index " + buildLabel(index.app, index.build) + " " + index.module +
                                     ": deleted");
      }
    }
    for (const Inventory::BuildKey& key : inventory.build_keys) {
      if (key.app == app && key.build == build) {
        plan.index_changes.push_back(key.family + " pointer " + records::printableKey(key.key) + ": deleted");
      }
    }
  }
  for (const ModuleIndex& index : inventory.modules) {
    if (by_build && index.app == app && index.build == build) continue;
    for (const SymbolSet* set : plan.deleted) {
      if (set->family == "native" && std::find(index.ids.begin(), index.ids.end(), set->native_id) != index.ids.end()) {
        plan.index_changes.push_back("module index " + buildLabel(index.app, index.build) + " " + index.module +
                                     ": without " + set->identifier);
      }
    }
  }
  return plan;
}

Status applyDelete(SymbolStore& store, const Inventory& inventory, const DeletePlan& plan, std::string_view app,
                   std::string_view build) {
  rocksdb::WriteBatch batch;
  TouchedRange native_range, proguard_range, sourcemap_range, usage_range;
  rocksdb::ColumnFamilyHandle* native_family = store.family(ns::kNativeFamily);
  rocksdb::ColumnFamilyHandle* proguard_family = store.family(pg::kProguardFamily);
  rocksdb::ColumnFamilyHandle* sourcemap_family = store.family(sm::kSourcemapFamily);
  rocksdb::ColumnFamilyHandle* usage_family = store.family(kUsageFamily);
  auto deleteRange = [&](rocksdb::ColumnFamilyHandle* family, TouchedRange& touched, const std::string& begin,
                         const std::string& end) {
    batch.DeleteRange(family, begin, end);
    touched.add(begin, end);
  };
  auto deleteKey = [&](rocksdb::ColumnFamilyHandle* family, TouchedRange& touched, const std::string& key) {
    batch.Delete(family, key);
    touched.add(key, key);
  };
  const bool by_build = !app.empty() || !build.empty();

  std::set<std::string> deleted_images;
  for (const SymbolSet* set : plan.deleted) {
    if (set->family == "native") {
      deleted_images.insert(set->native_id);
      for (char type : {'F', 'S', 'T'}) {
        deleteRange(native_family, native_range, ns::recordsBegin(type, set->native_id),
                    ns::recordsEnd(type, set->native_id));
      }
      for (const std::string& key : set->keys) deleteKey(native_family, native_range, key);
      for (const std::string& key : {usage::uploadedKey(usage::imageSet(set->identifier)),
                                     usage::lastUsedKey(usage::imageSet(set->identifier))}) {
        deleteKey(usage_family, usage_range, key);
      }
    } else if (set->family == "proguard" && !set->proguard_load.empty()) {
      std::string begin = pg::loadPrefix(set->proguard_load);
      std::string end = begin;
      end.back() = '\x01';  // "L\0<load>\x01": just past every "L\0<load>\0…" key
      deleteRange(proguard_family, proguard_range, begin, end);
      deleteKey(usage_family, usage_range, usage::lastUsedKey(usage::idSet("proguard", set->identifier)));
    } else if (set->family == "sourcemap" && set->kind == "sourcemap") {
      for (const std::string& key : set->keys) deleteKey(sourcemap_family, sourcemap_range, key);
      for (uint64_t id : set->map_ids) {
        for (char type : {'h', 's', 't', 'g', 'f'}) {
          const std::string begin = std::string(1, type) + u64BE(id);
          const std::string end =
              id == UINT64_MAX ? std::string(1, static_cast<char>(type + 1)) : std::string(1, type) + u64BE(id + 1);
          deleteRange(sourcemap_family, sourcemap_range, begin, end);
        }
      }
    }
  }
  // Module indexes: the build's own go; other builds' lose the deleted images, so that their
  // lookups by module name do not point at records that are gone.
  for (const ModuleIndex& index : inventory.modules) {
    if (by_build && index.app == app && index.build == build) {
      deleteKey(native_family, native_range, index.key);
      continue;
    }
    std::vector<std::string> kept;
    for (const std::string& id : index.ids) {
      if (!deleted_images.count(id)) kept.push_back(id);
    }
    if (kept.size() == index.ids.size()) continue;
    if (kept.empty()) {
      deleteKey(native_family, native_range, index.key);
    } else {
      batch.Put(native_family, index.key, ns::encodeIdList(kept));
    }
  }
  if (by_build) {
    for (const Inventory::BuildKey& key : inventory.build_keys) {
      if (key.app != app || key.build != build) continue;
      if (key.family == "proguard") deleteKey(proguard_family, proguard_range, key.key);
      if (key.family == "sourcemap") deleteKey(sourcemap_family, sourcemap_range, key.key);
    }
    for (const char* family : {"native", "proguard", "sourcemap"}) {
      const std::string set = usage::buildSet(family, app, build);
      deleteKey(usage_family, usage_range, usage::uploadedKey(set));
      deleteKey(usage_family, usage_range, usage::lastUsedKey(set));
    }
  }
  RESTACK_RETURN_IF_ERROR(store.write(batch));

  // Deleted records stay on disk until compaction rewrites their files; compact just the ranges
  // touched so that `delete` returns the space without rewriting the whole store.
  auto compact = [&](rocksdb::ColumnFamilyHandle* family, const TouchedRange& touched) -> Status {
    if (!touched.any) return Status::ok();
    rocksdb::CompactRangeOptions options;
    options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    const rocksdb::Slice begin(touched.low);
    const rocksdb::Slice end(touched.high);
    rocksdb::Status status = store.db().CompactRange(options, family, &begin, &end);
    if (!status.ok()) {
      return ioError("symbol store " + store.options().path +
                     ": records deleted, but compacting them failed: " + status.ToString());
    }
    return Status::ok();
  };
  RESTACK_RETURN_IF_ERROR(compact(native_family, native_range));
  RESTACK_RETURN_IF_ERROR(compact(proguard_family, proguard_range));
  RESTACK_RETURN_IF_ERROR(compact(sourcemap_family, sourcemap_range));
  RESTACK_RETURN_IF_ERROR(compact(usage_family, usage_range));
  return Status::ok();
}

}  // namespace restack::inventory
