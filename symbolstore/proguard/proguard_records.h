// RocksDB layout of the `proguard` column family: one record per obfuscated class (R8's own
// partitioning), so that retracing a trace reads only the classes that appear in it.
//
// Keys ('\0' separates parts; <load> is the 16-hex-digit id of one ingested mapping file):
//
//   B\0<app>\0<build_id>        BuildPointer  which mapping serves this app build
//   I\0<map id>                 IdPointer     R8 pg_map_id, or the hex of pg_map_hash -> mapping
//   L\0<load>\0M                MapInfo       header facts of one mapping (app, build, ids, …)
//   L\0<load>\0C\0<obf class>   ClassRecord   everything needed to retrace frames of that class
//   L\0<load>\0S\0<orig class>  source file   only for classes with a `sourceFile` entry: frames
//                                             inlined from them into other classes need it
//
// Re-uploading a build writes a new <load> and switches the BuildPointer last, in one batch, so
// readers see either the old or the new mapping, never a mix; the old load is then deleted.
//
// Every value starts with a format version byte: kClassRecordVersion for class records,
// kProguardRecordVersion for the others.
//
// Version history (written with symbolstore/record_codec.h, whose reader refuses any other
// version as malformed_input, naming the record and its key):
//   record                   version  date        what changed
//   build / map id pointer,  1        2026-11-21  first format
//   map info, source file
//   class                    1        2026-11-21  first format (still read)
//   class                    2        2026-11-21  field section (still written for every class
//                                                 without merged names)
//   class                    3        2026-11-23  merged-class section, written only for classes
//                                                 that have merged names Integers are LEB128 varints, strings are
//                                                 varint length +
// bytes.
//
// ClassRecord v2 (v1 is the same without the field section; v3 adds the merged-class section
// and is written only for classes that have one; all three are read):
//   u8 version=2 | str original_name | str source_file | u8 class_flags (1 = synthesized)
//   varint string_count | str × string_count           (types, names, holders: each once)
//   varint method_count | method × method_count        (sorted by obfuscated name)
//   method: str obfuscated_name | varint range_count | range × range_count (file order)
//   range:  u8 flags (1 minified, 2 original, 4 synthesized, 8 outline, 16 callsite, 32 rules)
//           [varint min_from, varint min_to] [varint orig_from, varint orig_to]
//           varint return_type, varint holder, varint name, varint params   (string indices)
//           [varint n, (varint outline_pos, varint callsite_pos) × n, str outline]
//           [varint rule_count, (varint n, str descriptor × n, varint remove_inner) × rule_count]
//   varint field_count | field × field_count           (v2; file order)
//   field:  str obfuscated_name | varint type | varint name | u8 flags (1 = synthesized)
//   varint merged_count | str × merged_count            (v3: other original classes under this
//                                                        obfuscated name, mapping order)
//
// Worked example: the block
//   com.example.Foo -> a.b:
//       1:1:void com.example.Util.log():7:7 -> c
//       1:1:void bar(int):14 -> c
// is stored under "L\0<load>\0C\0a.b" as (hex bytes, "…" = the string's bytes)
//   02 | 0F "com.example.Foo" | 00 "" | 00                          version, name, file, flags
//   06 | 00 "" | 04 "void" | 10 "com.example.Util" | 03 "log" | 03 "bar" | 03 "int"   strings
//   01 | 01 "c" | 02                                                 one method "c", two ranges
//      | 03 01 01 07 07 01 02 03 00      1:1 -> 7:7, void com.example.Util.log()
//      | 03 01 01 0E 0E 01 00 04 05      1:1 -> 14:14, void bar(int) (holder "" = own class)
//   00                                                               no fields
//
// A decoded ClassRecord keeps one copy of the encoded bytes and hands out views into it: names
// are never copied into separate strings, ranges/chains/overloads of all methods live in flat
// arrays, and method names are found through an open-addressing table of their hashes, built
// at decode. A ClassRecord is therefore move-only (its views point into its own storage).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/proguard/mapping_model.h"
#include "symbolstore/store.h"

