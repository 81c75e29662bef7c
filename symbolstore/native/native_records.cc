#include "symbolstore/native/native_records.h"

#include <algorithm>
#include <limits>

#include "symbolstore/record_codec.h"

namespace restack::native_store {
namespace {

using records::RecordReader;
using records::RecordType;
using records::RecordWriter;

constexpr std::string_view kRemedy = "re-ingest the image (replay restack.symbols)";
constexpr RecordType kImageType{"native", "image", 1, kRecordVersion, kRemedy};
constexpr RecordType kFunctionType{"native", "function", 1, kScopedFunctionRecordVersion, kRemedy};
constexpr RecordType kSymbolType{"native", "symbol chunk", 1, kSymbolChunkWithFilesVersion, kRemedy};
constexpr RecordType kStringType{"native", "string block", 1, kRecordVersion, kRemedy};
constexpr RecordType kModuleType{"native", "module", 1, kRecordVersion, kRemedy};
constexpr RecordType kAliasType{"native", "alias", 1, kRecordVersion, kRemedy};

void putBigEndian(std::string& out, uint64_t value, int bytes) {
  RecordWriter::putBigEndian(out, value, bytes);
}

std::string idKey(char type, std::string_view id) {
  std::string key(1, type);
  key.push_back(static_cast<char>(id.size()));
  key.append(id);
  return key;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string hexToBytes(std::string_view hex) {
  if (hex.empty() || hex.size() % 2 != 0 || hex.size() > 2 * 255) return {};
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    int high = hexDigit(hex[2 * i]), low = hexDigit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return {};
    out[i] = static_cast<char>(high * 16 + low);
  }
  return out;
}

std::string bytesToHex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string imageKey(std::string_view id) {
  return "I" + std::string(id);
}
std::string aliasKey(std::string_view alias_hex) {
  return "A" + std::string(alias_hex);
}

std::string moduleKey(std::string_view app, std::string_view build, std::string_view module) {
  std::string key = "N";
  key.append(app);
  key.push_back('\0');
  key.append(build);
  key.push_back('\0');
  key.append(module);
  return key;
}

std::string functionKey(std::string_view id, uint64_t address) {
  std::string key = idKey('F', id);
  putBigEndian(key, address, 8);
  return key;
}

std::string symbolKey(std::string_view id, uint64_t address) {
  std::string key = idKey('S', id);
  putBigEndian(key, address, 8);
  return key;
}

std::string stringBlockKey(std::string_view id, uint32_t block) {
  std::string key = idKey('T', id);
  putBigEndian(key, block, 4);
  return key;
}

std::string recordsBegin(char type, std::string_view id) {
  return idKey(type, id);
}

std::string recordsEnd(char type, std::string_view id) {
  std::string key = idKey(type, id);
  key.append(9, '\xff');  // past every 8-byte address / 4-byte block suffix
  return key;
}

std::optional<uint64_t> addressOfKey(char type, std::string_view id, std::string_view key) {
  std::string prefix = idKey(type, id);
  if (key.size() != prefix.size() + 8 || !key.starts_with(prefix)) return std::nullopt;
  uint64_t address = 0;
  for (size_t i = prefix.size(); i < key.size(); ++i) {
    address = (address << 8) | static_cast<uint8_t>(key[i]);
  }
  return address;
}

// ---- image

std::string encodeImage(const ImageRecord& image) {
  RecordWriter out(kRecordVersion);
  out.u8(static_cast<uint8_t>(image.format));
  uint8_t flags = (image.shared ? 1 : 0) | (image.has_dwarf ? 2 : 0) | (image.has_symbols ? 4 : 0) |
                  (image.has_objc ? 8 : 0) | (image.symbols_from_debug_file ? 16 : 0);
  out.u8(flags);
  out.varint(image.image_base);
  out.varint(image.functions);
  out.varint(image.symbols);
  out.varint(image.strings);
  out.bytes(image.arch);
  out.bytes(image.module);
  out.bytes(image.app);
  out.bytes(image.build_id);
  return out.take();
}

Expected<ImageRecord> decodeImage(std::string_view value, std::string_view key) {
  RecordReader reader(kImageType, value, key);
  reader.version();
  ImageRecord image;
  uint8_t format = reader.u8();
  if (reader.ok() && format != static_cast<uint8_t>(native::ObjectFormat::kMachO) &&
      format != static_cast<uint8_t>(native::ObjectFormat::kElf)) {
    return reader.refuse("unknown object format");
  }
  image.format = static_cast<native::ObjectFormat>(format);
  uint8_t flags = reader.u8();
  image.shared = flags & 1;
  image.has_dwarf = flags & 2;
  image.has_symbols = flags & 4;
  image.has_objc = flags & 8;
  image.symbols_from_debug_file = flags & 16;
  image.image_base = reader.varint();
  image.functions = reader.varint();
  image.symbols = reader.varint();
  image.strings = reader.varint();
  image.arch = reader.bytes();
  image.module = reader.bytes();
  image.app = reader.bytes();
  image.build_id = reader.bytes();
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return image;
}

// ---- function

std::string encodeFunction(const FunctionRecord& function) {
  const bool scoped = std::any_of(function.nodes.begin(), function.nodes.end(),
                                  [](const StoredNode& node) { return node.scope != kNoString; });
  RecordWriter out(scoped ? kScopedFunctionRecordVersion : kRecordVersion);
  out.reserve(16 + function.nodes.size() * 6 + function.tiles.size() * 3 + function.lines.size() * 5);
  out.varint(function.end - function.begin);
  out.varint(function.outer_name == kNoString ? 0 : uint64_t{function.outer_name} + 1);
  out.varint(function.nodes.size());
  for (const StoredNode& node : function.nodes) {
    out.varint(node.parent == UINT32_MAX ? 0 : uint64_t{node.parent} + 1);
    out.varint(node.name == kNoString ? 0 : uint64_t{node.name} + 1);
    out.varint(node.call_file == kNoString ? 0 : uint64_t{node.call_file} + 1);
    out.varint(node.call_line);
    out.varint(node.call_column);
    if (scoped) out.varint(node.scope == kNoString ? 0 : uint64_t{node.scope} + 1);
  }
  out.varint(function.tiles.size());
  uint64_t previous = function.begin;
  for (const StoredTile& tile : function.tiles) {
    out.varint(tile.begin - previous);
    out.varint(tile.node);
    previous = tile.begin;
  }
  out.varint(function.lines.size());
  previous = function.begin;
  int64_t previous_line = 0;
  for (const StoredLine& line : function.lines) {
    out.varint(line.begin - previous);
    out.varint(line.file == kNoString ? 0 : uint64_t{line.file} + 1);
    out.zigzag(static_cast<int64_t>(line.line) - previous_line);
    out.varint(line.column);
    previous = line.begin;
    previous_line = line.line;
  }
  // Optional trailing field: records without a clone keep the layout written before it existed.
  if (function.clone != kNoString) out.varint(uint64_t{function.clone} + 1);
  return out.take();
}

Expected<FunctionRecord> decodeFunction(uint64_t begin, std::string_view value, std::string_view key) {
  RecordReader reader(kFunctionType, value, key);
  const uint8_t version = reader.version();
  FunctionRecord function;
  function.begin = begin;
  uint64_t size = reader.varint();
  if (reader.ok() && (size == 0 || size > std::numeric_limits<uint64_t>::max() - begin)) {
    return reader.refuse("function size is 0 or runs past the address space");
  }
  function.end = begin + size;
  function.outer_name = reader.optionalIndex(kNoString);
  uint64_t node_count = reader.count(5);
  if (reader.ok() && node_count == 0) return reader.refuse("function without an inline tree");
  function.nodes.resize(node_count);
  for (uint64_t i = 0; i < node_count && reader.ok(); ++i) {
    StoredNode& node = function.nodes[i];
    node.parent = reader.optionalIndex(UINT32_MAX);
    // Parents come before their children: walking up always ends.
    if (node.parent != UINT32_MAX && node.parent >= i) return reader.refuse("inline node's parent comes after it");
    node.name = reader.optionalIndex(kNoString);
    node.call_file = reader.optionalIndex(kNoString);
    node.call_line = reader.varint32();
    node.call_column = reader.varint32();
    if (version >= kScopedFunctionRecordVersion) node.scope = reader.optionalIndex(kNoString);
  }
  uint64_t tile_count = reader.count(2);
  function.tiles.resize(tile_count);
  uint64_t previous = begin;
  for (uint64_t i = 0; i < tile_count && reader.ok(); ++i) {
    uint64_t delta = reader.varint();
    if (delta > function.end - previous || (i > 0 && delta == 0)) {
      return reader.refuse("tiles out of order or past the function's end");
    }
    previous += delta;
    function.tiles[i].begin = previous;
    function.tiles[i].node = reader.varint32();
    if (function.tiles[i].node >= node_count) return reader.refuse("tile names an inline node that does not exist");
  }
  if (reader.ok() && (tile_count == 0 || function.tiles[0].begin != begin)) {
    return reader.refuse("tiles do not start at the function's begin");
  }
  uint64_t line_count = reader.count(4);
  function.lines.resize(line_count);
  previous = begin;
  int64_t line_number = 0;
  for (uint64_t i = 0; i < line_count && reader.ok(); ++i) {
    uint64_t delta = reader.varint();
    if (delta > function.end - previous || (i > 0 && delta == 0)) {
      return reader.refuse("line spans out of order or past the function's end");
    }
    previous += delta;
    StoredLine& line = function.lines[i];
    line.begin = previous;
    line.file = reader.optionalIndex(kNoString);
    line_number += reader.zigzag();
    if (line_number < 0 || line_number > std::numeric_limits<uint32_t>::max()) {
      return reader.refuse("line number out of range");
    }
    line.line = static_cast<uint32_t>(line_number);
    line.column = reader.varint32();
  }
  if (reader.ok() && !reader.atEnd()) {
    function.clone = reader.optionalIndex(kNoString);
    if (reader.ok() && function.clone == kNoString) return reader.refuse("clone field without a clone");
  }
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return function;
}

// ---- symbols

std::string encodeSymbolChunk(const SymbolChunk& chunk) {
  // The chunk's distinct files, in order of first use; a chunk without any stays version 1.
  std::vector<std::string_view> files;
  for (const StoredSymbol& symbol : chunk.symbols) {
    if (!symbol.file.empty() && std::find(files.begin(), files.end(), symbol.file) == files.end()) {
      files.push_back(symbol.file);
    }
  }
  RecordWriter out(files.empty() ? kRecordVersion : kSymbolChunkWithFilesVersion);
  out.varint(chunk.next_chunk == 0 ? 0 : chunk.next_chunk - chunk.begin);
  if (!files.empty()) {
    out.varint(files.size());
    for (std::string_view file : files) out.bytes(file);
  }
  out.varint(chunk.symbols.size());
  uint64_t previous = chunk.begin;
  for (const StoredSymbol& symbol : chunk.symbols) {
    out.varint(symbol.begin - previous);
    out.varint(symbol.size);
    out.u8(symbol.source);
    out.bytes(symbol.name);
    if (!files.empty()) {
      out.varint(symbol.file.empty()
                     ? 0
                     : static_cast<uint64_t>(std::find(files.begin(), files.end(), symbol.file) - files.begin()) + 1);
    }
    previous = symbol.begin;
  }
  return out.take();
}

Expected<SymbolChunk> decodeSymbolChunk(uint64_t begin, std::string_view value, std::string_view key) {
  RecordReader reader(kSymbolType, value, key);
  const uint8_t version = reader.version();
  SymbolChunk chunk;
  chunk.begin = begin;
  uint64_t next_delta = reader.varint();
  if (next_delta > std::numeric_limits<uint64_t>::max() - begin) {
    return reader.refuse("next chunk past the address space");
  }
  chunk.next_chunk = next_delta == 0 ? 0 : begin + next_delta;
  std::vector<std::string_view> files;
  if (version >= kSymbolChunkWithFilesVersion) {
    files.resize(reader.count(1));
    for (std::string_view& file : files) file = reader.bytes();
  }
  uint64_t count = reader.count(4);
  if (reader.ok() && count == 0) return reader.refuse("chunk without symbols");
  chunk.symbols.resize(count);
  uint64_t previous = begin;
  for (uint64_t i = 0; i < count && reader.ok(); ++i) {
    uint64_t delta = reader.varint();
    if (delta > std::numeric_limits<uint64_t>::max() - previous) {
      return reader.refuse("symbol address past the address space");
    }
    previous += delta;
    StoredSymbol& symbol = chunk.symbols[i];
    symbol.begin = previous;
    symbol.size = reader.varint();
    symbol.source = reader.u8();
    symbol.name = std::string(reader.bytes());
    if (version >= kSymbolChunkWithFilesVersion) {
      const uint64_t file = reader.varint();
      if (file > files.size()) return reader.refuse("symbol file index out of range");
      if (file != 0) symbol.file = std::string(files[file - 1]);
    }
    if (symbol.source > 1) return reader.refuse("unknown symbol source");
    if (chunk.next_chunk != 0 && symbol.begin >= chunk.next_chunk) {
      return reader.refuse("symbol at or past the next chunk");
    }
  }
  if (reader.ok() && chunk.symbols[0].begin != begin) return reader.refuse("first symbol not at the chunk's begin");
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return chunk;
}

// ---- strings, id lists, aliases

std::string encodeStringBlock(const std::vector<std::string>& strings) {
  RecordWriter out(kRecordVersion);
  out.varint(strings.size());
  for (const std::string& text : strings) out.bytes(text);
  return out.take();
}

Expected<std::vector<std::string>> decodeStringBlock(std::string_view value, std::string_view key) {
  RecordReader reader(kStringType, value, key);
  reader.version();
  uint64_t count = reader.count(1);
  if (count > kStringsPerBlock) return reader.refuse("more strings than a block holds");
  std::vector<std::string> strings(count);
  for (uint64_t i = 0; i < count && reader.ok(); ++i) strings[i] = std::string(reader.bytes());
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return strings;
}

Expected<std::string> idListWith(const SymbolStore& store, std::string_view key, const std::string& id) {
  auto existing = store.get(kNativeFamily, key);
  if (!existing) return existing.error();
  std::vector<std::string> ids;
  if (existing->has_value()) {
    auto decoded = decodeIdList(**existing, key);
    if (decoded) ids = std::move(*decoded);
  }
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  return encodeIdList(ids);
}

std::string encodeIdList(const std::vector<std::string>& ids) {
  RecordWriter out(kRecordVersion);
  out.varint(ids.size());
  for (const std::string& id : ids) out.bytes(id);
  return out.take();
}

Expected<std::vector<std::string>> decodeIdList(std::string_view value, std::string_view key) {
  RecordReader reader(kModuleType, value, key);
  reader.version();
  uint64_t count = reader.count(1);
  std::vector<std::string> ids(count);
  for (uint64_t i = 0; i < count && reader.ok(); ++i) ids[i] = std::string(reader.bytes());
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return ids;
}

std::string encodeAlias(std::string_view id) {
  RecordWriter out(kRecordVersion);
  out.raw(id);
  return out.take();
}

Expected<std::string> decodeAlias(std::string_view value, std::string_view key) {
  RecordReader reader(kAliasType, value, key);
  reader.version();
  std::string id(reader.rest());
  if (reader.ok() && id.empty()) return reader.refuse("alias without an id");
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return id;
}

}  // namespace restack::native_store
