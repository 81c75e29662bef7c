// Records of the `sourcemap` column family: what one uploaded source map becomes at ingest, and
// what a lookup reads back (one small record per question, never the whole map).
//
// Keys (integers big endian, so RocksDB orders chunks by generated position):
//   'p' app 0x00 build 0x00 name    -> MapPointer: which map serves minified file `name`
//                                     (build "" = the Web H5 key app + content-hashed file name;
//                                     app "" = a shared upload)
//                                     name kRamBundlePointerName (0x01 "ram-bundle"): the
//                                     latest Metro RAM-bundle map of that app/build, which serves
//                                     the "seg-N.js" / "N.js" module names (url.h)
//   'h' map_id:u64                  -> MapHeader: file, debug id, sections, Hermes offsets, segments
//   's' map_id source:u32           -> SourceRecord: path (sourceRoot applied), ignore-listed,
//                                     function map (Metro's, or inferred from sourcesContent)
//   't' map_id source:u32 chunk:u32 -> SourceText: lines [chunk * 32, chunk * 32 + 32) of
//                                     sourcesContent (RocksDB's LZ4/ZSTD block compression
//                                     keeps them compressed on disk)
//   'g' map_id line:u32 column:u32  -> MappingChunk: up to 256 consecutive mapping segments
//                                     starting at that 0-based generated position
//   'f' map_id                      -> GeneratedFunctions (version 3): the function scopes of
//                                     the minified file the map serves, at positions in that
//                                     file, named as the original source names them; from the
//                                     map's ECMA-426 "scopes" (formats/sourcemap/scopes.h), or
//                                     from the minified file uploaded beside the map
//                                     (sourcemap_minified.h)
//   'm' app 0x00 build 0x00 name    -> MinifiedSource (version 3): the uploaded minified file
//                                     `name`, kept so that a map uploaded after it gets its 'f'
// map_id is a 64-bit hash of the map file's bytes (of the parent id and section index for an
// inline index-map section), so re-uploading the same map rewrites the same records.
//
// Every value starts with its format version: kSourcemapRecordVersion (3) when written by this
// restack; version 1 records (no module offsets in MapHeader) and version 2 records (no 'f' or
// 'm' records beside them) are still read.
//
// Version history (every value type of this family; written with symbolstore/record_codec.h,
// whose reader refuses any other version as malformed_input, naming the record and its key):
//   version  date        what changed
//   1        2026-11-21  first format (still read)
//   2        2026-11-21  MapHeader ends with the module offsets (x_facebook_offsets); the other
//                        records are unchanged but carry 2 as well
//   3        2026-11-23  'f' records (functions of a map named from its minified file) and 'm'
//                        records (the minified file kept for a later map); the others carry 3
//   4        2026-11-25  SourceRecord and GeneratedFunctions whose function map has names V8
//                        infers for anonymous literals (FunctionMap::inferred) end with them;
//                        written only then, every other record is still written as 3
// Then, with
// v = LEB128 varint, z = zigzag varint, s = v length + bytes:
//   MapPointer   u64 map_id (little endian)
//   MapHeader    v flags (1 index map, 2 Hermes, 4 RAM bundle) · s file · s debug_id · v source_count ·
//                v section_count · sections { v line · v column · u8 kind (0 inline, 1 url) ·
//                  kind 0: u64 child map_id | kind 1: s served name } ·
//                v hermes_segment_count · { v segment · v count · v offsets delta-coded } ·
//                v facebook_segment_count · { v segment · u64 child map_id } ·
//                (version 2) v module_count · { v line + 1 (0 = no such module) }
//                  = x_facebook_offsets
//   SourceRecord s path · u8 ignored · u8 function_map_origin (0 none, 1 Metro, 2 inferred) ·
//                v line_count (of sourcesContent; 0 = none) · v name_count · s names… ·
//                v entry_count · entries { v line delta · v column · v name } ·
//                (version 4) v inferred_count · { v name index delta } (FunctionMap::inferred)
//   SourceText   v line_count · s lines…
//   GeneratedFunctions u8 origin (0 minified file, 1 "scopes") · v name_count · s names… ·
//                v entry_count · entries { v line delta · v column · v name } (as in
//                SourceRecord; lines 1-based, columns 0-based) · (version 4) inferred names
//                as in SourceRecord
//   MinifiedSource s text
//   MappingChunk v end_line · v end_column (exclusive: the next chunk's first position;
//                0xffffffff for the last) · v name_count · s names… (names used by this chunk)
//                · v segment_count · segments { v line delta · v column (delta on the same line,
//                absolute after a line change) · v source + 1 (0 = unmapped) · if source:
//                z original line delta · z original column delta · v local name + 1 }
//
// Worked example: "AAAA,IAAIA" with sources ["a.js"], names ["boom"] becomes one chunk
//   key   'g' <id> 00000000 00000000
//   value 03 | ff ff ff ff 0f ff ff ff ff 0f | 01 04 "boom" | 02 |
//         00 00 01 00 00 00 | 00 04 01 00 08 01   (zigzag: +4 -> 08)
// i.e. (0,0)->a.js 0:0 no name, (0,4)->a.js 0:4 "boom".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/sourcemap/function_map.h"
#include "formats/sourcemap/source_map.h"
#include "symbolstore/store.h"

