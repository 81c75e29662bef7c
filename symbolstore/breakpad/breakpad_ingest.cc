// Writer of Breakpad .sym uploads into the native column family (mapping in breakpad_ingest.h).
#include "symbolstore/breakpad/breakpad_ingest.h"

#include <algorithm>
#include <new>
#include <optional>
#include <unordered_map>

#include "formats/breakpad/sym_reader.h"
#include "formats/native/native_object.h"
#include "symbolstore/breakpad/sym_function.h"
#include "symbolstore/native/native_records.h"
#include "symbolstore/native/native_writer.h"

namespace restack {
namespace {

using namespace native_store;
using breakpad::SymReader;
using breakpad_store::SymFunction;
using native::ObjectFormat;

constexpr uint64_t kProgressEvery = 4u << 20;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

// The GUID form of 16 bytes: fields u32, u16, u16 byte-swapped (its own inverse).
std::string swapGuid(std::string_view hex32) {
  std::string out;
  for (size_t i : {3, 2, 1, 0, 5, 4, 7, 6}) out.append(hex32.substr(2 * i, 2));
  out.append(hex32.substr(16));
  return out;
}

struct Identity {
  ObjectFormat format = ObjectFormat::kElf;
  std::string hex;  // canonical id, lowercase
  std::vector<std::string> aliases;
};

Expected<Identity> identify(const breakpad::ModuleRecord& module, std::optional<std::string_view> code_id,
                            std::vector<std::string>& warnings, const std::string& name) {
  const std::string os = lower(module.os);
  const std::string module_id = lower(module.id);
  if (module_id.size() < 32) {
    return malformed(name + ": MODULE id '" + std::string(module.id) +
                     "' is shorter than 32 hex digits (16 bytes and an age)");
  }
  const std::string first16 = module_id.substr(0, 32);
  const bool aged = module_id.size() != 33 || module_id.back() != '0';
  Identity identity;
  if (os == "linux" || os == "android") {
    identity.format = ObjectFormat::kElf;
    if (code_id && code_id->size() % 2 == 0) {
      identity.hex = lower(*code_id);
      std::string prefix = identity.hex.substr(0, std::min<size_t>(identity.hex.size(), 32));
      prefix.resize(32, '0');
      if (swapGuid(prefix) != first16) {
        warnings.push_back(name + ": INFO CODE_ID " + std::string(*code_id) + " does not match MODULE id " +
                           std::string(module.id) + "; frames are matched by the code id (the GNU build id)");
      }
    } else {
      if (code_id) warnings.push_back(name + ": INFO CODE_ID has an odd number of hex digits; ignored");
      identity.hex = swapGuid(first16);
      warnings.push_back(name + ": no INFO CODE_ID, so the full GNU build id is unknown: frames must name " +
                         identity.hex + " (its first 16 bytes) or the Breakpad id " + module_id);
    }
  } else if (os == "mac" || os == "ios" || os == "macos") {
    identity.format = ObjectFormat::kMachO;
    identity.hex = first16;
  } else if (os == "windows") {
    return unsupported(name + ": Windows (PDB) symbol files are not supported: native symbols are ELF and Mach-O");
  } else {
    return unsupported(name + ": MODULE os '" + std::string(module.os) +
                       "' is not supported (expected Linux, Android, mac or iOS)");
  }
  identity.aliases = native::debugIdAliases(identity.format, identity.hex);
  if (aged && module_id != identity.hex &&
      std::find(identity.aliases.begin(), identity.aliases.end(), module_id) == identity.aliases.end()) {
    identity.aliases.push_back(module_id);
  }
  return identity;
}

struct PublicSymbol {
  uint64_t address;
  size_t order;  // position in the file: the first PUBLIC of an address names it
  std::string_view name;
};

class Ingest {
 public:
  Ingest(SymbolStore& store, const UploadMeta& meta, const IngestOptions& options, IngestReport& report,
         SymReader& reader)
      : store_(store), meta_(meta), options_(options), report_(report), reader_(reader), writer_(store, report) {}

