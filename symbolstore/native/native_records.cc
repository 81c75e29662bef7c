#include "symbolstore/native/native_records.h"

#include <limits>

namespace restack::native_store {
namespace {

// ---- little writer / bounded reader

void putVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void putZigzag(std::string& out, int64_t value) {
  putVarint(out, (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63));
}

void putString(std::string& out, std::string_view text) {
  putVarint(out, text.size());
  out.append(text);
}

void putBigEndian(std::string& out, uint64_t value, int bytes) {
  for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool atEnd() const { return pos_ == bytes_.size(); }

  uint8_t byte() {
    if (pos_ >= bytes_.size()) return fail<uint8_t>();
    return static_cast<uint8_t>(bytes_[pos_++]);
  }
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return fail<uint64_t>();
      uint8_t b = static_cast<uint8_t>(bytes_[pos_++]);
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return value;
    }
    return fail<uint64_t>();
  }
  uint32_t varint32() {
    uint64_t value = varint();
    if (value > std::numeric_limits<uint32_t>::max()) return fail<uint32_t>();
    return static_cast<uint32_t>(value);
  }
  // "id + 1" fields: 0 -> `none`.
  uint32_t optionalIndex(uint32_t none) {
    uint32_t value = varint32();
    return value == 0 ? none : value - 1;
  }
  int64_t zigzag() {
    uint64_t value = varint();
    return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
  }
  std::string_view string() {
    uint64_t length = varint();
    if (!ok_ || length > bytes_.size() - pos_) return fail<std::string_view>();
    std::string_view text = bytes_.substr(pos_, length);
    pos_ += length;
    return text;
  }
  // A count of items each at least `min_bytes` long: refuses counts the value cannot hold.
  uint64_t count(size_t min_bytes) {
    uint64_t value = varint();
    if (!ok_ || value > (bytes_.size() - pos_) / min_bytes) return fail<uint64_t>();
    return value;
  }

