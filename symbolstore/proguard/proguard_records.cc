#include "symbolstore/proguard/proguard_records.h"

#include <algorithm>
#include <map>
#include <memory>
#include <type_traits>
#include <unordered_map>

#include "symbolstore/record_codec.h"

namespace restack::proguard {
namespace {

using records::RecordReader;
using records::RecordType;
using records::RecordWriter;

constexpr std::string_view kRemedy = "re-ingest the mapping (replay restack.symbols)";
constexpr RecordType kBuildPointerType{"proguard", "build pointer", 1, kProguardRecordVersion, kRemedy};
constexpr RecordType kIdPointerType{"proguard", "map id pointer", 1, kProguardRecordVersion, kRemedy};
constexpr RecordType kMapInfoType{"proguard", "map info", 1, kProguardRecordVersion, kRemedy};
constexpr RecordType kSourceFileType{"proguard", "source file", 1, kProguardRecordVersion, kRemedy};
constexpr RecordType kClassType{"proguard", "class", 1, kMergedClassRecordVersion, kRemedy};

std::string keyOf(std::initializer_list<std::string_view> parts) {
  std::string key;
  bool first = true;
  for (std::string_view part : parts) {
    if (!first) key.push_back('\0');
    key.append(part);
    first = false;
  }
  return key;
}

enum RangeFlags : uint8_t {
  kHasMinified = 1,
  kHasOriginal = 2,
  kSynthesized = 4,
  kOutline = 8,
  kHasCallsite = 16,
  kHasRules = 32,
};

bool sameSignature(const RangeRecord& a, const RangeRecord& b) {
  return a.return_type == b.return_type && a.holder == b.holder && a.name == b.name && a.params == b.params;
}

// Default-constructs `count` objects of T at `at` (inside a ClassRecord arena). Arena objects are
// never destroyed one by one, so they must not need it.
template <typename T>
T* placeArray(std::byte* at, size_t count) {
  static_assert(std::is_trivially_destructible_v<T>);
  T* first = reinterpret_cast<T*>(at);
  std::uninitialized_value_construct_n(first, count);
  return first;
}

// One entry of a ClassRecord's method table: the high 32 bits of the name hash (so that a probe
// rejects other names without reading their MethodRecord) and the method's index + 1 (0 = empty).
uint64_t methodSlot(uint64_t name_hash, size_t index) {
  return (name_hash & ~uint64_t{0xffffffff}) | (static_cast<uint64_t>(index) + 1);
}

// Offsets of one method's derived arrays inside the ClassRecord's flat vectors, turned into
// spans once every vector has its final size.
struct MethodLayout {
  size_t first_range = 0, range_count = 0;
  size_t first_chain = 0, chain_count = 0;
  size_t first_overload = 0, overload_count = 0;
};

// Cuts one method's ranges into inline chains and groups the chains into overloads, appending
// to the flat vectors. `overload_bounds` receives (first member, member count) per overload.
void indexMethod(const std::vector<RangeRecord>& all_ranges, MethodLayout& layout,
                 std::vector<MethodRecord::Chain>& chains, std::vector<uint32_t>& members,
                 std::vector<std::pair<size_t, size_t>>& overload_bounds) {
  const RangeRecord* ranges = all_ranges.data() + layout.first_range;
  layout.first_chain = chains.size();
  for (uint32_t i = 0; i < layout.range_count; ++i) {
    // A caller in an inline chain always names its original line (":14"); a range without one
    // maps its lines to themselves and is a method of its own, even right after another range
    // with the same lines (ProGuard writes a class's bridge methods, all at the class's line, so:
    // "32:32:Object deserialize(JsonParser,DeserializationContext,Object) -> deserialize" then
    // "32:32:Object deserialize(JsonParser,DeserializationContext) -> deserialize").
    bool continues = chains.size() > layout.first_chain && ranges[i].minified && ranges[i - 1].minified &&
                     *ranges[i].minified == *ranges[i - 1].minified && ranges[i].original;
    if (continues) {
      ++chains.back().count;
    } else {
      chains.push_back({i, 1});
    }
  }
  layout.chain_count = chains.size() - layout.first_chain;
  // Overloads: chains keyed by their outermost signature, in order of first appearance. Methods
  // have few chains, so a quadratic grouping is cheaper than a map.
  const MethodRecord::Chain* method_chains = chains.data() + layout.first_chain;
  auto outermost = [&](uint32_t c) -> const RangeRecord& {
    return ranges[method_chains[c].first + method_chains[c].count - 1];
  };
  layout.first_overload = overload_bounds.size();
  std::vector<uint32_t> owner(layout.chain_count, UINT32_MAX);  // chain -> overload number
  uint32_t overload_count = 0;
  for (uint32_t c = 0; c < layout.chain_count; ++c) {
    for (uint32_t earlier = 0; earlier < c; ++earlier) {
      if (sameSignature(outermost(earlier), outermost(c))) {
        owner[c] = owner[earlier];
        break;
      }
    }
    if (owner[c] == UINT32_MAX) owner[c] = overload_count++;
  }
  for (uint32_t o = 0; o < overload_count; ++o) {
    size_t first = members.size();
    for (uint32_t c = 0; c < layout.chain_count; ++c) {
      if (owner[c] == o) members.push_back(c);
    }
    overload_bounds.emplace_back(first, members.size() - first);
  }
  layout.overload_count = overload_count;
}

}  // namespace

std::string buildPointerKey(std::string_view app, std::string_view build_id) {
  return keyOf({"B", app, build_id});
}
std::string idPointerKey(std::string_view map_id) {
  return keyOf({"I", map_id});
}
std::string loadPrefix(std::string_view load_id) {
  return keyOf({"L", load_id, ""});
}
std::string mapInfoKey(std::string_view load_id) {
  return keyOf({"L", load_id, "M"});
}
std::string classKey(std::string_view load_id, std::string_view obfuscated_class) {
  return keyOf({"L", load_id, "C", obfuscated_class});
}
std::string sourceFileKey(std::string_view load_id, std::string_view original_class) {
  return keyOf({"L", load_id, "S", original_class});
}

std::string encodeBuildPointer(const BuildPointer& pointer) {
  RecordWriter out(kProguardRecordVersion);
  out.bytes(pointer.load_id);
  out.bytes(pointer.pg_map_id);
  out.bytes(pointer.pg_map_hash);
  return out.take();
}

Expected<BuildPointer> decodeBuildPointer(std::string_view bytes, std::string_view key) {
  RecordReader in(kBuildPointerType, bytes, key);
  in.version();
  BuildPointer pointer;
  pointer.load_id = std::string(in.bytes());
  pointer.pg_map_id = std::string(in.bytes());
  pointer.pg_map_hash = std::string(in.bytes());
  RESTACK_RETURN_IF_ERROR(in.finish());
  return pointer;
}

std::string encodeIdPointer(const IdPointer& pointer) {
  RecordWriter out(kProguardRecordVersion);
  out.bytes(pointer.load_id);
  out.bytes(pointer.app);
  out.bytes(pointer.build_id);
  return out.take();
}

Expected<IdPointer> decodeIdPointer(std::string_view bytes, std::string_view key) {
  RecordReader in(kIdPointerType, bytes, key);
  in.version();
  IdPointer pointer;
  pointer.load_id = std::string(in.bytes());
  pointer.app = std::string(in.bytes());
  pointer.build_id = std::string(in.bytes());
  RESTACK_RETURN_IF_ERROR(in.finish());
  return pointer;
}

std::string encodeMapInfo(const MapInfo& info) {
  RecordWriter out(kProguardRecordVersion);
  for (const std::string* text :
       {&info.app, &info.build_id, &info.pg_map_id, &info.pg_map_hash, &info.map_version, &info.compiler}) {
    out.bytes(*text);
  }
  out.varint(info.classes);
  return out.take();
}

Expected<MapInfo> decodeMapInfo(std::string_view bytes, std::string_view key) {
  RecordReader in(kMapInfoType, bytes, key);
  in.version();
  MapInfo info;
  for (std::string* text :
       {&info.app, &info.build_id, &info.pg_map_id, &info.pg_map_hash, &info.map_version, &info.compiler}) {
    *text = std::string(in.bytes());
  }
  info.classes = in.varint();
  RESTACK_RETURN_IF_ERROR(in.finish());
  return info;
}

std::string encodeSourceFile(std::string_view file) {
  RecordWriter out(kProguardRecordVersion);
  out.bytes(file);
  return out.take();
}

Expected<std::string> decodeSourceFile(std::string_view bytes, std::string_view key) {
  RecordReader in(kSourceFileType, bytes, key);
  in.version();
  std::string file(in.bytes());
  RESTACK_RETURN_IF_ERROR(in.finish());
  return file;
}

std::string encodeClassRecord(const ClassMapping& mapping) {
  // String table: each distinct type / holder / name / parameter list once. Index 0 is "".
  std::vector<std::string_view> strings{""};
  std::unordered_map<std::string_view, uint32_t> index{{"", 0}};
  auto intern = [&](std::string_view text) {
    auto [it, added] = index.emplace(text, static_cast<uint32_t>(strings.size()));
    if (added) strings.push_back(text);
    return it->second;
  };
  // Methods grouped by obfuscated name (sorted), file order kept within a name.
  std::map<std::string_view, std::vector<const MethodMapping*>> by_name;
  for (const MethodMapping& method : mapping.methods) {
    intern(method.signature.return_type);
    intern(method.signature.holder);
    intern(method.signature.name);
    intern(method.signature.params);
    by_name[method.obfuscated_name].push_back(&method);
  }
  for (const FieldMapping& field : mapping.fields) {
    intern(field.type);
    intern(field.name);
  }
  const bool merged = !mapping.merged_names.empty();
  RecordWriter out(merged ? kMergedClassRecordVersion : kClassRecordVersion);
  out.bytes(mapping.original_name);
  out.bytes(mapping.source_file);
  out.u8(mapping.synthesized ? 1 : 0);
  out.varint(strings.size());
  for (std::string_view text : strings) out.bytes(text);
  out.varint(by_name.size());
  for (const auto& [name, methods] : by_name) {
    out.bytes(name);
    out.varint(methods.size());
    for (const MethodMapping* method : methods) {
      uint8_t flags = 0;
      if (method->minified) flags |= kHasMinified;
      if (method->original) flags |= kHasOriginal;
      if (method->synthesized) flags |= kSynthesized;
      if (method->outline) flags |= kOutline;
      if (method->outline_callsite) flags |= kHasCallsite;
      if (!method->rewrite_rules.empty()) flags |= kHasRules;
      out.u8(flags);
      if (method->minified) {
        out.varint(method->minified->from);
        out.varint(method->minified->to);
      }
      if (method->original) {
        out.varint(method->original->from);
        out.varint(method->original->to);
      }
      out.varint(index.at(method->signature.return_type));
      out.varint(index.at(method->signature.holder));
      out.varint(index.at(method->signature.name));
      out.varint(index.at(method->signature.params));
      if (method->outline_callsite) {
        out.varint(method->outline_callsite->positions.size());
        for (auto [from, to] : method->outline_callsite->positions) {
          out.varint(from);
          out.varint(to);
        }
        out.bytes(method->outline_callsite->outline);
      }
      if (!method->rewrite_rules.empty()) {
        out.varint(method->rewrite_rules.size());
        for (const RewriteRule& rule : method->rewrite_rules) {
          out.varint(rule.throws_descriptors.size());
          for (const std::string& descriptor : rule.throws_descriptors) out.bytes(descriptor);
          out.varint(rule.remove_inner_frames);
        }
      }
    }
  }
  out.varint(mapping.fields.size());
  for (const FieldMapping& field : mapping.fields) {
    out.bytes(field.obfuscated_name);
    out.varint(index.at(field.type));
    out.varint(index.at(field.name));
    out.u8(field.synthesized ? 1 : 0);
  }
  if (merged) {
    out.varint(mapping.merged_names.size());
    for (const std::string& name : mapping.merged_names) out.bytes(name);
  }
  return out.take();
}

Expected<ClassRecord> decodeClassRecord(std::string_view encoded, std::string_view key) {
  // Parse into scratch vectors whose views point into `encoded`; then lay everything out in the
  // record's arena and rebase the views onto the arena's copy of the bytes.
  ClassRecord record;
  RecordReader in(kClassType, encoded, key);
  const uint8_t version = in.version();
  record.original_name = in.bytes();
  record.source_file = in.bytes();
  record.synthesized = (in.u8() & 1) != 0;
  size_t string_count = in.count();
  std::vector<std::string_view> strings;
  strings.reserve(string_count);
  for (size_t i = 0; i < string_count && in.ok(); ++i) strings.push_back(in.bytes());
  if (!in.ok()) return in.error();
  if (strings.empty()) return in.refuse("empty string table");
  auto readIndex = [&]() {
    uint32_t value = in.varint32();
    if (value < strings.size()) return value;
    in.fail("string index out of range");
    return uint32_t{0};
  };
  // Where each range's callsite / rules go in the side vectors, resolved to pointers at the end.
  struct RangeExtras {
    size_t callsite = SIZE_MAX;
    size_t first_rule = 0, rule_count = 0;
  };
  std::vector<RangeExtras> extras;
  std::vector<RangeRecord> ranges;
  std::vector<MethodLayout> layouts;
  size_t method_count = in.count(2);
  std::vector<MethodRecord> methods(method_count);
  layouts.resize(method_count);
  for (size_t m = 0; m < method_count && in.ok(); ++m) {
    MethodRecord& method = methods[m];
    method.obfuscated_name = in.bytes();
    method.name_hash = hashName(method.obfuscated_name);
    size_t range_count = in.count(5);
    layouts[m].first_range = ranges.size();
    layouts[m].range_count = range_count;
    for (size_t r = 0; r < range_count && in.ok(); ++r) {
      RangeRecord& range = ranges.emplace_back();
      RangeExtras& extra = extras.emplace_back();
      uint8_t flags = in.u8();
      if (flags & kHasMinified) {
        uint32_t from = in.varint32(), to = in.varint32();
        range.minified = LineRange{from, std::max(from, to)};
      }
      if (flags & kHasOriginal) {
        uint32_t from = in.varint32(), to = in.varint32();
        range.original = LineRange{from, std::max(from, to)};
      }
      range.return_type = readIndex();
      range.holder = readIndex();
      range.name = readIndex();
      range.params = readIndex();
      range.synthesized = (flags & kSynthesized) != 0;
      range.outline = (flags & kOutline) != 0;
      if (flags & kHasCallsite) {
        OutlineCallsite& callsite = record.callsites_.emplace_back();
        extra.callsite = record.callsites_.size() - 1;
        size_t n = in.count(2);
        callsite.positions.reserve(n);
        for (size_t i = 0; i < n && in.ok(); ++i) {
          uint32_t from = in.varint32(), to = in.varint32();
          callsite.positions.emplace_back(from, to);
        }
        callsite.outline = std::string(in.bytes());
      }
      if (flags & kHasRules) {
        size_t rule_count = in.count(2);
        extra.first_rule = record.rules_.size();
        extra.rule_count = rule_count;
        for (size_t k = 0; k < rule_count && in.ok(); ++k) {
          RewriteRule& rule = record.rules_.emplace_back();
          size_t n = in.count();
          for (size_t i = 0; i < n && in.ok(); ++i) rule.throws_descriptors.emplace_back(in.bytes());
          rule.remove_inner_frames = in.varint32();
        }
      }
    }
  }
  std::vector<FieldRecord> fields;
  if (version >= 2 && in.ok()) {
    size_t field_count = in.count(4);
    fields.resize(field_count);
    for (FieldRecord& field : fields) {
      if (!in.ok()) break;
      field.obfuscated_name = in.bytes();
      field.type = readIndex();
      field.name = readIndex();
      field.synthesized = (in.u8() & 1) != 0;
    }
  }
  std::vector<std::string_view> merged;
  if (version >= 3 && in.ok()) {
    size_t merged_count = in.count();
    for (size_t i = 0; i < merged_count && in.ok(); ++i) merged.push_back(in.bytes());
  }
  RESTACK_RETURN_IF_ERROR(in.finish());

  std::vector<MethodRecord::Chain> chains;
  std::vector<uint32_t> members;
  std::vector<std::pair<size_t, size_t>> overload_bounds;
  for (MethodLayout& layout : layouts) indexMethod(ranges, layout, chains, members, overload_bounds);
  for (size_t r = 0; r < ranges.size(); ++r) {
    if (extras[r].callsite != SIZE_MAX) ranges[r].callsite = &record.callsites_[extras[r].callsite];
    ranges[r].rules = std::span<const RewriteRule>(record.rules_.data() + extras[r].first_rule, extras[r].rule_count);
  }
  // Method table: power-of-two slots, at most half full, linear probing on the name hash.
  size_t slot_count = 4;
  while (slot_count < method_count * 2) slot_count <<= 1;

  // Arena layout (every part 8-byte aligned): the method table and the methods first, then one
  // block per method holding everything a lookup of that method reads next (its ranges, chains,
  // overloads and a copy of its name), so that retracing a frame touches a few adjacent cache
  // lines; then fields, string views and the encoded bytes the views point into.
  size_t size = 0;
  auto reserve = [&size](size_t bytes) {
    size_t at = size;
    size = (size + bytes + 7) & ~size_t{7};
    return at;
  };
  const size_t at_slots = reserve(slot_count * sizeof(uint64_t));
  const size_t at_methods = reserve(methods.size() * sizeof(MethodRecord));
  struct MethodBlock {
    size_t ranges, chains, overloads, members, member_count, name;
  };
  std::vector<MethodBlock> blocks(method_count);
  for (size_t m = 0; m < method_count; ++m) {
    const MethodLayout& layout = layouts[m];
    size_t member_count = 0;
    for (size_t o = 0; o < layout.overload_count; ++o)
      member_count += overload_bounds[layout.first_overload + o].second;
    blocks[m].ranges = reserve(layout.range_count * sizeof(RangeRecord));
    blocks[m].chains = reserve(layout.chain_count * sizeof(MethodRecord::Chain));
    blocks[m].overloads = reserve(layout.overload_count * sizeof(std::span<const uint32_t>));
    blocks[m].members = reserve(member_count * sizeof(uint32_t));
    blocks[m].member_count = member_count;
    blocks[m].name = reserve(methods[m].obfuscated_name.size());
  }
  const size_t at_fields = reserve(fields.size() * sizeof(FieldRecord));
  const size_t at_strings = reserve(strings.size() * sizeof(std::string_view));
  const size_t at_bytes = reserve(encoded.size());
  record.arena_ = std::make_unique<std::byte[]>(size);  // zeroed: empty method slots are 0
  record.arena_bytes_ = size;
  std::byte* arena = record.arena_.get();
  const char* bytes = reinterpret_cast<const char*>(arena + at_bytes);
  std::copy(encoded.begin(), encoded.end(), reinterpret_cast<char*>(arena + at_bytes));
  auto rebase = [&](std::string_view view) {
    if (view.empty()) return std::string_view();
    return std::string_view(bytes + (view.data() - encoded.data()), view.size());
  };
  record.original_name = rebase(record.original_name);
  record.source_file = rebase(record.source_file);
  for (std::string_view name : merged) record.merged_.push_back(rebase(name));
  record.merged_names = std::span<const std::string_view>(record.merged_);
  auto* arena_strings = placeArray<std::string_view>(arena + at_strings, strings.size());
  for (size_t i = 0; i < strings.size(); ++i) arena_strings[i] = rebase(strings[i]);
  record.strings = std::span<const std::string_view>(arena_strings, strings.size());
  auto* arena_methods = placeArray<MethodRecord>(arena + at_methods, methods.size());
  for (size_t m = 0; m < methods.size(); ++m) {
    MethodRecord method = methods[m];
    const MethodLayout& layout = layouts[m];
    const MethodBlock& block = blocks[m];
    auto* method_ranges = placeArray<RangeRecord>(arena + block.ranges, layout.range_count);
    std::copy_n(ranges.begin() + static_cast<std::ptrdiff_t>(layout.first_range), layout.range_count, method_ranges);
    auto* method_chains = placeArray<MethodRecord::Chain>(arena + block.chains, layout.chain_count);
    std::copy_n(chains.begin() + static_cast<std::ptrdiff_t>(layout.first_chain), layout.chain_count, method_chains);
    auto* method_overloads = placeArray<std::span<const uint32_t>>(arena + block.overloads, layout.overload_count);
    auto* method_members = placeArray<uint32_t>(arena + block.members, block.member_count);
    for (size_t o = 0; o < layout.overload_count; ++o) {
      auto [first, count] = overload_bounds[layout.first_overload + o];
      std::copy_n(members.begin() + static_cast<std::ptrdiff_t>(first), count, method_members);
      method_overloads[o] = std::span<const uint32_t>(method_members, count);
      method_members += count;
    }
    char* name = reinterpret_cast<char*>(arena + block.name);
    std::copy(method.obfuscated_name.begin(), method.obfuscated_name.end(), name);
    method.obfuscated_name = std::string_view(name, method.obfuscated_name.size());
    method.ranges = std::span<const RangeRecord>(method_ranges, layout.range_count);
    method.chains = std::span<const MethodRecord::Chain>(method_chains, layout.chain_count);
    method.overloads = std::span<const std::span<const uint32_t>>(method_overloads, layout.overload_count);
    arena_methods[m] = method;
  }
  record.methods = std::span<const MethodRecord>(arena_methods, methods.size());
  auto* arena_fields = placeArray<FieldRecord>(arena + at_fields, fields.size());
  for (size_t f = 0; f < fields.size(); ++f) {
    arena_fields[f] = fields[f];
    arena_fields[f].obfuscated_name = rebase(fields[f].obfuscated_name);
  }
  record.fields = std::span<const FieldRecord>(arena_fields, fields.size());
  auto* slots = reinterpret_cast<uint64_t*>(arena + at_slots);
  for (size_t m = 0; m < method_count; ++m) {
    const uint64_t hash = arena_methods[m].name_hash;
    size_t slot = hash & (slot_count - 1);
    while (slots[slot] != 0) slot = (slot + 1) & (slot_count - 1);
    slots[slot] = methodSlot(hash, m);
  }
  record.method_slots_ = std::span<const uint64_t>(slots, slot_count);
  return record;
}

const MethodRecord* ClassRecord::findMethod(std::string_view obfuscated) const {
  return findMethod(obfuscated, hashName(obfuscated));
}

const MethodRecord* ClassRecord::findMethod(std::string_view obfuscated, uint64_t hash) const {
  const size_t index = methodIndex(obfuscated, hash, /*check_name=*/true);
  return index == kNoMethod ? nullptr : &methods[index];
}

size_t ClassRecord::methodIndex(std::string_view obfuscated, uint64_t hash, bool check_name) const {
  if (method_slots_.empty()) return kNoMethod;
  const size_t mask = method_slots_.size() - 1;
  const uint64_t tag = methodSlot(hash, 0) & ~uint64_t{0xffffffff};
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    const uint64_t entry = method_slots_[slot];
    if (entry == 0) return kNoMethod;
    if ((entry & ~uint64_t{0xffffffff}) != tag) continue;
    const size_t index = (entry & 0xffffffff) - 1;
    if (!check_name || methods[index].obfuscated_name == obfuscated) return index;
  }
}