  Status run() {
    auto first = reader_.next();
    if (!first) return first.error();
    const auto* module = std::get_if<breakpad::ModuleRecord>(&*first);
    if (!module) {
      return malformed(reader_.displayName() +
                       ": not a Breakpad symbol file: the first line must be 'MODULE <os> <arch> <id> <name>'");
    }
    module_ = *module;
    // The header: INFO CODE_ID records right after MODULE decide the image id, which every
    // record key holds.
    std::optional<std::string_view> code_id;
    bool started = false;
    for (;;) {
      auto record = reader_.next();
      if (!record) return record.error();
      if (!started) {
        if (const auto* code = std::get_if<breakpad::CodeIdRecord>(&*record)) {
          code_id = code->code_id;
          continue;
        }
        RESTACK_RETURN_IF_ERROR(start(code_id));
        started = true;
      }
      RESTACK_RETURN_IF_ERROR(handle(*record));
      if (std::holds_alternative<breakpad::EndOfFile>(*record)) break;
    }
    return Status::ok();
  }

 private:
  Status start(std::optional<std::string_view> code_id) {
    auto identity = identify(module_, code_id, report_.warnings, reader_.displayName());
    if (!identity) return identity.error();
    identity_ = std::move(*identity);
    id_ = hexToBytes(identity_.hex);
    if (id_.empty()) return malformed(reader_.displayName() + ": the image id is not hex");
    strings_.emplace(writer_, id_);
    auto existing_value = store_.get(native_store::kNativeFamily, imageKey(id_));
    if (!existing_value) return existing_value.error();
    if (existing_value->has_value()) {
      auto decoded = decodeImage(**existing_value);
      if (decoded) existing_ = std::move(*decoded);  // a corrupt record is simply replaced
    }
    image_.format = identity_.format;
    image_.arch = std::string(module_.arch);
    image_.module = std::string(module_.name);
    image_.image_base = 0;
    image_.shared = meta_.shared;
    image_.app = meta_.app;
    image_.build_id = meta_.build_id;
    if (existing_) {
      image_.has_dwarf = existing_->has_dwarf;
      image_.functions = existing_->functions;
      image_.strings = existing_->strings;
      image_.has_symbols = existing_->has_symbols;
      image_.symbols = existing_->symbols;
      image_.has_objc = existing_->has_objc;
      image_.symbols_from_debug_file = existing_->symbols_from_debug_file;
    }
    return Status::ok();
  }

  Status handle(const breakpad::Record& record) {
    if (reader_.bytesRead() >= next_progress_) {
      if (options_.progress) options_.progress(reader_.bytesRead(), reader_.size(), "breakpad " + image_.module);
      next_progress_ = reader_.bytesRead() + kProgressEvery;
      if (ingestStopped(options_)) return ingestStoppedError();
    }
    return std::visit([this](const auto& r) { return on(r); }, record);
  }

  Status on(const breakpad::EndOfFile&) {
    RESTACK_RETURN_IF_ERROR(finishFunction());
    RESTACK_RETURN_IF_ERROR(strings_->flush());
    if (functions_ > 0) {
      image_.has_dwarf = true;
      image_.functions = functions_;
      image_.strings = strings_->count();
    }
    RESTACK_RETURN_IF_ERROR(writeSymbols());
    reportIssues();
    if (!image_.has_dwarf && !image_.has_symbols) {
      report_.warnings.push_back(reader_.displayName() + ": has neither FUNC nor PUBLIC records; frames of " +
                                 image_.module + " cannot be restored");
    }
    RESTACK_RETURN_IF_ERROR(writeIndexes());
    RESTACK_RETURN_IF_ERROR(writer_.put(imageKey(id_), encodeImage(image_)));
    RESTACK_RETURN_IF_ERROR(writer_.flush());
    if (options_.progress) options_.progress(reader_.size(), reader_.size(), "breakpad " + image_.module);
    report_.ids.push_back(identity_.hex);
    // SymbolKind names image formats: the one this .sym file describes.
    report_.kind = identity_.format == ObjectFormat::kMachO ? SymbolKind::kMachO : SymbolKind::kElf;
    return Status::ok();
  }
  Status on(const breakpad::ModuleRecord&) { return Status::ok(); }  // the reader allows one, first
  Status on(const breakpad::CodeIdRecord&) {
    ++late_code_ids_;
    return Status::ok();
  }
  Status on(const breakpad::FileRecord& file) {
    files_[file.number] = {file.name, kNoString};
    return Status::ok();
  }
  Status on(const breakpad::InlineOriginRecord& origin) {
    origins_[origin.number] = {origin.name, kNoString};
    return Status::ok();
  }
  Status on(const breakpad::FuncRecord& func) {
    RESTACK_RETURN_IF_ERROR(finishFunction());
    if (func.size == 0) return Status::ok();
    if (func.address < last_end_ && func.address + func.size > last_begin_) {
      ++overlapping_functions_;  // identical code folding or a producer bug: the first FUNC answers
      return Status::ok();
    }
    if (functions_ == 0) {
      // This upload carries the image's DWARF tier: it replaces any stored one.
      RESTACK_RETURN_IF_ERROR(writer_.deleteRange(recordsBegin('F', id_), recordsEnd('F', id_)));
      RESTACK_RETURN_IF_ERROR(writer_.deleteRange(recordsBegin('T', id_), recordsEnd('T', id_)));
    }
    open_ = true;
    function_.begin = func.address;
    function_.end = func.address + func.size;
    function_.name = func.name;
    function_.lines.clear();
    function_.inlines.clear();
    return Status::ok();
  }
  Status on(const breakpad::InlineRecord& inlined) {
    if (!open_) {
      ++stray_records_;
      return Status::ok();
    }
    function_.inlines.push_back({inlined.depth, inlined.call_line, inlined.call_file, inlined.origin,
                                 std::vector<breakpad::AddressRange>(inlined.ranges.begin(), inlined.ranges.end())});
    return Status::ok();
  }
  Status on(const breakpad::LineRecord& line) {
    if (!open_) {
      ++stray_records_;
      return Status::ok();
    }
    function_.lines.push_back(line);
    return Status::ok();
  }
  Status on(const breakpad::PublicRecord& symbol) {
    RESTACK_RETURN_IF_ERROR(finishFunction());
    publics_.push_back({symbol.address, publics_.size(), symbol.name});
    return Status::ok();
  }

