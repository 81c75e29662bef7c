#include "symbolstore/sourcemap/sourcemap_minified.h"

#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <unordered_map>
#include <vector>

#include "formats/common/archive.h"
#include "formats/common/mapped_file.h"
#include "formats/common/temp_dir.h"
#include "formats/sourcemap/function_scanner.h"
#include "formats/sourcemap/inline_map.h"
#include "formats/sourcemap/url.h"
#include "symbolstore/sourcemap/sourcemap_generation.h"
#include "symbolstore/sourcemap/sourcemap_records.h"

namespace restack {
namespace {

namespace fs = std::filesystem;
using namespace sourcemap_records;

constexpr uint32_t kMaxSectionDepth = 8;

// The map's named segments: generated position (positionKey) -> names entry.
struct NamedPositions {
  std::vector<std::string> names;
  std::vector<std::pair<uint64_t, uint32_t>> at;     // sorted by position
  std::vector<uint64_t> unmapped;                    // positions of segments without a source, sorted
  std::vector<std::pair<uint64_t, int32_t>> mapped;  // positions of segments with one and their source, sorted

  // True when (line, column) is code the bundler or minifier wrote: the segment covering it has no
  // source, or no segment of its line starts at or before it (webpack's runtime ahead of the
  // first module), or no segment starts at it and the segments around it come from different
  // sources or none follows (the glue between two modules or after the last: rollup's commonjs
  // wrapper "function requireMain () {…}" and its call have no mapping, so a minifier's chained
  // map covers them with the previous module's last segment).
  bool synthesized(uint32_t line, uint32_t column) const {
    const uint64_t wanted = key(line, column);
    const uint64_t line_start = key(line, 0);
    auto last_unmapped = std::upper_bound(unmapped.begin(), unmapped.end(), wanted);
    auto next_mapped = std::upper_bound(mapped.begin(), mapped.end(), std::make_pair(wanted, INT32_MAX));
    const bool mapped_on_line = next_mapped != mapped.begin() && std::prev(next_mapped)->first >= line_start;
    const bool unmapped_on_line = last_unmapped != unmapped.begin() && *std::prev(last_unmapped) >= line_start;
    if (!mapped_on_line) return unmapped_on_line || !mapped.empty();
    const auto& covering = *std::prev(next_mapped);
    if (unmapped_on_line && covering.first < *std::prev(last_unmapped)) return true;
    return covering.first != wanted && (next_mapped == mapped.end() || next_mapped->second != covering.second);
  }

