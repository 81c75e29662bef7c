// Writer side: one uploaded source map -> the records described in sourcemap_records.h.
#include <rocksdb/write_batch.h>

#include <atomic>
#include <unordered_map>

#include "formats/common/mapped_file.h"
#include "formats/common/text_lines.h"
#include "formats/sourcemap/function_map.h"
#include "formats/sourcemap/function_scanner.h"
#include "formats/sourcemap/mappings.h"
#include "formats/sourcemap/scopes.h"
#include "formats/sourcemap/source_map.h"
#include "formats/sourcemap/url.h"
#include "symbolstore/ingest.h"
#include "symbolstore/sourcemap/sourcemap_generation.h"
#include "symbolstore/sourcemap/sourcemap_minified.h"
#include "symbolstore/sourcemap/sourcemap_records.h"

namespace restack {
namespace {

using namespace sourcemap_records;
using sourcemap::SourceMapDocument;

// Write batches are applied every this many bytes so a 50 MB map never sits in one batch; the
// pointer records go last, so no lookup can see a half-written map.
constexpr size_t kBatchBytes = 8u << 20;

class RecordWriter {
 public:
  RecordWriter(SymbolStore& store, IngestReport& report) : store_(store), report_(report) {}

  void put(const std::string& key, const std::string& value) {
    batch_.Put(store_.family(sourcemap_records::kSourcemapFamily), key, value);
    ++report_.records;
    report_.stored_bytes += key.size() + value.size();
    if (batch_.GetDataSize() >= kBatchBytes && status_.isOk()) status_ = flush();
  }
  Status flush() {
    if (batch_.Count() == 0) return Status::ok();
    Status status = store_.write(batch_);
    batch_.Clear();
    return status;
  }
  const Status& status() const { return status_; }

 private:
  SymbolStore& store_;
  IngestReport& report_;
  rocksdb::WriteBatch batch_;
  Status status_;
};

// Cuts the decoded mappings into chunks of kSegmentsPerChunk segments.
class ChunkBuilder {
 public:
  ChunkBuilder(RecordWriter& writer, uint64_t map_id, const std::vector<std::string>& names)
      : writer_(writer), map_id_(map_id), names_(names) {}

  void add(const sourcemap::Mapping& mapping) {
    if (chunk_.segments.size() == kSegmentsPerChunk) {
      chunk_.end_line = mapping.generated_line;
      chunk_.end_column = mapping.generated_column;
      emit();
    }
    if (chunk_.segments.empty()) {
      chunk_.start_line = mapping.generated_line;
      chunk_.start_column = mapping.generated_column;
    }
    Segment segment;
    segment.line = mapping.generated_line;
    segment.column = mapping.generated_column;
    segment.source = mapping.source;
    segment.original_line = mapping.original_line;
    segment.original_column = mapping.original_column;
    if (mapping.name >= 0) {
      auto [it, inserted] = local_names_.try_emplace(mapping.name, static_cast<int32_t>(chunk_.names.size()));
      if (inserted) chunk_.names.push_back(names_[mapping.name]);
      segment.name = it->second;
    }
    chunk_.segments.push_back(segment);
    ++segments_;
  }

  void finish() {
    if (chunk_.segments.empty()) return;
    chunk_.end_line = kOpenEnd;
    chunk_.end_column = kOpenEnd;
    emit();
  }
  uint64_t segments() const { return segments_; }

 private:
  void emit() {
    writer_.put(chunkKey(map_id_, chunk_.start_line, chunk_.start_column), encodeChunk(chunk_));
    chunk_ = MappingChunk();
    local_names_.clear();
  }

