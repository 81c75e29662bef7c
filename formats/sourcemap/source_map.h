// Source map v3 documents (https://tc39.es/ecma426/), parsed with simdjson.
//
// A regular map:
//   {"version":3, "file":"app.min.js", "sourceRoot":"src/", "sources":["a.js","b.js"],
//    "sourcesContent":["function a(){…}", null], "names":["a","boom"],
//    "mappings":"AAAA,SAASA;…", "ignoreList":[1], "debugId":"85314830-…"}
// Recognised extensions:
//   "x_google_ignoreList"        older spelling of "ignoreList" (both are honoured, merged)
//   "x_facebook_sources"         Metro: per source, [ {"names":[…], "mappings":"…"} ], the
//                                function map (see function_map.h); null for sources without
//   "x_hermes_function_offsets"  Hermes: {"<segment id>": [byte offset of function 0, 1, …]}
//   "x_facebook_segments"        Metro RAM bundles: {"<segment id>": <regular map>}
//   "x_facebook_offsets"         Metro RAM bundles (legacy): per module id, the 0-based generated
//                                line where the module starts (null: no such module), e.g.
//                                [0, null, 12] -> frames of "2.js" line 3 are bundle line 15
// An index map replaces "mappings"/"sources" by
//   "sections": [ {"offset":{"line":0,"column":0}, "map":{…}} | {"offset":…, "url":"b.js.map"} ]
// A leading ")]}'" line (XSSI guard) is skipped, as browsers do.
//
// The parse keeps the document as plain strings and vectors; "mappings" stays encoded (decode it
// with mappings.h), so memory is about the size of the file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"

namespace restack::sourcemap {

// A Metro function map, still encoded (decode with function_map.h).
struct EncodedFunctionMap {
  std::vector<std::string> names;
  std::string mappings;
};

struct SourceMapDocument;

inline constexpr uint32_t kNoModuleOffset = 0xffffffffu;

struct SourceMapSection {
  uint32_t offset_line = 0;                // 0-based generated line where the section starts
  uint32_t offset_column = 0;              // 0-based column on that line
  std::unique_ptr<SourceMapDocument> map;  // inline "map"
  std::string url;                         // or a "url" naming another uploaded map
};

struct SourceMapDocument {
  std::string file;
  std::string source_root;
  std::vector<std::string> sources;                         // as written (use resolvedSource for sourceRoot)
  std::vector<std::optional<std::string>> sources_content;  // same length as sources
  std::vector<std::string> names;
  std::string mappings;
  std::vector<bool> ignored;  // per source: listed in ignoreList or x_google_ignoreList
  std::string debug_id;       // lowercase hex without dashes; empty when absent
  std::vector<std::optional<EncodedFunctionMap>> function_maps;  // x_facebook_sources
  std::map<uint32_t, std::vector<uint32_t>> hermes_function_offsets;
  std::map<uint32_t, std::unique_ptr<SourceMapDocument>> segments;  // x_facebook_segments
  std::vector<uint32_t> module_offsets;    // x_facebook_offsets; kNoModuleOffset for null entries
  std::vector<SourceMapSection> sections;  // non-empty for an index map
  std::string scopes;                      // ECMA-426 "scopes" proposal (scopes.h); empty when absent

  bool isIndexMap() const { return !sections.empty(); }
  // sources[i] with sourceRoot applied ("src/" + "a.js"); absolute URLs are left alone.
  std::string resolvedSource(size_t index) const;
};

struct ParseOptions {
  // Deepest nesting of index-map sections / segments accepted. Default 8.
  uint32_t max_nesting = 8;
  // Largest document accepted (kTooLarge past it). The default is simdjson's own ceiling, 4 GiB
  // - 1; ingest refuses far smaller maps first (IngestOptions::max_sourcemap_bytes).
  uint64_t max_bytes = 0xFFFFFFFF;
};

// Parses a whole source map, holding it in memory: a padded copy, simdjson's DOM and the
// strings of the result, about 3x the document. Errors say which field is wrong
// ("\"sources\"[3] is not a string").
Expected<SourceMapDocument> parseSourceMap(std::string_view json, const ParseOptions& options = {});

}  // namespace restack::sourcemap
