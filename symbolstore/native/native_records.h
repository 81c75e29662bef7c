// Records of the `native` column family: native images (iOS Mach-O/dSYM, Android ELF) turned
// into lookup records at ingest. Format version 1 (first byte of every value); a FunctionRecord
// with a scoped node, and a SymbolChunk with symbol files, are written as version 2.
//
// Version history (every value type of this family; written with symbolstore/record_codec.h,
// whose reader refuses any other version as malformed_input, naming the record and its key):
//   version  date        what changed
//   1        2026-11-21  first format: image, function, symbol chunk, string block, module, alias
//   1        2026-11-23  additions older readers skip or never meet, so no new version: the
//                        optional trailing clone field of FunctionRecord, and ImageRecord flag 16
//                        (symbols read from a detached debug file)
//   2        2026-11-23  FunctionRecord only: every node also has a scope (the function a lambda's
//                        call operator is defined in, when DWARF names it bare: GCC's
//                        "operator()"). Written only when some node has one; a record without
//                        any is still written as version 1, which stays readable.
//   2        2026-11-26  SymbolChunk only: a table of files, and a file per symbol (an ELF local
//                        symbol's STT_FILE name, formats/native/symbol_table.h), which
//                        llvm-symbolizer prints for frames no DWARF covers. Written only when
//                        some symbol of the chunk has a file; other chunks stay version 1.
//
// Keys (id = the debug id as raw bytes: 16 for a Mach-O UUID, usually 20 for a GNU build id;
// addresses relative to the image base, big endian so that keys sort by address):
//
//   'I' id                                 ImageRecord: what the image is, which tiers it has
//   'A' <alias hex>                        canonical debug id (raw bytes) of an alias form
//   'N' app 00 build 00 module             debug ids of the images named `module` in that build
//                                          (app and build empty for shared images)
//   'F' u8 len id u64 begin                FunctionRecord: one function's address range, inline
//                                          tree and line spans (DWARF tier)
//   'S' u8 len id u64 begin                SymbolChunk: up to 128 symbol-table / Objective-C
//                                          entries starting at `begin` (symtab and objc tiers)
//   'T' u8 len id u32 block                StringBlock: strings block*64 … block*64+63 used by
//                                          the image's FunctionRecords (names and file paths,
//                                          deduplicated per image, demangled)
//
// Values (varint = LEB128 unsigned; zigzag for signed; str = varint length + bytes; ids in
// FunctionRecords are "string id + 1", 0 meaning none):
//
//   ImageRecord   u8 version, u8 format (1 macho, 2 elf), u8 flags (1 shared, 2 dwarf,
//                 4 symbols, 8 objc, 16 symbols read from a detached debug file), varint image_base, varint functions,
//                 varint symbols, varint strings, str arch, str module, str app, str build_id
//   FunctionRecord u8 version, varint size, varint outer_name+1,
//                 varint nodes  { varint parent+1, varint name+1, varint call_file+1,
//                                 varint call_line, varint call_column,
//                                 [varint scope+1] (version 2 only) }  (parent < own index)
//                 varint tiles  { varint begin delta, varint node }       (first delta from begin)
//                 varint lines  { varint begin delta, varint file+1, zigzag line delta,
//                                 varint column }
//                 [varint clone+1]  (optional, only when the function is a compiler clone)
//   SymbolChunk   u8 version, varint next_chunk_delta (0: last chunk),
//                 [varint files { str file }] (version 2 only), varint count,
//                 { varint begin delta, varint size, u8 source (0 symtab, 1 objc), str name,
//                   [varint file+1] (version 2 only) }
//   StringBlock   u8 version, varint count, { str }
//   alias / module values: u8 version, then the raw id / { str id }…
//
// Worked example: ELF build id ba78e30f…1b190011aabb; function main at 0x10d00..0x10d80 that
// inlined helper() (a.c:3) at 0x10d10..0x10d20 called from a.c:9:5; strings 0 "main",
// 1 "/src/a.c", 2 "helper":
//   key   'F' 14 ba78…aabb 00 00 00 00 00 01 0d 00
//   value 01 | 80 01 (size 0x80) | 00 (no symtab override)
//         | 02 nodes: {00 01 00 00 00} {01 03 02 09 05}
//         | 03 tiles: {00 00} {10 01} {10 00}
//         | 03 lines: {00 02 10 03} (a.c:8:3) {10 02 09 0a}(a.c:3:10) {10 02 0e 01}(a.c:10:1)
//   lookup 0x10d14 -> tile {0x10d10 node 1}, line a.c:3:10:
//         helper a.c:3:10 (inlined), then main a.c:9:5.
//
// A FunctionRecord may also cover code that the unit's line table describes and no subprogram
// does (formats/native/dwarf_walker.h, FunctionRanges::line_only: clang-assembled .S files,
// split-DWARF skeletons): one unnamed node, the unit's lines, and the covering symbol's name as
// outer_name; each such record spans one symbol. Readers needed no change (an unnamed node was
// always valid), so the version stays.
//
// Uploads sharing a debug id merge (a stripped .so and its separate debug file): the DWARF tier
// of the latest upload with DWARF replaces any earlier one ('F' and 'T' of the id are rewritten);
// the symbol tier is replaced only by a symbol table at least as large as the stored one. A
// detached debug file (formats/native/symbol_table.h: isDetachedDebugFile) contributes only the
// symbols its stripped library lists in .dynsym, and never replaces the library's own table: the
// answers are llvm-symbolizer's for the stripped library with its debug file. Lookups try DWARF
// first, then the symbol tier.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/native/native_object.h"
#include "symbolstore/store.h"