  struct NamedSlot {
    std::string_view text;
    uint32_t id = kNoString;
  };

  Expected<uint32_t> slotId(std::unordered_map<uint64_t, NamedSlot>& slots, uint64_t number, uint64_t& unknown,
                            bool demangle) {
    auto found = slots.find(number);
    if (found == slots.end()) {
      ++unknown;
      return kNoString;
    }
    if (found->second.id == kNoString) {
      auto id = strings_->intern(demangle ? breakpad_store::llvmStyleName(found->second.text)
                                          : std::string(found->second.text));
      if (!id) return id;
      found->second.id = *id;
    }
    return found->second.id;
  }

  Status finishFunction() {
    if (!open_) return Status::ok();
    open_ = false;
    breakpad_store::SymStringIds ids;
    ids.name = [this](std::string_view name) -> Expected<uint32_t> {
      if (name.empty()) return kNoString;
      return strings_->intern(breakpad_store::llvmStyleName(name));
    };
    ids.file = [this](uint64_t number) { return slotId(files_, number, unknown_files_, false); };
    ids.origin = [this](uint64_t number) { return slotId(origins_, number, unknown_origins_, true); };
    auto record = breakpad_store::buildFunctionRecord(function_, ids, issues_);
    if (!record) return record.error().withContext(reader_.displayName());
    RESTACK_RETURN_IF_ERROR(writer_.put(functionKey(id_, record->begin), encodeFunction(*record)));
    ++functions_;
    last_begin_ = function_.begin;
    last_end_ = function_.end;
    return Status::ok();
  }

  Status writeSymbols() {
    if (publics_.empty()) return Status::ok();
    std::sort(publics_.begin(), publics_.end(), [](const PublicSymbol& a, const PublicSymbol& b) {
      return std::pair(a.address, a.order) < std::pair(b.address, b.order);
    });
    publics_.erase(std::unique(publics_.begin(), publics_.end(),
                               [](const PublicSymbol& a, const PublicSymbol& b) { return a.address == b.address; }),
                   publics_.end());
    if (existing_ && existing_->has_symbols && !existing_->symbols_from_debug_file &&
        existing_->symbols > publics_.size()) {
      report_.warnings.push_back(reader_.displayName() + ": kept the larger symbol table stored earlier for " +
                                 identity_.hex);
      return Status::ok();
    }
    RESTACK_RETURN_IF_ERROR(writer_.deleteRange(recordsBegin('S', id_), recordsEnd('S', id_)));
    for (size_t first = 0; first < publics_.size(); first += kSymbolsPerChunk) {
      size_t last = std::min(publics_.size(), first + kSymbolsPerChunk);
      SymbolChunk chunk;
      chunk.begin = publics_[first].address;
      chunk.next_chunk = last < publics_.size() ? publics_[last].address : 0;
      for (size_t i = first; i < last; ++i) {
        chunk.symbols.push_back({publics_[i].address, 0, 0, breakpad_store::llvmStyleName(publics_[i].name), {}});
      }
      RESTACK_RETURN_IF_ERROR(writer_.put(symbolKey(id_, chunk.begin), encodeSymbolChunk(chunk)));
    }
    image_.has_symbols = true;
    image_.symbols = publics_.size();
    image_.has_objc = false;
    image_.symbols_from_debug_file = false;
    return Status::ok();
  }

