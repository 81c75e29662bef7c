// Ingest: one symbol upload (docs/design.md §4) parsed once into compact lookup records.
//
// `ingestUpload` detects the kind when the metadata does not say, unpacks compressed or zipped
// content, and hands the bytes to the kind's writer (symbolstore/native, proguard, sourcemap).
// Writers stream: they must not hold a whole multi-GB file's parsed form in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "symbolstore/store.h"

namespace restack {

enum class SymbolKind { kDsym, kMachO, kElf, kProguard, kSourcemap };
const char* symbolKindName(SymbolKind kind);
// Parses "dsym", "macho", "elf", "proguard", "sourcemap".
Expected<SymbolKind> parseSymbolKind(std::string_view text);

struct UploadMeta {
  std::optional<SymbolKind> kind;  // detected from the content when absent
  std::string app;                 // empty for shared images
  std::string build_id;            // empty for shared images
  // Source maps: the minified file or bundle the map serves ("main.3f9a1c2b.js",
  // "index.android.bundle"). Empty: taken from the map's "file" field or the upload's file name.
  std::string name;
  bool shared = false;  // from restack.symbols.shared: serves every app
};

// Where the (already decompressed) bytes of an upload are.
struct UploadContent {
  std::string path;          // a file or a .dSYM directory; empty when `bytes` holds the content
  std::string_view bytes;    // in-memory content
  std::string display_name;  // for messages and name inference ("main.3f9a1c2b.js.map")
};

// Reports ingest progress: `done` of `total` units (bytes unless `stage` says otherwise).
using IngestProgress = std::function<void(uint64_t done, uint64_t total, std::string_view stage)>;

// Bounds on one upload; the defaults are config::Limits' (config/config.h), where each is
// explained. docs/operations.md "Upload limits" lists what every parser accepts.
struct IngestOptions {
  // Refuse inputs larger than this (after decompression; a zip's entries together; compressed
  // debug sections of an image together with the image). limits.max_upload_bytes, 8 GiB.
  uint64_t max_input_bytes = 8ull << 30;
  // Refuse gzip/zstd/zip content, and compressed debug sections, that inflate to more than this
  // many times their compressed size. limits.max_decompression_ratio, 200.
  uint64_t max_decompression_ratio = 200;
  // Refuse source maps larger than this before parsing (the JSON parser holds the whole
  // document, about 3x its size). limits.max_sourcemap_bytes, 256 MiB.
  uint64_t max_sourcemap_bytes = 256ull << 20;
  IngestProgress progress;  // may be empty
};

struct IngestReport {
  SymbolKind kind = SymbolKind::kElf;
  std::vector<std::string> ids;  // debug ids, mapping ids or file names the upload now serves
  uint64_t records = 0;          // records written
  uint64_t input_bytes = 0;
  uint64_t stored_bytes = 0;  // bytes of keys + values written
  std::vector<std::string> warnings;
};

// Detects the kind of symbol file from its first bytes (and, for directories, the .dSYM layout).
Expected<SymbolKind> detectSymbolKind(const UploadContent& content);

// Never throws: a stray exception (std::bad_alloc included) becomes an error value. Compressed
// content is unpacked into a private temporary folder (TMPDIR), never into memory.
Expected<IngestReport> ingestUpload(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                    const IngestOptions& options);

// Per-kind writers, implemented in their folders. `meta.kind` is set when they are called.
Expected<IngestReport> ingestNative(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                    const IngestOptions& options);
Expected<IngestReport> ingestProguard(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                      const IngestOptions& options);
Expected<IngestReport> ingestSourcemap(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                       const IngestOptions& options);

}  // namespace restack
