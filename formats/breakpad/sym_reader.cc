#include "formats/breakpad/sym_reader.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace restack::breakpad {
namespace {

// Fields of one record, separated by spaces (runs of spaces are tolerated).
class Fields {
 public:
  explicit Fields(std::string_view text) : rest_(text) {}

  std::string_view next() {
    skipSpaces();
    size_t end = rest_.find(' ');
    std::string_view field = rest_.substr(0, end);
    rest_.remove_prefix(end == std::string_view::npos ? rest_.size() : end);
    return field;
  }
  // Everything left (a name that may hold spaces), without the separating spaces.
  std::string_view rest() {
    skipSpaces();
    return rest_;
  }
  bool empty() {
    skipSpaces();
    return rest_.empty();
  }

 private:
  void skipSpaces() {
    while (!rest_.empty() && (rest_.front() == ' ' || rest_.front() == '\t')) rest_.remove_prefix(1);
  }
  std::string_view rest_;
};

template <typename T>
bool parseNumber(std::string_view text, int base, T& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out, base);
  return ec == std::errc() && ptr == end;
}

bool isHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::string quoted(std::string_view text) {
  constexpr size_t kShown = 40;
  std::string out = "'";
  out.append(text.substr(0, kShown));
  if (text.size() > kShown) out += "…";
  out += "'";
  return out;
}

}  // namespace

