// Writer of the native column family (layout in native_records.h): one upload -> its images.
//
// Streaming: DWARF is read one compile unit at a time (formats/native/dwarf_walker.h) and every
// unit's function records go to a NativeBatchWriter (native_writer.h), which writes them in
// bounded batches on a helper thread. What stays in memory for the whole image is the symbol table and the
// per-image string dictionary (unique demangled names and paths), not the DWARF.
#include <rocksdb/iterator.h>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "formats/native/demangle.h"
#include "formats/native/dwarf_walker.h"
#include "formats/native/native_object.h"
#include "formats/native/objc_metadata.h"
#include "formats/native/symbol_table.h"
#include "symbolstore/ingest.h"
#include "symbolstore/native/native_records.h"
#include "symbolstore/native/native_writer.h"

namespace restack {
namespace {

using native::ImageSlice;
using namespace native_store;

// The image's string table, and the demangled names of raw DWARF and symbol-table names.
class StringTable final : public ImageStringTable {
 public:
  using ImageStringTable::ImageStringTable;

  // Raw DWARF names: demangled once per distinct raw name.
  Expected<uint32_t> internName(std::string_view raw) {
    // Names of one image mostly point into its merged .debug_str, so the same name is the same
    // bytes: a lookup by address skips hashing long mangled names.
    auto by_address = raw_ids_by_address_.find({raw.data(), raw.size()});
    if (by_address != raw_ids_by_address_.end()) return by_address->second;
    auto found = raw_ids_.find(raw);
    uint32_t id;
    if (found != raw_ids_.end()) {
      id = found->second;
    } else {
      auto interned = intern(native::demangleName(raw));
      if (!interned) return interned;
      id = *interned;
      raw_ids_.emplace(raw, id);
    }
    raw_ids_by_address_.emplace(std::pair{raw.data(), raw.size()}, id);
    return id;
  }