namespace restack::proguard {

// The column family these records live in, owned by this layer (symbolstore/store.h).
inline const StoreFamily kProguardFamily{"proguard"};

// Version byte of build pointers, map-id pointers, map infos and source-file records.
inline constexpr uint8_t kProguardRecordVersion = 1;
// Version byte written in class records; versions 1 to 3 are read. Version 3 (the merged-class
// section) is written only for a class that has merged names, so other records stay as before.
inline constexpr uint8_t kClassRecordVersion = 2;
inline constexpr uint8_t kMergedClassRecordVersion = 3;

// A fast 64-bit hash of a name (class, method), used for cache keys and method tables.
uint64_t hashName(std::string_view name, uint64_t seed = 0);

// ---- keys ------------------------------------------------------------------------------------
std::string buildPointerKey(std::string_view app, std::string_view build_id);
std::string idPointerKey(std::string_view map_id);
std::string loadPrefix(std::string_view load_id);  // "L\0<load>\0"
std::string mapInfoKey(std::string_view load_id);
std::string classKey(std::string_view load_id, std::string_view obfuscated_class);
std::string sourceFileKey(std::string_view load_id, std::string_view original_class);

// ---- small records ---------------------------------------------------------------------------
struct BuildPointer {
  std::string load_id;
  std::string pg_map_id;
  std::string pg_map_hash;
};
std::string encodeBuildPointer(const BuildPointer& pointer);
Expected<BuildPointer> decodeBuildPointer(std::string_view bytes, std::string_view key = {});

struct IdPointer {
  std::string load_id;
  std::string app;
  std::string build_id;
};
std::string encodeIdPointer(const IdPointer& pointer);
Expected<IdPointer> decodeIdPointer(std::string_view bytes, std::string_view key = {});

struct MapInfo {
  std::string app;
  std::string build_id;
  std::string pg_map_id;
  std::string pg_map_hash;
  std::string map_version;
  std::string compiler;
  uint64_t classes = 0;
};
std::string encodeMapInfo(const MapInfo& info);
Expected<MapInfo> decodeMapInfo(std::string_view bytes, std::string_view key = {});

std::string encodeSourceFile(std::string_view file);
Expected<std::string> decodeSourceFile(std::string_view bytes, std::string_view key = {});

// ---- class records ---------------------------------------------------------------------------
struct RangeRecord {
  std::optional<LineRange> minified;
  std::optional<LineRange> original;
  uint32_t return_type = 0;  // indices into ClassRecord::strings
  uint32_t holder = 0;       // strings[holder] empty = the class itself
  uint32_t name = 0;
  uint32_t params = 0;
  bool synthesized = false;
  bool outline = false;
  const OutlineCallsite* callsite = nullptr;  // into the ClassRecord; null = none
  std::span<const RewriteRule> rules;         // into the ClassRecord
};

struct MethodRecord {
  std::string_view obfuscated_name;
  uint64_t name_hash = 0;               // hashName(obfuscated_name)
  std::span<const RangeRecord> ranges;  // file order: inline chains contiguous, innermost first

  // Derived when decoding, so that a lookup allocates nothing for them: the inline chains
  // (consecutive ranges with the same minified range, each caller with an original line; a range
  // without a minified range stands alone) and the overloads they form (chains grouped by the outermost frame's
  // signature, in file order).
  struct Chain {
    uint32_t first = 0;
    uint32_t count = 0;
  };
  std::span<const Chain> chains;
  std::span<const std::span<const uint32_t>> overloads;  // each: indices into `chains`
  const RangeRecord& outermost(const Chain& chain) const { return ranges[chain.first + chain.count - 1]; }
};

struct FieldRecord {
  std::string_view obfuscated_name;
  uint32_t type = 0;  // indices into ClassRecord::strings
  uint32_t name = 0;
  bool synthesized = false;
};

class ClassRecord {
 public:
  ClassRecord() = default;
  ClassRecord(ClassRecord&&) = default;
  ClassRecord& operator=(ClassRecord&&) = default;
  ClassRecord(const ClassRecord&) = delete;
  ClassRecord& operator=(const ClassRecord&) = delete;