Expected<ModuleRecord> parseModuleLine(std::string_view line) {
  if (line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  Fields fields(line);
  if (fields.next() != "MODULE") return malformed("expected 'MODULE <os> <arch> <id> <name>' as the first line");
  ModuleRecord module;
  module.os = fields.next();
  module.arch = fields.next();
  module.id = fields.next();
  module.name = fields.rest();
  if (module.os.empty() || module.arch.empty() || module.id.empty() || module.name.empty()) {
    return malformed("MODULE: expected '<os> <arch> <id> <name>'");
  }
  for (char c : module.id) {
    if (!isHexDigit(c)) return malformed("MODULE: the id " + quoted(module.id) + " is not hexadecimal");
  }
  return module;
}

bool looksLikeSymFile(std::string_view head) {
  size_t end = head.find('\n');
  return static_cast<bool>(parseModuleLine(head.substr(0, end)));
}

Expected<SymReader> SymReader::open(const std::string& path, std::string display_name) {
  auto mapped = MappedFile::open(path);
  if (!mapped) return mapped.error();
  SymReader reader;
  reader.display_name_ = display_name.empty() ? path : std::move(display_name);
  reader.file_.push_back(std::move(*mapped));
  reader.text_ = reader.file_.front().bytes();
  return reader;
}

SymReader SymReader::fromBytes(std::string_view bytes, std::string display_name) {
  SymReader reader;
  reader.display_name_ = std::move(display_name);
  reader.text_ = bytes;
  return reader;
}

Error SymReader::error(std::string_view record, const std::string& message) const {
  std::string text = display_name_ + " line " + std::to_string(line_number_) + ": ";
  if (!record.empty()) {
    text.append(record);
    text += ": ";
  }
  return malformed(text + message);
}

Expected<Record> SymReader::next() {
  while (position_ < text_.size()) {
    size_t end = text_.find('\n', position_);
    if (end == std::string_view::npos) end = text_.size();
    std::string_view line = text_.substr(position_, end - position_);
    position_ = end < text_.size() ? end + 1 : end;
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number_ == 1 && line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    auto record = parseLine(line);
    if (!record) return record;
    if (!std::holds_alternative<EndOfFile>(*record)) return record;
    // EndOfFile from parseLine means "skipped record".
  }
  return Record(EndOfFile{});
}

Expected<Record> SymReader::parseLine(std::string_view line) {
  Fields fields(line);
  std::string_view keyword = fields.next();
  auto hex = [&](std::string_view record, std::string_view what, uint64_t& out) -> Status {
    std::string_view field = fields.next();
    if (!parseNumber(field, 16, out)) {
      return error(record, "expected a hexadecimal " + std::string(what) + ", got " + quoted(field));
    }
    return Status::ok();
  };
  auto decimal = [&](std::string_view record, std::string_view what, auto& out) -> Status {
    std::string_view field = fields.next();
    if (!parseNumber(field, 10, out)) {
      return error(record, "expected a decimal " + std::string(what) + ", got " + quoted(field));
    }
    return Status::ok();
  };
  auto flag = [&]() {
    // "FUNC m …" / "PUBLIC m …": the flag is a lone "m" before the address.
    Fields probe = fields;
    if (probe.next() == "m") {
      fields = probe;
      return true;
    }
    return false;
  };

  if (keyword == "MODULE") {
    if (line_number_ != 1) return error("MODULE", "only the first line may be a MODULE record");
    auto module = parseModuleLine(line);
    if (!module) return error("", module.error().message());
    return Record(*module);
  }
  if (keyword == "INFO") {
    if (fields.next() != "CODE_ID") return Record(EndOfFile{});  // GENERATOR, URL, …: not needed
    CodeIdRecord code;
    code.code_id = fields.next();
    code.code_file = fields.rest();
    if (code.code_id.empty()) return error("INFO CODE_ID", "the code id is missing");
    for (char c : code.code_id) {
      if (!isHexDigit(c)) return error("INFO CODE_ID", "the code id " + quoted(code.code_id) + " is not hexadecimal");
    }
    return Record(code);
  }
  if (keyword == "STACK") return Record(EndOfFile{});  // unwind data: not used for symbols
  if (keyword == "FILE") {
    FileRecord file;
    RESTACK_RETURN_IF_ERROR(decimal("FILE", "file number", file.number));
    file.name = fields.rest();
    return Record(file);
  }
  if (keyword == "INLINE_ORIGIN") {
    InlineOriginRecord origin;
    RESTACK_RETURN_IF_ERROR(decimal("INLINE_ORIGIN", "origin number", origin.number));
    origin.name = fields.rest();
    return Record(origin);
  }
  if (keyword == "FUNC") {
    FuncRecord func;
    func.multiple = flag();
    RESTACK_RETURN_IF_ERROR(hex("FUNC", "address", func.address));
    RESTACK_RETURN_IF_ERROR(hex("FUNC", "size", func.size));
    RESTACK_RETURN_IF_ERROR(hex("FUNC", "parameter size", func.parameter_size));
    func.name = fields.rest();
    if (func.size > std::numeric_limits<uint64_t>::max() - func.address) {
      return error("FUNC", "address + size overflows 64 bits");
    }
    return Record(func);
  }
  if (keyword == "INLINE") {
    InlineRecord inlined;
    RESTACK_RETURN_IF_ERROR(decimal("INLINE", "nesting depth", inlined.depth));
    RESTACK_RETURN_IF_ERROR(decimal("INLINE", "call line", inlined.call_line));
    RESTACK_RETURN_IF_ERROR(decimal("INLINE", "call file number", inlined.call_file));
    RESTACK_RETURN_IF_ERROR(decimal("INLINE", "origin number", inlined.origin));
    ranges_.clear();
    while (!fields.empty()) {
      AddressRange range;
      RESTACK_RETURN_IF_ERROR(hex("INLINE", "range address", range.address));
      RESTACK_RETURN_IF_ERROR(hex("INLINE", "range size", range.size));
      if (range.size > std::numeric_limits<uint64_t>::max() - range.address) {
        return error("INLINE", "address + size overflows 64 bits");
      }
      ranges_.push_back(range);
    }
    if (ranges_.empty()) return error("INLINE", "expected at least one '<address> <size>' range");
    inlined.ranges = ranges_;
    return Record(inlined);
  }
  if (keyword == "PUBLIC") {
    PublicRecord symbol;
    symbol.multiple = flag();
    RESTACK_RETURN_IF_ERROR(hex("PUBLIC", "address", symbol.address));
    RESTACK_RETURN_IF_ERROR(hex("PUBLIC", "parameter size", symbol.parameter_size));
    symbol.name = fields.rest();
    return Record(symbol);
  }
  if (std::all_of(keyword.begin(), keyword.end(), isHexDigit)) {  // keyword is never empty here
    LineRecord record;
    fields = Fields(line);
    RESTACK_RETURN_IF_ERROR(hex("line record", "address", record.address));
    RESTACK_RETURN_IF_ERROR(hex("line record", "size", record.size));
    // Some producers write line numbers of compiler-generated code as negative numbers; they
    // mean "no line", as 0 does.
    std::string_view line_field = fields.next();
    int64_t line_number = 0;
    if (!parseNumber(line_field, 10, line_number)) {
      return error("line record", "expected a decimal line number, got " + quoted(line_field));
    }
    record.line =
        line_number < 0 || line_number > std::numeric_limits<uint32_t>::max() ? 0 : static_cast<uint32_t>(line_number);
    RESTACK_RETURN_IF_ERROR(decimal("line record", "file number", record.file));
    if (!fields.empty()) return error("line record", "unexpected text after the file number");
    if (record.size > std::numeric_limits<uint64_t>::max() - record.address) {
      return error("line record", "address + size overflows 64 bits");
    }
    return Record(record);
  }
  return error("", "unknown record " + quoted(keyword) +
                       " (expected MODULE, INFO, FILE, INLINE_ORIGIN, FUNC, INLINE, PUBLIC, STACK or a line record)");
}

}  // namespace restack::breakpad