 private:
  struct AddressHash {
    size_t operator()(const std::pair<const char*, size_t>& key) const {
      return std::hash<const char*>{}(key.first) ^ (key.second * 0x9e3779b97f4a7c15ull);
    }
  };
  // Keys point into the DWARF sections (the mapped file / the DWARF context) or the image's
  // symbol table, alive while the image's units are walked; the table does not outlive that walk.
  std::unordered_map<std::string_view, uint32_t> raw_ids_;
  std::unordered_map<std::pair<const char*, size_t>, uint32_t, AddressHash> raw_ids_by_address_;
};

// A line_only range (formats/native/dwarf_walker.h) cut where the symbol table's answer changes
// (a symbol starts or ends inside it), so that each piece's outermost name comes from the one
// symbol covering it, as llvm-symbolizer names such code; each piece keeps the line spans in
// effect over it. Pieces no symbol covers are left out: they are the padding after a function
// that ends in a call that does not return (GCC gives its first byte a line row), where
// llvm-symbolizer knows no function either and a return address never points.
std::vector<native::FunctionRanges> splitAtSymbols(const native::FunctionRanges& range,
                                                   const std::vector<native::SymbolEntry>& symbols) {
  std::vector<uint64_t> cuts;
  auto first = std::upper_bound(symbols.begin(), symbols.end(), range.begin,
                                [](uint64_t a, const native::SymbolEntry& e) { return a < e.address; });
  if (first != symbols.begin()) --first;
  for (auto it = first; it != symbols.end() && it->address < range.end; ++it) {
    if (it->address > range.begin) cuts.push_back(it->address);
    const uint64_t end = it->address + it->size;
    if (it->size != 0 && end > range.begin && end < range.end) cuts.push_back(end);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  cuts.push_back(range.end);
  std::vector<native::FunctionRanges> pieces;
  pieces.reserve(cuts.size());
  uint64_t begin = range.begin;
  size_t span = 0;  // the first span starting after `begin`
  for (uint64_t end : cuts) {
    if (native::findSymbol(symbols, begin) == nullptr) {
      begin = end;
      continue;
    }
    native::FunctionRanges& piece = pieces.emplace_back();
    piece.begin = begin;
    piece.end = end;
    piece.line_only = true;
    piece.nodes = range.nodes;
    piece.tiles.push_back({begin, 0});
    while (span < range.lines.size() && range.lines[span].begin <= begin) ++span;
    if (span > 0)
      piece.lines.push_back(
          {begin, range.lines[span - 1].file, range.lines[span - 1].line, range.lines[span - 1].column});
    for (size_t i = span; i < range.lines.size() && range.lines[i].begin < end; ++i)
      piece.lines.push_back(range.lines[i]);
    begin = end;
  }
  return pieces;
}

class SliceIngest {
 public:
  SliceIngest(SymbolStore& store, const UploadMeta& meta, const IngestOptions& options, IngestReport& report,
              const ImageSlice& slice)
      : store_(store),
        meta_(meta),
        options_(options),
        report_(report),
        slice_(slice),
        writer_(store, report),
        id_(hexToBytes(slice.debug_id)) {}

  Status run() {
    if (id_.empty()) return malformed(slice_.source + ": debug id is not hex");
    auto existing_value = store_.get(native_store::kNativeFamily, imageKey(id_));
    if (!existing_value) return existing_value.error();
    std::optional<ImageRecord> existing;
    if (existing_value->has_value()) {
      auto decoded = decodeImage(**existing_value);
      if (decoded) existing = std::move(*decoded);  // a corrupt record is simply replaced
    }
    image_.format = slice_.format;
    image_.arch = slice_.arch;
    image_.module = slice_.module;
    image_.image_base = slice_.image_base;
    image_.shared = meta_.shared;
    image_.app = meta_.app;
    image_.build_id = meta_.build_id;
    if (existing) {
      // Merge with what earlier uploads of this debug id stored (see native_records.h).
      image_.has_dwarf = existing->has_dwarf;
      image_.functions = existing->functions;
      image_.strings = existing->strings;
      image_.has_symbols = existing->has_symbols;
      image_.symbols = existing->symbols;
      image_.has_objc = existing->has_objc;
      image_.symbols_from_debug_file = existing->symbols_from_debug_file;
    }

    RESTACK_RETURN_IF_ERROR(ingestSymbols(existing));
    if (slice_.has_dwarf) RESTACK_RETURN_IF_ERROR(ingestDwarf());
    if (!image_.has_dwarf && !image_.has_symbols) {
      report_.warnings.push_back(slice_.source +
                                 ": has neither DWARF nor a symbol table; frames "
                                 "of " +
                                 slice_.module + " cannot be restored");
    }
    RESTACK_RETURN_IF_ERROR(writeIndexes());
    RESTACK_RETURN_IF_ERROR(writer_.put(imageKey(id_), encodeImage(image_)));
    RESTACK_RETURN_IF_ERROR(writer_.flush());
    report_.ids.push_back(slice_.debug_id);
    return Status::ok();
  }

 private:
  void progress(uint64_t done, uint64_t total, const std::string& stage) {
    if (options_.progress) options_.progress(done, total, stage);
  }

  Status ingestSymbols(const std::optional<ImageRecord>& existing) {
    // A detached debug file answers as llvm-symbolizer does for the stripped library it belongs
    // to: with the symbols that library lists (its .dynsym), the DWARF for everything else. Its
    // full .symtab still tells which functions are compiler clones.
    const bool debug_file = native::isDetachedDebugFile(slice_);
    auto symbols = native::readSymbolTable(slice_);
    if (!symbols) return symbols.error();
    full_symbols_ = std::move(*symbols);
    if (debug_file) {
      if (existing && existing->has_symbols && !existing->symbols_from_debug_file) {
        // The library itself was uploaded first: its table names the outermost frames.
        return loadStoredSymbols();
      }
      auto dynamic = native::readSymbolTable(slice_, /*dynamic_only=*/true);
      if (!dynamic) return dynamic.error();
      symbols_ = std::move(*dynamic);
    } else {
      symbols_ = full_symbols_;
    }
    std::vector<native::SymbolEntry> methods = native::readObjcMethods(slice_);
    bool has_objc = !methods.empty();
    std::vector<native::SymbolEntry> merged = native::mergeObjcMethods(symbols_, std::move(methods));
    if (merged.empty()) return Status::ok();
    bool keep_stored = existing && existing->has_symbols &&
                       (debug_file ? !existing->symbols_from_debug_file
                                   : !existing->symbols_from_debug_file && existing->symbols > merged.size());
    if (keep_stored) {
      report_.warnings.push_back(slice_.source +
                                 ": kept the larger symbol table stored earlier "
                                 "for " +
                                 slice_.debug_id);
      return Status::ok();
    }
    RESTACK_RETURN_IF_ERROR(writer_.deleteRange(recordsBegin('S', id_), recordsEnd('S', id_)));
    for (size_t first = 0; first < merged.size(); first += kSymbolsPerChunk) {
      size_t last = std::min(merged.size(), first + kSymbolsPerChunk);
      SymbolChunk chunk;
      chunk.begin = merged[first].address;
      chunk.next_chunk = last < merged.size() ? merged[last].address : 0;
      for (size_t i = first; i < last; ++i) {
        chunk.symbols.push_back({merged[i].address, merged[i].size, static_cast<uint8_t>(merged[i].source),
                                 native::demangleName(merged[i].name), merged[i].file});
      }
      RESTACK_RETURN_IF_ERROR(writer_.put(symbolKey(id_, chunk.begin), encodeSymbolChunk(chunk)));
    }
    image_.has_symbols = true;
    image_.symbols = merged.size();
    image_.has_objc = has_objc;
    image_.symbols_from_debug_file = debug_file;
    return Status::ok();
  }

  // Reads the stored symbol tier back (names already demangled) for naming outermost frames.
  Status loadStoredSymbols() {
    std::unique_ptr<rocksdb::Iterator> it(
        store_.db().NewIterator(rocksdb::ReadOptions(), store_.family(native_store::kNativeFamily)));
    const std::string end = recordsEnd('S', id_);
    for (it->Seek(recordsBegin('S', id_)); it->Valid() && it->key().ToStringView() < end; it->Next()) {
      auto begin = addressOfKey('S', id_, it->key().ToStringView());
      if (!begin) continue;
      auto chunk = decodeSymbolChunk(*begin, it->value().ToStringView());
      if (!chunk) continue;  // a corrupt chunk names nothing; DWARF still answers
      for (StoredSymbol& symbol : chunk->symbols) {
        symbols_.push_back(
            {symbol.begin, symbol.size, std::move(symbol.name), native::SymbolSource::kSymtab, std::move(symbol.file)});
      }
    }
    if (!it->status().ok()) {
      return ioError("symbol store: reading the stored symbols of " + slice_.debug_id +
                     " failed: " + it->status().ToString());
    }
    symbols_demangled_ = true;
    return Status::ok();
  }

  Status ingestDwarf() {
    RESTACK_RETURN_IF_ERROR(writer_.deleteRange(recordsBegin('F', id_), recordsEnd('F', id_)));
    RESTACK_RETURN_IF_ERROR(writer_.deleteRange(recordsBegin('T', id_), recordsEnd('T', id_)));
    StringTable strings(writer_, id_);
    uint64_t functions = 0;
    // Write-time transforms (native_records.h): the ones with something for this image.
    std::vector<std::pair<const NativeRecordTransform*, std::unique_ptr<FunctionRewriter>>> rewriters;
    for (const NativeRecordTransform* transform : options_.native_transforms) {
      auto rewriter = transform->forImage(store_, slice_.debug_id, image_);
      if (!rewriter) return rewriter.error().withContext(std::string(transform->name())).withContext(slice_.source);
      if (*rewriter) rewriters.emplace_back(transform, std::move(*rewriter));
    }
    native::DwarfWalkOptions walk;
    walk.warnings = &report_.warnings;
    // Inflated debug sections live in memory next to the mapped file: they get what
    // limits.max_upload_bytes leaves after it, and the configured ratio.
    const uint64_t budget =
        options_.max_input_bytes > report_.input_bytes ? options_.max_input_bytes - report_.input_bytes : 0;
    walk.max_uncompressed_section_bytes = std::min(walk.max_uncompressed_section_bytes, budget);
    walk.max_compression_ratio = options_.max_decompression_ratio;
    std::string stage = "dwarf " + slice_.module + " (" + slice_.arch + ")";
    walk.progress = [this, &stage](uint64_t done, uint64_t total) { progress(done, total, stage); };
    std::vector<uint32_t> file_ids;
    Status status = native::walkDwarf(slice_, walk, [&](const native::CompileUnitFunctions& unit) -> Status {
      if (ingestStopped(options_)) return ingestStoppedError();
      // Files are interned lazily: a unit's table lists many headers no function uses.
      file_ids.assign(unit.files.size(), kNoString);
      auto fileId = [&](uint32_t index) -> Expected<uint32_t> {
        if (index == native::kNoFile || index >= unit.files.size()) return kNoString;
        if (file_ids[index] == kNoString) {
          auto id = strings.intern(unit.files[index]);
          if (!id) return id;
          file_ids[index] = *id;
        }
        return file_ids[index];
      };
      auto writeFunction = [&](const native::FunctionRanges& function) -> Status {
        FunctionRecord record;
        record.begin = function.begin;
        record.end = function.end;
        record.nodes.reserve(function.nodes.size());
        for (const native::InlineNode& node : function.nodes) {
          StoredNode stored;
          stored.parent = node.parent;
          if (!node.name.empty()) {
            auto name = strings.internName(node.name);
            if (!name) return name.status();
            stored.name = *name;
          }
          if (!node.scope.empty()) {
            auto scope = strings.internName(node.scope);
            if (!scope) return scope.status();
            stored.scope = *scope;
          }
          auto call_file = fileId(node.call_file);
          if (!call_file) return call_file.status();
          stored.call_file = *call_file;
          stored.call_line = node.call_line;
          stored.call_column = node.call_column;
          record.nodes.push_back(stored);
        }
        // llvm-symbolizer names the outermost frame from the symbol table when one covers it,
        // except that a compiler clone ("f.isra.0" for DWARF's "f") keeps the DWARF name, as
        // llvm-symbolizer prints it for a stripped library with its debug file; the clone kind
        // is kept beside it.
        std::string_view clone;
        if (const native::SymbolEntry* symbol = native::findSymbol(full_symbols_, function.begin)) {
          clone = native::cloneSuffix(symbol->name, function.nodes[0].name);
        }
        if (!clone.empty()) {
          auto id = strings.intern(clone);
          if (!id) return id.status();
          record.clone = *id;
        } else if (const native::SymbolEntry* symbol = native::findSymbol(symbols_, function.begin)) {
          auto outer = symbols_demangled_ ? strings.intern(symbol->name) : strings.internName(symbol->name);
          if (!outer) return outer.status();
          if (*outer != record.nodes[0].name) record.outer_name = *outer;
        }
        for (const native::InlineTile& tile : function.tiles) {
          record.tiles.push_back({tile.begin, tile.node});
        }
        for (const native::LineSpan& span : function.lines) {
          auto file = fileId(span.file);
          if (!file) return file.status();
          record.lines.push_back({span.begin, *file, span.line, span.column});
        }
        for (auto& [transform, rewriter] : rewriters) {
          Status rewritten = rewriter->rewrite(record, strings);
          if (!rewritten) return rewritten.error().withContext(std::string(transform->name()));
          if (record.begin != function.begin || record.end != function.end) {
            return Error(ErrorCode::kInternal,
                         std::string(transform->name()) + " changed the address range of a function record");
          }
        }
        RESTACK_RETURN_IF_ERROR(writer_.put(functionKey(id_, record.begin), encodeFunction(record)));
        ++functions;
        return Status::ok();
      };
      for (const native::FunctionRanges& function : unit.functions) {
        if (!function.line_only) {
          RESTACK_RETURN_IF_ERROR(writeFunction(function));
          continue;
        }
        for (const native::FunctionRanges& piece : splitAtSymbols(function, symbols_)) {
          RESTACK_RETURN_IF_ERROR(writeFunction(piece));
        }
      }
      return Status::ok();
    });
    if (!status) return status.error().withContext(slice_.source);
    RESTACK_RETURN_IF_ERROR(strings.flush());
    image_.has_dwarf = functions > 0;
    image_.functions = functions;
    image_.strings = strings.count();
    if (functions == 0) {
      report_.warnings.push_back(slice_.source + ": DWARF describes no function with an address");
    }
    return Status::ok();
  }

  Status writeIndexes() {
    if (slice_.format == native::ObjectFormat::kElf || slice_.format == native::ObjectFormat::kMachO) {
      for (const std::string& alias : native::debugIdAliases(slice_.format, slice_.debug_id)) {
        RESTACK_RETURN_IF_ERROR(writer_.put(aliasKey(alias), encodeAlias(id_)));
      }
    }
    // (app, build, module) -> ids, for frames that print no debug id.
    std::string key =
        meta_.shared ? moduleKey("", "", slice_.module) : moduleKey(meta_.app, meta_.build_id, slice_.module);
    auto ids = idListWith(store_, key, id_);
    if (!ids) return ids.error();
    return writer_.put(key, *ids);
  }

  SymbolStore& store_;
  const UploadMeta& meta_;
  const IngestOptions& options_;
  IngestReport& report_;
  const ImageSlice& slice_;
  NativeBatchWriter writer_;
  std::string id_;
  ImageRecord image_;
  // Names the outermost frame (symtab override), as llvm-symbolizer's symbol table would.
  std::vector<native::SymbolEntry> symbols_;
  bool symbols_demangled_ = false;  // symbols_ came back from the store, demangled
  // The upload's whole symbol table: which functions are compiler clones.
  std::vector<native::SymbolEntry> full_symbols_;
};

}  // namespace

Expected<IngestReport> ingestNative(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                    const IngestOptions& options) {
  native::NativeOpenOptions open_options;
  open_options.display_name = content.display_name;
  open_options.dwp_path = content.dwp_path;
  auto file = content.path.empty() ? native::NativeFile::fromBytes(content.bytes, open_options)
                                   : native::NativeFile::open(content.path, open_options);
  if (!file) return file.error();
  IngestReport report;
  report.kind = meta.kind.value_or(SymbolKind::kElf);
  report.input_bytes = (*file)->inputBytes();
  if (!content.dwp_path.empty()) {
    std::error_code error;
    report.input_bytes += std::filesystem::file_size(content.dwp_path, error);
    if (error) return ioError("cannot read " + content.dwp_path + ": " + error.message());
  }
  if (report.input_bytes > options.max_input_bytes) {
    return tooLarge(content.display_name + ": " + std::to_string(report.input_bytes) +
                    " bytes exceeds the ingest limit of " + std::to_string(options.max_input_bytes) + " bytes");
  }
  for (const ImageSlice& slice : (*file)->slices()) {
    SliceIngest ingest(store, meta, options, report, slice);
    RESTACK_RETURN_IF_ERROR(ingest.run());
  }
  return report;
}

// Detectors of the native sources (registered in symbolstore/symbol_source.cc).
bool looksLikeDsymBundle(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_directory(fs::path(folder) / "Contents" / "Resources" / "DWARF", error)) return true;
  // A folder of bundles (Xcode's dSYMs folder, an unzipped App Store Connect download), at any
  // depth; NativeFile::open reads every bundle in it.
  for (fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, error), end;
       !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".dSYM" && fs::is_directory(it->path() / "Contents" / "Resources" / "DWARF", error)) {
      return true;
    }
  }
  return false;
}

bool looksLikeMachO(std::string_view head) {
  if (head.size() < 4) return false;
  const auto b = [&](size_t i) { return static_cast<uint8_t>(head[i]); };
  const uint32_t le = b(0) | (b(1) << 8) | (b(2) << 16) | (static_cast<uint32_t>(b(3)) << 24);
  const uint32_t be = (static_cast<uint32_t>(b(0)) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
  return le == 0xfeedface || le == 0xfeedfacf || be == 0xcafebabe || be == 0xcafebabf;
}

bool looksLikeElf(std::string_view head) {
  return head.starts_with(
      "\x7f"
      "ELF");
}

}  // namespace restack