  std::string_view original_name;
  std::string_view source_file;
  bool synthesized = false;  // the class itself was synthesized by the compiler
  std::span<const std::string_view> strings;
  std::span<const MethodRecord> methods;  // sorted by obfuscated_name
  std::span<const FieldRecord> fields;    // file order (empty for v1 records)
  // The other original classes obfuscated to the same name (ClassMapping::merged_names); empty
  // for almost every class.
  std::span<const std::string_view> merged_names;

  const MethodRecord* findMethod(std::string_view obfuscated) const;
  // The same with hashName(obfuscated) computed by the caller.
  const MethodRecord* findMethod(std::string_view obfuscated, uint64_t name_hash) const;

  // Software prefetch for callers that retrace many frames at once (ProguardResolver::retrace):
  // each step brings the next level of a method's data into the CPU cache and reads only what
  // the step before brought. Running one step over every frame of a run before the next step
  // overlaps the memory reads of all frames instead of waiting for them one after another.
  // Prefetching never changes a result; a step whose input is not cached yet only costs time.
  enum class PrefetchStep {
    kSlot,     // the method table slot
    kMethod,   // the MethodRecord
    kBlock,    // its ranges, chains, overloads and name
    kStrings,  // the string views of its ranges' holders and names
    kText,     // the bytes of those strings, of the class name and of its source file
  };
  static constexpr PrefetchStep kPrefetchSteps[] = {PrefetchStep::kSlot, PrefetchStep::kMethod, PrefetchStep::kBlock,
                                                    PrefetchStep::kStrings, PrefetchStep::kText};
  void prefetchMethod(std::string_view obfuscated, uint64_t name_hash, PrefetchStep step) const;
  // The holder class of a range: its qualifier, or this class.
  std::string_view holderOf(const RangeRecord& range) const {
    return strings[range.holder].empty() ? original_name : strings[range.holder];
  }
  // Approximate heap footprint, for cache accounting.
  size_t memoryBytes() const;

 private:
  friend Expected<ClassRecord> decodeClassRecord(std::string_view bytes, std::string_view key);
  // One allocation holds, in the order a lookup touches them: the method table, the methods,
  // one block per method (its ranges, chains, overloads and name, adjacent), the fields, the
  // string views, and last the encoded bytes every view points into. Retracing a frame then stays within a page or two
  // instead of chasing a dozen separate heap blocks (the working set of a big mapping is far larger than the CPU
  // caches, so each separate block is a cache and TLB miss).
  std::unique_ptr<std::byte[]> arena_;
  size_t arena_bytes_ = 0;
  // The method index (kNoMethod: none) through the table; `check_name` false trusts the hash tag.
  static constexpr size_t kNoMethod = SIZE_MAX;
  size_t methodIndex(std::string_view obfuscated, uint64_t name_hash, bool check_name) const;

  // Open addressing by name_hash; each entry: high 32 bits of the hash | method index + 1, 0 = empty.
  std::span<const uint64_t> method_slots_;
  std::vector<OutlineCallsite> callsites_;  // rare: kept apart
  std::vector<RewriteRule> rules_;
  std::vector<std::string_view> merged_;  // rare: kept apart, views into the arena's bytes
};

std::string encodeClassRecord(const ClassMapping& mapping);
// Every decoder: `key`, when given, is named in its errors (symbolstore/record_codec.h).
Expected<ClassRecord> decodeClassRecord(std::string_view bytes, std::string_view key = {});

// ---- change notification ---------------------------------------------------------------------
// Incremented by every completed ProGuard ingest in this process; resolvers drop their cached
// build -> mapping pointers when it moves (class records themselves are immutable per load).
std::atomic<uint64_t>& proguardStoreEpoch();

}  // namespace restack::proguard