 private:
  template <typename T>
  T fail() {
    ok_ = false;
    pos_ = bytes_.size();
    return T{};
  }
  std::string_view bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

Error badRecord(const char* what) {
  return malformed(std::string("native ") + what +
                   " record is corrupt or from an incompatible version; re-ingest the image");
}

bool checkVersion(Reader& reader) {
  return reader.byte() == kRecordVersion && reader.ok();
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
  std::string out;
  out.push_back(static_cast<char>(kRecordVersion));
  out.push_back(static_cast<char>(image.format));
  uint8_t flags = (image.shared ? 1 : 0) | (image.has_dwarf ? 2 : 0) | (image.has_symbols ? 4 : 0) |
                  (image.has_objc ? 8 : 0) | (image.symbols_from_debug_file ? 16 : 0);
  out.push_back(static_cast<char>(flags));
  putVarint(out, image.image_base);
  putVarint(out, image.functions);
  putVarint(out, image.symbols);
  putVarint(out, image.strings);
  putString(out, image.arch);
  putString(out, image.module);
  putString(out, image.app);
  putString(out, image.build_id);
  return out;
}

Expected<ImageRecord> decodeImage(std::string_view value) {
  Reader reader(value);
  if (!checkVersion(reader)) return badRecord("image");
  ImageRecord image;
  uint8_t format = reader.byte();
  if (format != static_cast<uint8_t>(native::ObjectFormat::kMachO) &&
      format != static_cast<uint8_t>(native::ObjectFormat::kElf)) {
    return badRecord("image");
  }
  image.format = static_cast<native::ObjectFormat>(format);
  uint8_t flags = reader.byte();
  image.shared = flags & 1;
  image.has_dwarf = flags & 2;
  image.has_symbols = flags & 4;
  image.has_objc = flags & 8;
  image.symbols_from_debug_file = flags & 16;
  image.image_base = reader.varint();
  image.functions = reader.varint();
  image.symbols = reader.varint();
  image.strings = reader.varint();
  image.arch = reader.string();
  image.module = reader.string();
  image.app = reader.string();
  image.build_id = reader.string();
  if (!reader.ok()) return badRecord("image");
  return image;
}

// ---- function

std::string encodeFunction(const FunctionRecord& function) {
  std::string out;
  out.reserve(16 + function.nodes.size() * 6 + function.tiles.size() * 3 + function.lines.size() * 5);
  out.push_back(static_cast<char>(kRecordVersion));
  putVarint(out, function.end - function.begin);
  putVarint(out, function.outer_name == kNoString ? 0 : uint64_t{function.outer_name} + 1);
  putVarint(out, function.nodes.size());
  for (const StoredNode& node : function.nodes) {
    putVarint(out, node.parent == UINT32_MAX ? 0 : uint64_t{node.parent} + 1);
    putVarint(out, node.name == kNoString ? 0 : uint64_t{node.name} + 1);
    putVarint(out, node.call_file == kNoString ? 0 : uint64_t{node.call_file} + 1);
    putVarint(out, node.call_line);
    putVarint(out, node.call_column);
  }
  putVarint(out, function.tiles.size());
  uint64_t previous = function.begin;
  for (const StoredTile& tile : function.tiles) {
    putVarint(out, tile.begin - previous);
    putVarint(out, tile.node);
    previous = tile.begin;
  }
  putVarint(out, function.lines.size());
  previous = function.begin;
  int64_t previous_line = 0;
  for (const StoredLine& line : function.lines) {
    putVarint(out, line.begin - previous);
    putVarint(out, line.file == kNoString ? 0 : uint64_t{line.file} + 1);
    putZigzag(out, static_cast<int64_t>(line.line) - previous_line);
    putVarint(out, line.column);
    previous = line.begin;
    previous_line = line.line;
  }
  // Optional trailing field: records without a clone keep the layout written before it existed.
  if (function.clone != kNoString) putVarint(out, uint64_t{function.clone} + 1);
  return out;
}

Expected<FunctionRecord> decodeFunction(uint64_t begin, std::string_view value) {
  Reader reader(value);
  if (!checkVersion(reader)) return badRecord("function");
  FunctionRecord function;
  function.begin = begin;
  uint64_t size = reader.varint();
  if (size == 0 || size > std::numeric_limits<uint64_t>::max() - begin) return badRecord("function");
  function.end = begin + size;
  function.outer_name = reader.optionalIndex(kNoString);
  uint64_t node_count = reader.count(5);
  if (node_count == 0) return badRecord("function");
  function.nodes.resize(node_count);
  for (uint64_t i = 0; i < node_count && reader.ok(); ++i) {
    StoredNode& node = function.nodes[i];
    node.parent = reader.optionalIndex(UINT32_MAX);
    // Parents come before their children: walking up always ends.
    if (node.parent != UINT32_MAX && node.parent >= i) return badRecord("function");
    node.name = reader.optionalIndex(kNoString);
    node.call_file = reader.optionalIndex(kNoString);
    node.call_line = reader.varint32();
    node.call_column = reader.varint32();
  }
  uint64_t tile_count = reader.count(2);
  function.tiles.resize(tile_count);
  uint64_t previous = begin;
  for (uint64_t i = 0; i < tile_count && reader.ok(); ++i) {
    uint64_t delta = reader.varint();
    if (delta > function.end - previous || (i > 0 && delta == 0)) return badRecord("function");
    previous += delta;
    function.tiles[i].begin = previous;
    function.tiles[i].node = reader.varint32();
    if (function.tiles[i].node >= node_count) return badRecord("function");
  }
  if (tile_count == 0 || function.tiles[0].begin != begin) return badRecord("function");
  uint64_t line_count = reader.count(4);
  function.lines.resize(line_count);
  previous = begin;
  int64_t line_number = 0;
  for (uint64_t i = 0; i < line_count && reader.ok(); ++i) {
    uint64_t delta = reader.varint();
    if (delta > function.end - previous || (i > 0 && delta == 0)) return badRecord("function");
    previous += delta;
    StoredLine& line = function.lines[i];
    line.begin = previous;
    line.file = reader.optionalIndex(kNoString);
    line_number += reader.zigzag();
    if (line_number < 0 || line_number > std::numeric_limits<uint32_t>::max()) {
      return badRecord("function");
    }
    line.line = static_cast<uint32_t>(line_number);
    line.column = reader.varint32();
  }
  if (reader.ok() && !reader.atEnd()) {
    function.clone = reader.optionalIndex(kNoString);
    if (function.clone == kNoString) return badRecord("function");
  }
  if (!reader.ok() || !reader.atEnd()) return badRecord("function");
  return function;
}

// ---- symbols

std::string encodeSymbolChunk(const SymbolChunk& chunk) {
  std::string out;
  out.push_back(static_cast<char>(kRecordVersion));
  putVarint(out, chunk.next_chunk == 0 ? 0 : chunk.next_chunk - chunk.begin);
  putVarint(out, chunk.symbols.size());
  uint64_t previous = chunk.begin;
  for (const StoredSymbol& symbol : chunk.symbols) {
    putVarint(out, symbol.begin - previous);
    putVarint(out, symbol.size);
    out.push_back(static_cast<char>(symbol.source));
    putString(out, symbol.name);
    previous = symbol.begin;
  }
  return out;
}

Expected<SymbolChunk> decodeSymbolChunk(uint64_t begin, std::string_view value) {
  Reader reader(value);
  if (!checkVersion(reader)) return badRecord("symbol");
  SymbolChunk chunk;
  chunk.begin = begin;
  uint64_t next_delta = reader.varint();
  if (next_delta > std::numeric_limits<uint64_t>::max() - begin) return badRecord("symbol");
  chunk.next_chunk = next_delta == 0 ? 0 : begin + next_delta;
  uint64_t count = reader.count(4);
  chunk.symbols.resize(count);
  uint64_t previous = begin;
  for (uint64_t i = 0; i < count && reader.ok(); ++i) {
    uint64_t delta = reader.varint();
    if (delta > std::numeric_limits<uint64_t>::max() - previous) return badRecord("symbol");
    previous += delta;
    StoredSymbol& symbol = chunk.symbols[i];
    symbol.begin = previous;
    symbol.size = reader.varint();
    symbol.source = reader.byte();
    symbol.name = std::string(reader.string());
    if (symbol.source > 1 || (chunk.next_chunk != 0 && symbol.begin >= chunk.next_chunk)) {
      return badRecord("symbol");
    }
  }
  if (!reader.ok() || !reader.atEnd() || count == 0 || chunk.symbols[0].begin != begin) {
    return badRecord("symbol");
  }
  return chunk;
}

// ---- strings, id lists, aliases

std::string encodeStringBlock(const std::vector<std::string>& strings) {
  std::string out;
  out.push_back(static_cast<char>(kRecordVersion));
  putVarint(out, strings.size());
  for (const std::string& text : strings) putString(out, text);
  return out;
}

Expected<std::vector<std::string>> decodeStringBlock(std::string_view value) {
  Reader reader(value);
  if (!checkVersion(reader)) return badRecord("string");
  uint64_t count = reader.count(1);
  if (count > kStringsPerBlock) return badRecord("string");
  std::vector<std::string> strings(count);
  for (uint64_t i = 0; i < count && reader.ok(); ++i) strings[i] = std::string(reader.string());
  if (!reader.ok() || !reader.atEnd()) return badRecord("string");
  return strings;
}

std::string encodeIdList(const std::vector<std::string>& ids) {
  std::string out;
  out.push_back(static_cast<char>(kRecordVersion));
  putVarint(out, ids.size());
  for (const std::string& id : ids) putString(out, id);
  return out;
}

Expected<std::vector<std::string>> decodeIdList(std::string_view value) {
  Reader reader(value);
  if (!checkVersion(reader)) return badRecord("module");
  uint64_t count = reader.count(1);
  std::vector<std::string> ids(count);
  for (uint64_t i = 0; i < count && reader.ok(); ++i) ids[i] = std::string(reader.string());
  if (!reader.ok() || !reader.atEnd()) return badRecord("module");
  return ids;
}

std::string encodeAlias(std::string_view id) {
  std::string out(1, static_cast<char>(kRecordVersion));
  out.append(id);
  return out;
}

Expected<std::string> decodeAlias(std::string_view value) {
  if (value.size() < 2 || static_cast<uint8_t>(value[0]) != kRecordVersion) {
    return badRecord("alias");
  }
  return std::string(value.substr(1));
}

}  // namespace restack::native_store