namespace restack::native_store {

// The column family these records live in, owned by this layer (symbolstore/store.h).
inline const StoreFamily kNativeFamily{"native"};

inline constexpr uint8_t kRecordVersion = 1;
inline constexpr uint8_t kScopedFunctionRecordVersion = 2;  // FunctionRecords with node scopes
inline constexpr uint8_t kSymbolChunkWithFilesVersion = 2;  // SymbolChunks with symbol files
inline constexpr uint32_t kNoString = UINT32_MAX;
inline constexpr uint32_t kStringsPerBlock = 64;
inline constexpr size_t kSymbolsPerChunk = 128;

// ---- keys
std::string hexToBytes(std::string_view hex);  // "" when not even-length hex
std::string bytesToHex(std::string_view bytes);
std::string imageKey(std::string_view id);
std::string aliasKey(std::string_view alias_hex);
std::string moduleKey(std::string_view app, std::string_view build, std::string_view module);
std::string functionKey(std::string_view id, uint64_t address);
std::string symbolKey(std::string_view id, uint64_t address);
std::string stringBlockKey(std::string_view id, uint32_t block);
// [first, last) key bounds of one id's records of type 'F', 'S' or 'T'.
std::string recordsBegin(char type, std::string_view id);
std::string recordsEnd(char type, std::string_view id);
// Address of an 'F' or 'S' key of `id`; std::nullopt for keys of another id or type.
std::optional<uint64_t> addressOfKey(char type, std::string_view id, std::string_view key);

// ---- values
struct ImageRecord {
  native::ObjectFormat format = native::ObjectFormat::kElf;
  bool shared = false;
  bool has_dwarf = false;
  bool has_symbols = false;
  bool has_objc = false;
  // The symbol tier came from a detached debug file (its exported symbols, standing in for the
  // stripped library's .dynsym); the library's own table replaces it whatever its size.
  bool symbols_from_debug_file = false;
  uint64_t image_base = 0;
  uint64_t functions = 0;
  uint64_t symbols = 0;
  uint64_t strings = 0;
  std::string arch;
  std::string module;
  std::string app;
  std::string build_id;
};
std::string encodeImage(const ImageRecord& image);
Expected<ImageRecord> decodeImage(std::string_view value, std::string_view key = {});

struct StoredNode {
  uint32_t parent = UINT32_MAX;  // UINT32_MAX for the subprogram
  uint32_t name = kNoString;
  uint32_t call_file = kNoString;
  uint32_t call_line = 0;
  uint32_t call_column = 0;
  // The function the node's subroutine is defined in, when its name does not say it (the
  // demangled enclosing function of a GCC lambda's bare "operator()"; formats/native/
  // dwarf_walker.h). Resolvers report it as the frame's `scope`; it never changes the name.
  uint32_t scope = kNoString;
};
struct StoredTile {
  uint64_t begin = 0;
  uint32_t node = 0;
};
struct StoredLine {
  uint64_t begin = 0;
  uint32_t file = kNoString;
  uint32_t line = 0;
  uint32_t column = 0;
};
struct FunctionRecord {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint32_t outer_name = kNoString;  // symbol-table name of the outermost frame, when it differs
  // Clone suffix of the symbol-table name ("isra.0", "cold"; formats/native/symbol_table.h)
  // when that name is the DWARF name plus a clone suffix; the outermost frame then keeps the
  // DWARF name and reports the clone as an attribute.
  uint32_t clone = kNoString;
  std::vector<StoredNode> nodes;
  std::vector<StoredTile> tiles;
  std::vector<StoredLine> lines;
};
std::string encodeFunction(const FunctionRecord& function);
// `begin` comes from the key. Rejects records whose indices or ranges do not hold together.
// Every decoder: `key`, when given, is named in its errors (symbolstore/record_codec.h).
Expected<FunctionRecord> decodeFunction(uint64_t begin, std::string_view value, std::string_view key = {});

struct StoredSymbol {
  uint64_t begin = 0;
  uint64_t size = 0;   // 0: up to the next entry / chunk end
  uint8_t source = 0;  // 0 symtab, 1 objc
  std::string name;    // demangled
  std::string file;    // ELF local symbols: the object file's name (STT_FILE), else ""
};
struct SymbolChunk {
  uint64_t begin = 0;
  uint64_t next_chunk = 0;  // begin of the next chunk; 0 when this is the last chunk
  std::vector<StoredSymbol> symbols;
};
std::string encodeSymbolChunk(const SymbolChunk& chunk);
Expected<SymbolChunk> decodeSymbolChunk(uint64_t begin, std::string_view value, std::string_view key = {});

std::string encodeStringBlock(const std::vector<std::string>& strings);
Expected<std::vector<std::string>> decodeStringBlock(std::string_view value, std::string_view key = {});

std::string encodeIdList(const std::vector<std::string>& ids);
Expected<std::vector<std::string>> decodeIdList(std::string_view value, std::string_view key = {});
// The id list stored under `key` (a moduleKey) with `id` added once, encoded: what an image's
// writer puts back so that frames printing no debug id find the image by (app, build, module).
// An unreadable list is replaced.
Expected<std::string> idListWith(const SymbolStore& store, std::string_view key, const std::string& id);
std::string encodeAlias(std::string_view id);
Expected<std::string> decodeAlias(std::string_view value, std::string_view key = {});

// ---- write-time transforms
//
// A source that enriches native records instead of writing its own (IL2CPP's line mappings turn
// an image's generated C++ lines into C# lines; Dart's do the same for Dart) plugs in here, the
// model being symbolic's IL2CPP hook. The native writer (native_ingest.cc) asks every transform
// (IngestOptions::native_transforms, with the registered sources' own: SymbolSource::
// native_transform) once per image for a rewriter, before the image's DWARF tier is written, and
// passes every FunctionRecord of that image through it before encoding. The symbol tier ('S') is
// not transformed.
//
// A rewriter may change names, files and lines of the nodes and line spans (new strings are
// interned in the image's string table), never the record's address range. Transforms run on
// the ingest thread, one image at a time. They apply when records are written: an enrichment
// uploaded after its image takes effect when the image is ingested again. An error fails the
// upload. docs/design.md §11.

// The strings of the image being written: names and paths by the ids FunctionRecords hold.
class ImageStrings {
 public:
  virtual ~ImageStrings() = default;
  virtual std::string_view text(uint32_t id) const = 0;  // "" for kNoString
  virtual Expected<uint32_t> intern(std::string_view text) = 0;
};

// Rewrites the function records of one image.
class FunctionRewriter {
 public:
  virtual ~FunctionRewriter() = default;
  virtual Status rewrite(FunctionRecord& function, ImageStrings& strings) = 0;
};

class NativeRecordTransform {
 public:
  virtual ~NativeRecordTransform() = default;
  // For messages: "il2cpp line mappings".
  virtual std::string_view name() const = 0;
  // The rewriter for the image `debug_id` (hex; `image` says what the writer knows of it:
  // format, arch, module, app, build), or nullptr when the transform has nothing for it. May read
  // the transform's own records from `store`.
  virtual Expected<std::unique_ptr<FunctionRewriter>> forImage(const SymbolStore& store, std::string_view debug_id,
                                                               const ImageRecord& image) const = 0;
};

}  // namespace restack::native_store
