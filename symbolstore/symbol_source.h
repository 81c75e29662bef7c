// Symbol sources: one entry per symbol format an upload can be (docs/design.md §11).
//
// A source has a name (restack.kind, `restack ingest --kind`, IngestReport::kind), a detector
// that recognises its uploads, and a writer that turns one upload into store records. The
// registry (symbol_source.cc) lists them, one line each; kind parsing, detection, the CLI's
// --kind help and the messages that list the kinds all come from it. Adding a format is its
// folder (detector, writer, records and their column family) plus one registry line.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "formats/common/status.h"
#include "symbolstore/ingest.h"

namespace restack {

using IngestFunction = Expected<IngestReport> (*)(SymbolStore& store, const UploadMeta& meta,
                                                  const UploadContent& content, const IngestOptions& options);
// Takes an upload whole, before it is unpacked and dispatched by kind, when it is one the source
// must see as a unit (a zip of source maps and the minified files they serve); nullopt: not such
// an upload, ingest as usual.
using WholeUploadFunction = std::optional<Expected<IngestReport>> (*)(SymbolStore& store, const UploadMeta& meta,
                                                                      const UploadContent& content,
                                                                      const IngestOptions& options);

struct SymbolSource {
  // The kind's name: "elf", "proguard". Lower case, unique among the sources.
  const char* name = "";
  // What the detector recognises, for "cannot tell what kind of symbol file …" messages:
  // "ELF", "a source map".
  std::string_view description;
  // Recognises a file from its first bytes (at most kDetectionBytes); nullptr when the source
  // reads no plain files.
  bool (*matches_file)(std::string_view head) = nullptr;
  // Recognises a folder upload (a .dSYM bundle) from its path; nullptr when the source reads no
  // folders.
  bool (*matches_folder)(const std::string& path) = nullptr;
  // Writes the upload's records; `meta.kind` names this source.
  IngestFunction ingest = nullptr;
  // A source that enriches native records written by other sources (IL2CPP or Dart line
  // mappings) contributes its write-time transform here (native_records.h); nullptr for most.
  const native_store::NativeRecordTransform* native_transform = nullptr;
  // Sees every upload first (WholeUploadFunction); nullptr for most.
  WholeUploadFunction take_whole_upload = nullptr;

  SymbolKind kind() const { return SymbolKind(name); }
};

// How much of a file detectors see.
inline constexpr size_t kDetectionBytes = 64 * 1024;

// The registered sources, in registry order (the order kinds are listed in).
std::span<const SymbolSource> symbolSources();
// The source named `name`; nullptr when none is.
const SymbolSource* findSymbolSource(std::string_view name);
// The kinds' names joined: symbolKindList(", ", " or ") is "dsym, macho, elf, proguard or
// sourcemap".
std::string symbolKindList(std::string_view separator, std::string_view last_separator);

}  // namespace restack