void ClassRecord::prefetchMethod(std::string_view obfuscated, uint64_t hash, PrefetchStep step) const {
  if (method_slots_.empty()) return;
  if (step == PrefetchStep::kSlot) {
    __builtin_prefetch(&method_slots_[hash & (method_slots_.size() - 1)]);
    return;
  }
  // The hash tag without the name check: a wrong guess costs one useless prefetch.
  const size_t index = methodIndex(obfuscated, hash, /*check_name=*/false);
  if (index == kNoMethod) return;
  const MethodRecord& method = methods[index];
  constexpr size_t kMaxRanges = 4;  // methods with many ranges: their first ones
  switch (step) {
    case PrefetchStep::kSlot:
      break;
    case PrefetchStep::kMethod: {
      const char* entry = reinterpret_cast<const char*>(&method);
      __builtin_prefetch(entry);
      __builtin_prefetch(entry + sizeof(MethodRecord) - 1);
      break;
    }
    case PrefetchStep::kBlock: {
      // The method's block: ranges first, then chains, overloads, members and the name (decode).
      const char* block = reinterpret_cast<const char*>(method.ranges.data());
      const char* block_end = method.obfuscated_name.data() + method.obfuscated_name.size();
      constexpr ptrdiff_t kMaxBlockBytes = 6 * 64;
      for (const char* line = block; line < block_end && line - block < kMaxBlockBytes; line += 64) {
        __builtin_prefetch(line);
      }
      __builtin_prefetch(block_end - 1);
      break;
    }
    case PrefetchStep::kStrings:
      for (size_t r = 0; r < method.ranges.size() && r < kMaxRanges; ++r) {
        __builtin_prefetch(&strings[method.ranges[r].holder]);
        __builtin_prefetch(&strings[method.ranges[r].name]);
      }
      break;
    case PrefetchStep::kText:
      __builtin_prefetch(original_name.data());
      __builtin_prefetch(source_file.data());
      for (size_t r = 0; r < method.ranges.size() && r < kMaxRanges; ++r) {
        __builtin_prefetch(strings[method.ranges[r].holder].data());
        __builtin_prefetch(strings[method.ranges[r].name].data());
      }
      break;
  }
}

size_t ClassRecord::memoryBytes() const {
  size_t bytes = sizeof(ClassRecord) + arena_bytes_;
  for (const OutlineCallsite& callsite : callsites_) {
    bytes += sizeof(OutlineCallsite) + callsite.positions.capacity() * 8 + callsite.outline.capacity();
  }
  for (const RewriteRule& rule : rules_) bytes += sizeof(RewriteRule) + rule.throws_descriptors.size() * 48;
  bytes += merged_.capacity() * sizeof(std::string_view);
  return bytes;
}

uint64_t hashName(std::string_view name, uint64_t seed) {
  // FNV-1a over the bytes, then a final avalanche (names are short; this beats a block hash).
  uint64_t hash = 0xcbf29ce484222325ull ^ (seed * 0x9E3779B97F4A7C15ull);
  for (char c : name) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ull;
  }
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdull;
  hash ^= hash >> 33;
  return hash;
}

std::atomic<uint64_t>& proguardStoreEpoch() {
  static std::atomic<uint64_t> epoch{0};
  return epoch;
}

}  // namespace restack::proguard
