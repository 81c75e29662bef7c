// The minified file itself as an upload beside its source map (docs/design.md §4): function names
// for maps without sourcesContent.
//
// A map without sourcesContent says where a minified position came from but not which original
// function encloses it. The minified file does: its function scopes are scanned with the
// JavaScript scanner of formats/sourcemap/function_scanner.h, and every identifier that names
// a scope (`function e(`, `t.r = function`, `class n {`, `o: () =>`) is spelled as the map's
// `names` entry at that token says the original source spelled it (as Sentry's js-source-scopes
// does). Anonymous functions assigned to a property or variable take the assignment target's
// name; one invoked where it is written (inlined by terser) takes the name the map gives its
// call. webpack's concatenation prefix (`router_go` for `go` of src/router.js) is dropped, and so
// is the object of an assignment target that the map covers with a segment without a source
// (terser's `e.validateInternal=function` for `function validateInternal`). The result, a function map
// over positions in the minified file, is stored per map as the 'f' record (sourcemap_records.h) and read by
// SourcemapResolver when the map's own sources give no function map.
//
// The upload: restack.kind "sourcemap" (or no kind: recognised by looksLikeMinifiedSource),
// restack.name = the minified file the map serves, same app/build as the map; either order. The
// file is kept as the 'm' record so a map uploaded after it is named too. A zip holding the map
// and the minified file is ingested whole by ingestSourcemapBundleZip.
#pragma once

#include <optional>
#include <string_view>

#include "formats/common/status.h"
#include "symbolstore/ingest.h"

namespace restack {

// True when `head` (the first bytes of an upload) reads as JavaScript rather than a source map,
// a ProGuard mapping or a binary.
bool looksLikeMinifiedSource(std::string_view head);

// Ingests a minified JavaScript file named meta.name (else the upload's file name).
Expected<IngestReport> ingestMinifiedSource(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                            const IngestOptions& options);

// After a map was written under (app, build, name): names its generated functions from a
// minified file uploaded earlier under the same app/build/name, if any. Adds to `report`.
Status nameMapFromStoredMinifiedSource(SymbolStore& store, std::string_view app, std::string_view build,
                                       std::string_view name, uint64_t map_id, IngestReport& report);

// Uploads this module takes before the generic ingest path looks at them: a zip of kind
// "sourcemap" (source maps plus the minified files they serve), and a bare minified JavaScript
// file whose kind is not given. nullopt: not such an upload, ingest as usual.
std::optional<Expected<IngestReport>> ingestJavaScriptUpload(SymbolStore& store, const UploadMeta& meta,
                                                             const UploadContent& content,
                                                             const IngestOptions& options);

}  // namespace restack
