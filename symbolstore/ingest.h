// Ingest: one symbol upload (docs/design.md §4) parsed once into compact lookup records.
//
// `ingestUpload` detects the kind when the metadata does not say, unpacks compressed or zipped
// content, and hands the bytes to the kind's symbol source (symbolstore/symbol_source.h lists
// them; docs/design.md §11). Writers stream: they must not hold a whole multi-GB file's parsed
// form in memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/mapped_file.h"
#include "formats/common/status.h"
#include "symbolstore/store.h"

namespace restack {

namespace native_store {
class NativeRecordTransform;  // symbolstore/native/native_records.h
}

// The kind of a symbol upload: the name of the symbol source that reads it ("dsym", "macho",
// "elf", "proguard", "sourcemap", …), as restack.kind, `restack ingest --kind` and reports spell
// it. A kind is a name, not a closed list: a new source brings its own name
// (symbolstore/symbol_source.cc). The constants name the built-in sources.
class SymbolKind {
 public:
  // `name` must outlive the kind (a string literal or a registered source's name).
  constexpr explicit SymbolKind(const char* name) : name_(name) {}
  constexpr const char* name() const { return name_; }
  friend constexpr bool operator==(SymbolKind a, SymbolKind b) {
    return std::string_view(a.name_) == std::string_view(b.name_);
  }
  friend std::ostream& operator<<(std::ostream& out, SymbolKind kind);

  static const SymbolKind kDsym;
  static const SymbolKind kMachO;
  static const SymbolKind kElf;
  static const SymbolKind kProguard;
  static const SymbolKind kSourcemap;

 private:
  const char* name_;
};
inline constexpr SymbolKind SymbolKind::kDsym{"dsym"};
inline constexpr SymbolKind SymbolKind::kMachO{"macho"};
inline constexpr SymbolKind SymbolKind::kElf{"elf"};
inline constexpr SymbolKind SymbolKind::kProguard{"proguard"};
inline constexpr SymbolKind SymbolKind::kSourcemap{"sourcemap"};

const char* symbolKindName(SymbolKind kind);
// Parses the name of a registered source ("dsym", "macho", "elf", "proguard", "sourcemap", …).
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
  // The split-DWARF package (`libfoo.so.dwp`) that came beside the ELF library `path` in a zip
  // or folder; its split units are read with the library (formats/native/dwarf_walker.h).
  std::string dwp_path;
};

// The bytes of an upload for a writer that reads them whole: `content.bytes`, or the file at
// `content.path` mapped into `mapped`, which keeps them alive.
inline Expected<std::string_view> uploadBytes(const UploadContent& content, std::optional<MappedFile>& mapped) {
  if (content.path.empty()) return content.bytes;
  auto opened = MappedFile::open(content.path);
  if (!opened) return opened.error();
  mapped.emplace(std::move(*opened));
  return mapped->bytes();
}

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
  // When it becomes true (the worker is stopping), the ingest ends at its next progress point with
  // ErrorCode::kUnavailable. What it wrote stays until the upload is ingested again, which
  // replaces it. Default nullptr: never.
  const std::atomic<bool>* stop = nullptr;
  // Write-time transforms of the native records this upload writes (native_records.h, "Write-time
  // transforms"). ingestUpload adds the registered sources' own (SymbolSource::native_transform).
  std::vector<const native_store::NativeRecordTransform*> native_transforms;
  // Where the ingest unpacks compressed uploads and zips. Default "": TMPDIR. A long-running
  // caller gives a folder of its own that it empties when it starts, so that what a killed run
  // was unpacking does not stay behind.
  std::string scratch_dir;
};

inline bool ingestStopped(const IngestOptions& options) {
  return options.stop != nullptr && options.stop->load(std::memory_order_relaxed);
}
inline Error ingestStoppedError() {
  return Error(ErrorCode::kUnavailable, "the ingest was stopped before it finished (the worker is stopping)");
}

struct IngestReport {
  SymbolKind kind = SymbolKind::kElf;  // the source that read the upload
  std::vector<std::string> ids;        // debug ids, mapping ids or file names the upload now serves
  uint64_t records = 0;                // records written
  uint64_t input_bytes = 0;
  uint64_t stored_bytes = 0;  // bytes of keys + values written
  std::vector<std::string> warnings;
};

// Detects the kind of symbol file from its first bytes (and, for directories, their layout): the
// registered source whose detector recognises it.
Expected<SymbolKind> detectSymbolKind(const UploadContent& content);

// Never throws: a stray exception (std::bad_alloc included) becomes an error value. Compressed
// content is unpacked into a private temporary folder (TMPDIR), never into memory.
Expected<IngestReport> ingestUpload(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                    const IngestOptions& options);

// The built-in sources' writers and detectors, implemented in their folders and listed in the
// registry (symbolstore/symbol_source.cc). `meta.kind` is set when a writer is called. A detector
// sees the first bytes of a file (or a folder's path) and must not claim what another source
// claims: detection does not depend on the registry's order.
Expected<IngestReport> ingestNative(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                    const IngestOptions& options);
bool looksLikeDsymBundle(const std::string& folder);  // Contents/Resources/DWARF inside, or such bundles
bool looksLikeMachO(std::string_view head);           // thin or fat Mach-O magic
bool looksLikeElf(std::string_view head);             // "\x7fELF"
Expected<IngestReport> ingestProguard(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                      const IngestOptions& options);
bool looksLikeProguard(std::string_view head);  // "# comments", then "original.Class -> obfuscated:"
Expected<IngestReport> ingestSourcemap(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                       const IngestOptions& options);
bool looksLikeSourcemap(std::string_view head);  // a JSON object

}  // namespace restack