  void reportIssues() {
    const std::string& name = reader_.displayName();
    auto note = [&](uint64_t count, const std::string& what) {
      if (count > 0) report_.warnings.push_back(name + ": " + std::to_string(count) + " " + what);
    };
    note(overlapping_functions_, "FUNC records overlap an earlier FUNC and were skipped");
    note(stray_records_, "line or INLINE records outside any FUNC were skipped");
    note(unknown_files_, "references to FILE numbers the file does not define (no file name given)");
    note(unknown_origins_, "references to INLINE_ORIGIN numbers the file does not define (no name given)");
    note(issues_.orphan_inlines, "INLINE records have no enclosing caller one level up (attached to the FUNC)");
    note(issues_.clipped_ranges, "line or INLINE ranges reach outside their FUNC (clipped)");
    note(late_code_ids_, "INFO CODE_ID records after the header were ignored (the id is taken from the header)");
  }

  Status writeIndexes() {
    for (const std::string& alias : identity_.aliases) {
      RESTACK_RETURN_IF_ERROR(writer_.put(aliasKey(alias), encodeAlias(id_)));
    }
    std::string key =
        meta_.shared ? moduleKey("", "", image_.module) : moduleKey(meta_.app, meta_.build_id, image_.module);
    auto ids = idListWith(store_, key, id_);
    if (!ids) return ids.error();
    return writer_.put(key, *ids);
  }

  SymbolStore& store_;
  const UploadMeta& meta_;
  const IngestOptions& options_;
  IngestReport& report_;
  SymReader& reader_;
  NativeBatchWriter writer_;
  breakpad::ModuleRecord module_;
  Identity identity_;
  std::string id_;
  std::optional<ImageStringTable> strings_;
  std::optional<ImageRecord> existing_;
  ImageRecord image_;
  std::unordered_map<uint64_t, NamedSlot> files_;
  std::unordered_map<uint64_t, NamedSlot> origins_;
  std::vector<PublicSymbol> publics_;
  SymFunction function_;
  bool open_ = false;
  uint64_t functions_ = 0;
  uint64_t last_begin_ = 0;
  uint64_t last_end_ = 0;
  uint64_t next_progress_ = 0;
  uint64_t overlapping_functions_ = 0;
  uint64_t stray_records_ = 0;
  uint64_t unknown_files_ = 0;
  uint64_t unknown_origins_ = 0;
  uint64_t late_code_ids_ = 0;
  breakpad_store::SymFunctionIssues issues_;
};

Expected<IngestReport> ingestBreakpadUnchecked(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                               const IngestOptions& options) {
  const std::string name = !content.display_name.empty() ? content.display_name
                           : !content.path.empty()       ? content.path
                                                         : std::string("upload.sym");
  std::optional<SymReader> reader;
  if (content.path.empty()) {
    reader.emplace(SymReader::fromBytes(content.bytes, name));
  } else {
    auto opened = SymReader::open(content.path, name);
    if (!opened) return opened.error();
    reader.emplace(std::move(*opened));
  }
  IngestReport report;
  report.input_bytes = reader->size();
  if (report.input_bytes > options.max_input_bytes) {
    return tooLarge(name + ": " + std::to_string(report.input_bytes) + " bytes exceeds the ingest limit of " +
                    std::to_string(options.max_input_bytes) + " bytes");
  }
  Ingest ingest(store, meta, options, report, *reader);
  RESTACK_RETURN_IF_ERROR(ingest.run());
  return report;
}

}  // namespace

bool looksLikeBreakpad(std::string_view head) {
  return breakpad::looksLikeSymFile(head);
}

Expected<IngestReport> ingestBreakpad(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                      const IngestOptions& options) {
  try {
    return ingestBreakpadUnchecked(store, meta, content, options);
  } catch (const std::bad_alloc&) {
    return tooLarge(content.display_name + ": out of memory while ingesting the Breakpad symbol file");
  } catch (const std::exception& error) {
    return Error(ErrorCode::kInternal, content.display_name + ": " + error.what());
  }
}

}  // namespace restack