namespace restack::sourcemap_records {

// The column family these records live in, owned by this layer (symbolstore/store.h).
inline const StoreFamily kSourcemapFamily{"sourcemap"};

inline constexpr uint8_t kSourcemapRecordVersion = 3;
inline constexpr uint8_t kOldestReadableRecordVersion = 1;
// SourceRecord and GeneratedFunctions whose function map has inferred names are written with
// this version; every other record with kSourcemapRecordVersion.
inline constexpr uint8_t kInferredNamesRecordVersion = 4;
inline constexpr std::string_view kRamBundlePointerName = "\x01ram-bundle";
inline constexpr uint32_t kSegmentsPerChunk = 256;
inline constexpr uint32_t kLinesPerTextChunk = 32;
inline constexpr uint32_t kOpenEnd = 0xffffffffu;

// ---- keys ----
std::string pointerKey(std::string_view app, std::string_view build, std::string_view name);
std::string headerKey(uint64_t map_id);
std::string sourceKey(uint64_t map_id, uint32_t source);
std::string textKey(uint64_t map_id, uint32_t source, uint32_t chunk);
std::string chunkKey(uint64_t map_id, uint32_t line, uint32_t column);
std::string generatedFunctionsKey(uint64_t map_id);
std::string minifiedSourceKey(std::string_view app, std::string_view build, std::string_view name);
// Prefix shared by every chunk key of a map ('g' map_id).
std::string chunkPrefix(uint64_t map_id);
// Reads line/column back from a chunk key; false when `key` is not one of `map_id`'s.
bool parseChunkKey(std::string_view key, uint64_t map_id, uint32_t* line, uint32_t* column);

uint64_t hashBytes(std::string_view bytes, uint64_t seed = 0);
uint64_t childMapId(uint64_t parent, uint64_t index);

// ---- values ----
std::string encodePointer(uint64_t map_id);
// Every decoder: `key`, when given, is named in its errors (symbolstore/record_codec.h).
Expected<uint64_t> decodePointer(std::string_view value, std::string_view key = {});

struct Section {
  uint32_t line = 0;
  uint32_t column = 0;
  std::optional<uint64_t> child;  // inline map
  std::string url_name;           // else: the served name of another upload
};

struct MapHeader {
  bool index_map = false;
  bool hermes = false;
  std::string file;
  std::string debug_id;
  uint32_t source_count = 0;
  std::vector<Section> sections;
  std::map<uint32_t, std::vector<uint32_t>> hermes_function_offsets;
  std::map<uint32_t, uint64_t> facebook_segments;
  // Metro RAM-bundle map (x_facebook_segments or x_facebook_offsets present): frames may name
  // "seg-N.js" / "N.js" modules.
  bool ram_bundle = false;
  std::vector<uint32_t> module_offsets;  // x_facebook_offsets; sourcemap::kNoModuleOffset = none
};
std::string encodeHeader(const MapHeader& header);
Expected<MapHeader> decodeHeader(std::string_view value, std::string_view key = {});

enum class FunctionMapOrigin : uint8_t { kNone = 0, kMetro = 1, kInferred = 2 };

struct SourceRecord {
  std::string path;
  bool ignored = false;
  FunctionMapOrigin origin = FunctionMapOrigin::kNone;
  uint32_t line_count = 0;
  sourcemap::FunctionMap functions;
};
std::string encodeSource(const SourceRecord& record);
Expected<SourceRecord> decodeSource(std::string_view value, std::string_view key = {});

std::string encodeText(const std::vector<std::string_view>& lines);
Expected<std::vector<std::string>> decodeText(std::string_view value, std::string_view key = {});

struct Segment {
  uint32_t line = 0;  // 0-based generated position
  uint32_t column = 0;
  int32_t source = -1;         // -1: unmapped
  uint32_t original_line = 0;  // 0-based
  uint32_t original_column = 0;
  int32_t name = -1;  // index into MappingChunk::names
};

struct MappingChunk {
  uint32_t start_line = 0, start_column = 0;  // from the key
  uint32_t end_line = kOpenEnd, end_column = kOpenEnd;
  std::vector<std::string> names;
  std::vector<Segment> segments;

  // Last segment at or before (line, column) on the same generated line, or nullptr.
  const Segment* find(uint32_t line, uint32_t column) const;
  bool covers(uint32_t line, uint32_t column) const;
};
std::string encodeChunk(const MappingChunk& chunk);
Expected<MappingChunk> decodeChunk(std::string_view value, uint32_t start_line, uint32_t start_column,
                                   std::string_view key = {});

// The generated function map ('f'): the minified file's function scopes with original names.
// From "scopes" it names frames before the sources' function maps (the compiler wrote it); from
// an uploaded minified file only where those give no name.
enum class GeneratedFunctionsOrigin : uint8_t { kMinifiedFile = 0, kScopes = 1 };
struct GeneratedFunctions {
  GeneratedFunctionsOrigin origin = GeneratedFunctionsOrigin::kMinifiedFile;
  sourcemap::FunctionMap functions;
};
std::string encodeGeneratedFunctions(const GeneratedFunctions& generated);
Expected<GeneratedFunctions> decodeGeneratedFunctions(std::string_view value, std::string_view key = {});

std::string encodeMinifiedSource(std::string_view text);
Expected<std::string> decodeMinifiedSource(std::string_view value, std::string_view key = {});

}  // namespace restack::sourcemap_records