  static uint64_t key(uint32_t line, uint32_t column) { return (static_cast<uint64_t>(line) << 32) | column; }
  const std::string* find(uint32_t line, uint32_t column) const {
    const uint64_t wanted = key(line, column);
    auto it = std::lower_bound(at.begin(), at.end(), std::make_pair(wanted, uint32_t{0}));
    return it != at.end() && it->first == wanted ? &names[it->second] : nullptr;
  }
};

Status readFailed(SymbolStore& store, const rocksdb::Status& status) {
  return ioError("symbol store " + store.options().path + ": read failed: " + status.ToString());
}

// webpack's module concatenation (scope hoisting) renames a module's top-level bindings that
// would clash in the one scope: `go` of src/router.js becomes `router_go`, else `src_router_go`
// (ConcatenatedModule's findNewName: trailing path parts of the module, extension and "/index"
// dropped, joined by '_' in front of the name, made an identifier). The map's `names` then hold
// the renamed binding; V8 printed the original one. `url` is the segment's source URL.
std::string withoutConcatenationPrefix(std::string name, std::string_view url) {
  if (!url.starts_with("webpack:")) return name;
  std::string_view path = url.substr(url.find(':') + 1);
  while (path.starts_with("/")) path.remove_prefix(1);
  if (const size_t slash = path.find('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);  // namespace
  if (const size_t query = path.find_first_of("?#"); query != std::string_view::npos) path = path.substr(0, query);
  if (const size_t dot = path.rfind('.');
      dot != std::string_view::npos && path.size() - dot <= 5 && path.find('/', dot) == std::string_view::npos) {
    path = path.substr(0, dot);
  }
  if (path.ends_with("/index")) path.remove_suffix(6);
  std::vector<std::string_view> parts;
  for (size_t at = 0; at <= path.size();) {
    size_t end = path.find('/', at);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(at, end - at);
    if (!part.empty() && part != "." && part != "..") parts.push_back(part);
    at = end + 1;
  }
  // The longest run of trailing parts whose identifier starts the name wins.
  std::string best;
  std::string joined;
  for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
    std::string piece;
    for (char c : *part) {
      const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '$';
      if (keep) {
        piece += c;
      } else if (piece.empty() || piece.back() != '_') {
        piece += '_';
      }
    }
    joined = piece + (joined.empty() ? "" : "_" + joined);
    std::string identifier =
        !joined.empty() && std::isdigit(static_cast<unsigned char>(joined[0])) ? "_" + joined : joined;
    if (name.size() > identifier.size() + 1 && name.starts_with(identifier) && name[identifier.size()] == '_') {
      best = name.substr(identifier.size() + 1);
    }
  }
  return best.empty() ? name : best;
}

// Every named segment of one regular (non-index) map, from its chunk records.
Status collectNames(SymbolStore& store, uint64_t map_id, NamedPositions& out) {
  std::unordered_map<int32_t, std::string> urls;  // source index -> its URL, as read
  auto urlOf = [&](int32_t source) -> Expected<std::string_view> {
    auto [it, inserted] = urls.try_emplace(source);
    if (inserted && source >= 0) {
      auto value = store.get(sourcemap_records::kSourcemapFamily, sourceKey(map_id, static_cast<uint32_t>(source)));
      if (!value) return value.error();
      if (value->has_value()) {
        auto record = decodeSource(**value);
        if (!record) return record.error();
        it->second = std::move(record->path);
      }
    }
    return std::string_view(it->second);
  };
  const std::string prefix = chunkPrefix(map_id);
  std::unique_ptr<rocksdb::Iterator> it(
      store.db().NewIterator(rocksdb::ReadOptions(), store.family(sourcemap_records::kSourcemapFamily)));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    uint32_t line = 0, column = 0;
    if (!parseChunkKey(it->key().ToStringView(), map_id, &line, &column)) continue;
    auto chunk = decodeChunk(it->value().ToStringView(), line, column);
    if (!chunk) return chunk.error();
    for (const Segment& segment : chunk->segments) {
      const uint64_t position = NamedPositions::key(segment.line, segment.column);
      auto url = urlOf(segment.source);
      if (!url) return url.error();
      // Rollup's commonjs plugin maps the code it writes around a CommonJS module (the entry's
      // "requireMain" call, export objects) to modules of its own, "main.js?commonjs-entry",
      // "…?commonjs-proxy", "…?commonjs-exports": no source file holds that code.
      if (segment.source < 0 || url->find("?commonjs-") != std::string_view::npos) {
        out.unmapped.push_back(position);
        continue;
      }
      out.mapped.emplace_back(position, segment.source);
      if (segment.name < 0 || static_cast<size_t>(segment.name) >= chunk->names.size()) continue;
      out.at.emplace_back(NamedPositions::key(segment.line, segment.column), static_cast<uint32_t>(out.names.size()));
      out.names.push_back(withoutConcatenationPrefix(chunk->names[segment.name], *url));
    }
  }
  if (!it->status().ok()) return readFailed(store, it->status());
  std::sort(out.at.begin(), out.at.end());
  std::sort(out.unmapped.begin(), out.unmapped.end());
  std::sort(out.mapped.begin(), out.mapped.end());
  return Status::ok();
}

// Scans the minified text with identifiers renamed through `names`.
sourcemap::FunctionMap nameScopes(std::string_view text, const NamedPositions& names) {
  const sourcemap::TokenRenamer rename = [&](uint32_t line, uint32_t column, std::string_view token) {
    const std::string* original = names.find(line - 1, column);
    if (original != nullptr && !original->empty()) return *original;
    return names.synthesized(line - 1, column) ? std::string() : std::string(token);
  };
  return sourcemap::inferFunctionMap(text, rename);
}

// The part of `functions` (positions in the whole file, lines 1-based) from (line, column)
// (0-based) on, moved to positions relative to that start, as an index-map section sees them.
sourcemap::FunctionMap shiftToSection(const sourcemap::FunctionMap& functions, uint32_t line, uint32_t column) {
  sourcemap::FunctionMap out;
  out.names = functions.names;
  out.inferred = functions.inferred;
  const uint32_t first_line = line + 1;
  for (const sourcemap::FunctionMapEntry& entry : functions.entries) {
    const bool before = entry.line < first_line || (entry.line == first_line && entry.column < column);
    if (before) {
      // The scope open at the section's start.
      out.entries.assign(1, {1, 0, entry.name});
      continue;
    }
    const uint32_t relative_line = entry.line - line;
    const uint32_t relative_column = entry.line == first_line ? entry.column - column : entry.column;
    if (!out.entries.empty() && out.entries.back().line == relative_line &&
        out.entries.back().column == relative_column) {
      out.entries.back().name = entry.name;
    } else {
      out.entries.push_back({relative_line, relative_column, entry.name});
    }
  }
  return out;
}

// True when the map's own "scopes" named its functions: a minified file adds nothing then.
bool namedByScopes(SymbolStore& store, uint64_t map_id) {
  auto value = store.get(sourcemap_records::kSourcemapFamily, generatedFunctionsKey(map_id));
  if (!value || !value->has_value()) return false;
  auto decoded = decodeGeneratedFunctions(**value);
  return decoded && decoded->origin == GeneratedFunctionsOrigin::kScopes;
}

// Writes map `map_id`'s 'f' record(s) from the minified text: one per regular map, so every
// inline section of an index map gets its own.
Status nameMap(SymbolStore& store, uint64_t map_id, std::string_view text, uint32_t depth, IngestReport& report,
               rocksdb::WriteBatch& batch) {
  auto header_value = store.get(sourcemap_records::kSourcemapFamily, headerKey(map_id));
  if (!header_value) return header_value.error();
  if (!header_value->has_value()) return Status::ok();
  auto header = decodeHeader(**header_value);
  if (!header) return header.error();
  if (header->hermes || header->ram_bundle) {
    report.warnings.push_back("the minified file " + header->file +
                              " is not scanned for function names: its map is a Hermes or RAM-bundle map");
    return Status::ok();
  }
  if (!header->index_map) {
    if (namedByScopes(store, map_id)) return Status::ok();
    NamedPositions names;
    RESTACK_RETURN_IF_ERROR(collectNames(store, map_id, names));
    const sourcemap::FunctionMap functions = nameScopes(text, names);
    batch.Put(store.family(sourcemap_records::kSourcemapFamily), generatedFunctionsKey(map_id),
              encodeGeneratedFunctions({GeneratedFunctionsOrigin::kMinifiedFile, functions}));
    ++report.records;
    return Status::ok();
  }
  if (depth >= kMaxSectionDepth) return Status::ok();
  // An index map: each inline section's names come from its own map, its scopes are the part
  // of the file from its offset on (code ends at the next section, so later scopes never match).
  for (const Section& section : header->sections) {
    if (!section.child) continue;
    auto child_header = store.get(sourcemap_records::kSourcemapFamily, headerKey(*section.child));
    if (!child_header) return child_header.error();
    if (!child_header->has_value()) continue;
    auto child = decodeHeader(**child_header);
    if (!child) return child.error();
    if (child->index_map || namedByScopes(store, *section.child)) continue;  // nested index maps: left unnamed
    NamedPositions names;
    RESTACK_RETURN_IF_ERROR(collectNames(store, *section.child, names));
    const auto shift = [&](uint64_t& position) {
      const uint32_t line = static_cast<uint32_t>(position >> 32);
      const uint32_t column = static_cast<uint32_t>(position & 0xffffffffu);
      position = NamedPositions::key(line + section.line, line == 0 ? column + section.column : column);
    };
    for (auto& entry : names.at) shift(entry.first);
    for (uint64_t& position : names.unmapped) shift(position);
    for (auto& entry : names.mapped) shift(entry.first);
    const sourcemap::FunctionMap functions = nameScopes(text, names);
    batch.Put(store.family(sourcemap_records::kSourcemapFamily), generatedFunctionsKey(*section.child),
              encodeGeneratedFunctions(
                  {GeneratedFunctionsOrigin::kMinifiedFile, shiftToSection(functions, section.line, section.column)}));
    ++report.records;
  }
  return Status::ok();
}

// The map ids the pointers of (app, build, name) lead to, build-specific first.
Expected<std::vector<uint64_t>> mapsServing(SymbolStore& store, std::string_view app, std::string_view build,
                                            std::string_view name) {
  std::vector<uint64_t> ids;
  for (std::string_view pointer_build : {build, std::string_view()}) {
    auto value = store.get(sourcemap_records::kSourcemapFamily, pointerKey(app, pointer_build, name));
    if (!value) return value.error();
    if (!value->has_value()) continue;
    auto id = decodePointer(**value);
    if (!id) return id.error();
    if (std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
    if (build.empty()) break;
  }
  return ids;
}

bool startsWithWord(std::string_view text, std::string_view word) {
  if (!text.starts_with(word)) return false;
  if (text.size() == word.size()) return true;
  const unsigned char next = static_cast<unsigned char>(text[word.size()]);
  return !(std::isalnum(next) || next == '_' || next == '$');
}

bool isJavaScriptFileName(std::string_view name) {
  for (std::string_view suffix : {".js", ".mjs", ".cjs", ".jsbundle", ".bundle"}) {
    if (name.ends_with(suffix)) return true;
  }
  return false;
}

IngestReport mergeReports(std::vector<IngestReport> reports) {
  IngestReport merged;
  merged.kind = SymbolKind::kSourcemap;
  for (IngestReport& report : reports) {
    merged.ids.insert(merged.ids.end(), report.ids.begin(), report.ids.end());
    merged.records += report.records;
    merged.input_bytes += report.input_bytes;
    merged.stored_bytes += report.stored_bytes;
    merged.warnings.insert(merged.warnings.end(), report.warnings.begin(), report.warnings.end());
  }
  return merged;
}

// A zip of source maps and the minified files they serve: maps first, so the minified files
// find them. nullopt when the archive holds anything else (a .dSYM bundle, one file).
std::optional<Expected<IngestReport>> ingestZip(SymbolStore& store, const UploadMeta& meta,
                                                const UploadContent& content, const IngestOptions& options) {
  UnpackLimits limits;
  limits.max_bytes = options.max_input_bytes;
  limits.max_ratio = options.max_decompression_ratio;
  auto dir = TempDir::create("restack-jszip-", options.scratch_dir);
  if (!dir) return Expected<IngestReport>(dir.error());
  Status extracted = extractZip(PackedInput{content.path, content.bytes}, dir->path(), limits);
  if (!extracted) return Expected<IngestReport>(extracted.error());
  std::vector<fs::path> maps, scripts;
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir->path(), error); !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    std::error_code type_error;
    const fs::file_status status = it->symlink_status(type_error);
    if (type_error || fs::is_directory(status)) {
      if (it->path().extension() == ".dSYM") return std::nullopt;
      continue;
    }
    const std::string file = it->path().filename().string();
    if (file.ends_with(".map")) {
      maps.push_back(it->path());
    } else if (isJavaScriptFileName(file)) {
      scripts.push_back(it->path());
    } else {
      return std::nullopt;
    }
  }
  if (error || maps.empty() || scripts.empty()) return std::nullopt;
  std::sort(maps.begin(), maps.end());
  std::sort(scripts.begin(), scripts.end());
  std::vector<IngestReport> reports;
  for (const std::vector<fs::path>* files : {&maps, &scripts}) {
    for (const fs::path& path : *files) {
      UploadMeta one = meta;
      // restack.name names the bundle only when the zip holds one map and one minified file;
      // otherwise each file serves the name its map's "file" field or its own file name says.
      if (maps.size() > 1 || scripts.size() > 1) one.name.clear();
      UploadContent file;
      file.path = path.string();
      file.display_name = path.filename().string();
      if (files == &scripts) {
        auto opened = MappedFile::open(file.path);
        if (!opened) return Expected<IngestReport>(opened.error());
        if (!looksLikeMinifiedSource(opened->bytes().substr(0, 64 * 1024))) {
          // Hermes bytecode ("index.android.bundle" after hermesc) has no scopes to scan.
          IngestReport skipped;
          skipped.warnings.push_back(file.display_name + " is not JavaScript text: not scanned for function names");
          reports.push_back(std::move(skipped));
          continue;
        }
      }
      auto report =
          files == &maps ? ingestSourcemap(store, one, file, options) : ingestMinifiedSource(store, one, file, options);
      if (!report) return Expected<IngestReport>(report.error().withContext(file.display_name));
      reports.push_back(std::move(*report));
    }
  }
  return Expected<IngestReport>(mergeReports(std::move(reports)));
}

}  // namespace