  RecordWriter& writer_;
  uint64_t map_id_;
  const std::vector<std::string>& names_;
  MappingChunk chunk_;
  std::unordered_map<int32_t, int32_t> local_names_;
  uint64_t segments_ = 0;
};

Status writeDocument(RecordWriter& writer, const SourceMapDocument& doc, uint64_t map_id, const std::string& file,
                     IngestReport& report, const std::string& where);

Status writeRegularMap(RecordWriter& writer, const SourceMapDocument& doc, uint64_t map_id, const std::string& file,
                       IngestReport& report, const std::string& where) {
  MapHeader header;
  header.file = file;
  header.debug_id = doc.debug_id;
  header.source_count = static_cast<uint32_t>(doc.sources.size());
  header.hermes = !doc.hermes_function_offsets.empty();
  header.hermes_function_offsets = doc.hermes_function_offsets;
  header.ram_bundle = !doc.segments.empty() || !doc.module_offsets.empty();
  header.module_offsets = doc.module_offsets;
  for (const auto& [segment, child_doc] : doc.segments) {
    const uint64_t child = childMapId(map_id, 0x100000000ull + segment);
    header.facebook_segments[segment] = child;
    RESTACK_RETURN_IF_ERROR(writeDocument(writer, *child_doc, child, file, report,
                                          where + "x_facebook_segments." + std::to_string(segment) + ": "));
  }

  sourcemap::MappingLimits limits;
  limits.source_count = static_cast<uint32_t>(doc.sources.size());
  limits.name_count = static_cast<uint32_t>(doc.names.size());
  ChunkBuilder chunks(writer, map_id, doc.names);
  Status decoded = sourcemap::decodeMappings(doc.mappings, limits, [&](const sourcemap::Mapping& m) { chunks.add(m); });
  if (!decoded) return decoded.error().withContext("source map " + where);
  chunks.finish();
  if (!doc.scopes.empty()) {
    auto scopes = sourcemap::decodeScopesFunctionMap(doc.scopes, doc.names);
    if (scopes) {
      writer.put(generatedFunctionsKey(map_id),
                 encodeGeneratedFunctions({GeneratedFunctionsOrigin::kScopes, std::move(*scopes)}));
    } else {
      report.warnings.push_back(where + "\"scopes\" ignored: " + scopes.error().message());
    }
  }

  for (size_t i = 0; i < doc.sources.size(); ++i) {
    SourceRecord record;
    record.path = doc.resolvedSource(i);
    record.ignored = doc.ignored[i];
    const std::optional<std::string>& content = doc.sources_content[i];
    if (i < doc.function_maps.size() && doc.function_maps[i]) {
      auto functions = sourcemap::decodeFunctionMap(doc.function_maps[i]->names, doc.function_maps[i]->mappings);
      if (functions) {
        record.functions = std::move(*functions);
        // Named as the engine prints them (what the original run shows), not Metro's "Class#m".
        for (std::string& function : record.functions.names) function = sourcemap::v8FunctionName(function);
        record.origin = FunctionMapOrigin::kMetro;
      } else {
        report.warnings.push_back(where + "x_facebook_sources[" + std::to_string(i) +
                                  "] ignored: " + functions.error().message());
      }
    }
    if (content) {
      const std::vector<std::string_view> lines = splitLines(*content);
      record.line_count = static_cast<uint32_t>(lines.size());
      for (size_t first = 0; first < lines.size(); first += kLinesPerTextChunk) {
        const size_t last = std::min(lines.size(), first + kLinesPerTextChunk);
        writer.put(textKey(map_id, static_cast<uint32_t>(i), static_cast<uint32_t>(first / kLinesPerTextChunk)),
                   encodeText(std::vector<std::string_view>(lines.begin() + first, lines.begin() + last)));
      }
      if (record.origin == FunctionMapOrigin::kNone) {
        record.functions = sourcemap::inferFunctionMap(*content);
        record.origin = FunctionMapOrigin::kInferred;
      }
    }
    writer.put(sourceKey(map_id, static_cast<uint32_t>(i)), encodeSource(record));
  }
  writer.put(headerKey(map_id), encodeHeader(header));
  return Status::ok();
}

Status writeDocument(RecordWriter& writer, const SourceMapDocument& doc, uint64_t map_id, const std::string& file,
                     IngestReport& report, const std::string& where) {
  if (!doc.isIndexMap()) return writeRegularMap(writer, doc, map_id, file, report, where);
  MapHeader header;
  header.index_map = true;
  header.file = file;
  header.debug_id = doc.debug_id;
  for (size_t i = 0; i < doc.sections.size(); ++i) {
    const sourcemap::SourceMapSection& section = doc.sections[i];
    Section out;
    out.line = section.offset_line;
    out.column = section.offset_column;
    if (section.map) {
      out.child = childMapId(map_id, i);
      RESTACK_RETURN_IF_ERROR(writeDocument(writer, *section.map, *out.child, file, report,
                                            where + "sections[" + std::to_string(i) + "]: "));
    } else {
      out.url_name = sourcemap::servedFileName("", section.url);
      if (out.url_name.empty()) {
        return malformed("source map " + where + "sections[" + std::to_string(i) + "].url is empty");
      }
    }
    header.sections.push_back(std::move(out));
  }
  writer.put(headerKey(map_id), encodeHeader(header));
  return Status::ok();
}

}  // namespace

Expected<IngestReport> ingestSourcemap(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                       const IngestOptions& options) {
  std::optional<MappedFile> mapped;
  auto read = uploadBytes(content, mapped);
  if (!read) return read.error();
  const std::string_view bytes = *read;
  const std::string display = !content.display_name.empty() ? content.display_name : content.path;
  // The minified file beside its map (sourcemap_minified.h) comes with the same kind; it gets the
  // bytes already mapped here.
  if (looksLikeMinifiedSource(bytes.substr(0, 64 * 1024))) {
    UploadContent minified;
    minified.bytes = bytes;
    minified.display_name = display;
    return ingestMinifiedSource(store, meta, minified, options);
  }
  if (bytes.size() > options.max_input_bytes) {
    return tooLarge(display + ": source map of " + std::to_string(bytes.size()) +
                    " bytes exceeds the ingest limit of " + std::to_string(options.max_input_bytes) +
                    " bytes (IngestOptions::max_input_bytes)");
  }
  // Checked before parsing: the parser holds the whole document, about 3x its size.
  if (bytes.size() > options.max_sourcemap_bytes) {
    return tooLarge((display.empty() ? std::string("source map upload") : display) + ": source map of " +
                    std::to_string(bytes.size()) + " bytes exceeds limits.max_sourcemap_bytes (" +
                    std::to_string(options.max_sourcemap_bytes) + " bytes); split the bundle or raise the limit");
  }
  if (options.progress) options.progress(0, bytes.size(), "parse");
  auto doc = sourcemap::parseSourceMap(bytes);
  if (!doc) return doc.error().withContext(display.empty() ? "source map upload" : display);

  const std::string name =
      !meta.name.empty() ? sourcemap::minifiedFileName(meta.name) : sourcemap::servedFileName(doc->file, display);
  if (name.empty()) {
    return invalidArgument((display.empty() ? std::string("source map upload") : display) +
                           ": cannot tell which minified file this map serves: set the upload's "
                           "name (UploadMeta::name), or the map's \"file\" field");
  }

  IngestReport report;
  report.kind = SymbolKind::kSourcemap;
  report.input_bytes = bytes.size();
  RecordWriter writer(store, report);
  const uint64_t map_id = sourcemap_records::hashBytes(bytes);
  RESTACK_RETURN_IF_ERROR(writeDocument(writer, *doc, map_id, name, report, display.empty() ? "" : display + ": "));
  RESTACK_RETURN_IF_ERROR(writer.status());
  RESTACK_RETURN_IF_ERROR(writer.flush());

  // Pointers last: app + build + name (React Native) and app + name (Web H5); a Metro RAM-bundle
  // map also serves its "seg-N.js" / "N.js" module names through kRamBundlePointerName.
  const std::string app = meta.shared ? std::string() : meta.app;
  const bool ram_bundle = !doc->segments.empty() || !doc->module_offsets.empty();
  for (std::string_view served : {std::string_view(name), sourcemap_records::kRamBundlePointerName}) {
    if (served != name && !ram_bundle) continue;
    writer.put(sourcemap_records::pointerKey(app, "", served), sourcemap_records::encodePointer(map_id));
    if (!meta.build_id.empty() && !meta.shared) {
      writer.put(sourcemap_records::pointerKey(app, meta.build_id, served), sourcemap_records::encodePointer(map_id));
    }
  }
  RESTACK_RETURN_IF_ERROR(writer.status());
  RESTACK_RETURN_IF_ERROR(writer.flush());
  RESTACK_RETURN_IF_ERROR(
      nameMapFromStoredMinifiedSource(store, app, meta.shared ? "" : meta.build_id, name, map_id, report));
  sourcemap_records::noteSourcemapIngested();
  report.ids.push_back(name);
  if (!doc->debug_id.empty()) report.ids.push_back(doc->debug_id);
  if (options.progress) options.progress(bytes.size(), bytes.size(), "done");
  return report;
}

// A source map is a JSON object: "{" after any whitespace and a byte order mark, and after the
// XSSI guard line ")]}'" the format allows before it (formats/sourcemap/source_map.cc strips it).
bool looksLikeSourcemap(std::string_view head) {
  size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && head.substr(first, 3) == "\xef\xbb\xbf") first += 3;  // BOM
  if (first != std::string_view::npos && head.substr(first, 4) == ")]}'") {
    const size_t newline = head.find('\n', first);
    if (newline == std::string_view::npos) return false;
    first = head.find_first_not_of(" \t\r\n", newline);
  }
  return first < head.size() && head[first] == '{';
}

}  // namespace restack