bool looksLikeMinifiedSource(std::string_view head) {
  if (head.starts_with("\xef\xbb\xbf")) head.remove_prefix(3);
  if (head.find('\0') != std::string_view::npos) return false;
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return false;
  std::string_view text = head.substr(first);
  if (text.front() == '{' || text.front() == '[') return false;  // JSON: a source map
  if (text.find("//# sourceMappingURL=") != std::string_view::npos) return true;
  // How bundles and minified files begin.
  if (text.front() == '(' || text.front() == '!' || text.front() == ';' || text.starts_with("/*") ||
      text.starts_with("//") || text.starts_with("\"use strict\"") || text.starts_with("'use strict'")) {
    return true;
  }
  for (std::string_view word : {"var", "let", "const", "function", "import", "export", "class", "async", "globalThis",
                                "window", "self", "__d", "__r"}) {
    if (startsWithWord(text, word)) return true;
  }
  return false;
}

Status nameMapFromStoredMinifiedSource(SymbolStore& store, std::string_view app, std::string_view build,
                                       std::string_view name, uint64_t map_id, IngestReport& report) {
  for (std::string_view source_build : {build, std::string_view()}) {
    auto value = store.get(sourcemap_records::kSourcemapFamily, minifiedSourceKey(app, source_build, name));
    if (!value) return value.error();
    if (!value->has_value()) {
      if (source_build.empty()) break;
      continue;
    }
    auto text = decodeMinifiedSource(**value);
    if (!text) return text.error();
    rocksdb::WriteBatch batch;
    RESTACK_RETURN_IF_ERROR(nameMap(store, map_id, *text, 0, report, batch));
    return store.write(batch);
  }
  return Status::ok();
}

Expected<IngestReport> ingestMinifiedSource(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                            const IngestOptions& options) {
  std::optional<MappedFile> mapped;
  auto read = uploadBytes(content, mapped);
  if (!read) return read.error();
  const std::string_view bytes = *read;
  const std::string display = !content.display_name.empty() ? content.display_name : content.path;
  if (bytes.size() > options.max_sourcemap_bytes) {
    return tooLarge((display.empty() ? std::string("minified file upload") : display) + ": " +
                    std::to_string(bytes.size()) + " bytes exceeds limits.max_sourcemap_bytes (" +
                    std::to_string(options.max_sourcemap_bytes) + " bytes)");
  }
  const std::string name = !meta.name.empty() ? sourcemap::minifiedFileName(meta.name)
                                              : sourcemap::minifiedFileName(fs::path(display).filename().string());
  if (name.empty()) {
    return invalidArgument((display.empty() ? std::string("minified file upload") : display) +
                           ": cannot tell which bundle this is: set the upload's name (restack.name)");
  }
  IngestReport report;
  report.kind = SymbolKind::kSourcemap;
  report.input_bytes = bytes.size();
  const std::string app = meta.shared ? std::string() : meta.app;
  const std::string build = meta.shared ? std::string() : meta.build_id;

  // A map inlined in the script (formats/sourcemap/inline_map.h) is ingested first, as if
  // uploaded beside it, so the scan below names its functions; the script is kept without it.
  std::string_view code = bytes;
  if (auto inlined = sourcemap::inlineSourceMap(bytes, options.max_sourcemap_bytes)) {
    if (!*inlined) {
      report.warnings.push_back(name + ": its inline source map was not ingested: " + inlined->error().message());
    } else {
      UploadMeta map_meta = meta;
      map_meta.name = name;
      UploadContent map;
      map.bytes = (*inlined)->json;
      map.display_name = name + ".map";
      auto map_report = ingestSourcemap(store, map_meta, map, options);
      if (!map_report) return map_report.error().withContext(name + " (its inline source map)");
      report.ids = std::move(map_report->ids);
      report.records += map_report->records;
      report.stored_bytes += map_report->stored_bytes;
      report.warnings = std::move(map_report->warnings);
      code = bytes.substr(0, (*inlined)->comment_begin);
    }
  }

  rocksdb::WriteBatch batch;
  const std::string stored = encodeMinifiedSource(code);
  for (std::string_view source_build : {std::string_view(build), std::string_view()}) {
    const std::string key = minifiedSourceKey(app, source_build, name);
    batch.Put(store.family(sourcemap_records::kSourcemapFamily), key, stored);
    ++report.records;
    report.stored_bytes += key.size() + stored.size();
    if (build.empty()) break;
  }
  auto maps = mapsServing(store, app, build, name);
  if (!maps) return maps.error();
  for (uint64_t map_id : *maps) RESTACK_RETURN_IF_ERROR(nameMap(store, map_id, code, 0, report, batch));
  if (maps->empty()) {
    report.warnings.push_back(name +
                              ": no source map is uploaded for it yet; its function names are derived when "
                              "the map arrives");
  }
  RESTACK_RETURN_IF_ERROR(store.write(batch));
  sourcemap_records::noteSourcemapIngested();
  report.ids.push_back(name);
  return report;
}

std::optional<Expected<IngestReport>> ingestJavaScriptUpload(SymbolStore& store, const UploadMeta& meta,
                                                             const UploadContent& content,
                                                             const IngestOptions& options) {
  if (meta.kind && *meta.kind != SymbolKind::kSourcemap) return std::nullopt;
  std::error_code error;
  if (!content.path.empty() && fs::is_directory(content.path, error)) return std::nullopt;
  std::optional<MappedFile> mapped;
  auto read = uploadBytes(content, mapped);
  if (!read) return std::nullopt;  // the generic path reports it
  const std::string_view head = read->substr(0, 64 * 1024);
  if (detectCompression(head) == Compression::kZip) {
    if (!meta.kind) return std::nullopt;  // a zip of unknown kind: a .dSYM bundle, most likely
    return ingestZip(store, meta, content, options);
  }
  if (meta.kind || detectCompression(head) != Compression::kNone || !looksLikeMinifiedSource(head)) {
    return std::nullopt;
  }
  UploadMeta resolved = meta;
  resolved.kind = SymbolKind::kSourcemap;
  return ingestMinifiedSource(store, resolved, content, options);
}

}  // namespace restack
