// Which uploaded map a frame's URL means (docs/design.md §1: matched by the minified file name).
//
// Scheme, host, path prefix (CDN folders), query string and fragment are dropped, leaving the
// file name that bundlers make unique with a content hash:
//   "https://cdn.example.com/static/js/207.e017fea1.chunk.js?v=3#x" -> "207.e017fea1.chunk.js"
//   "webpack:///./src/app.js"                                       -> "app.js"
//   "/data/app/index.android.bundle"                                -> "index.android.bundle"
//   "index.android.bundle"                                          -> "index.android.bundle"
// The same rule names uploads, so "static/js/main.js.map" with "file": "static/js/main.js"
// serves frames printed as "https://host/static/js/main.js".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace restack::sourcemap {

std::string minifiedFileName(std::string_view url);
// The same name as a view into `url` (no allocation; for the warm lookup path).
std::string_view minifiedFileNameView(std::string_view url);

// Metro RAM-bundle module names (metro-symbolicate's parseFileName): "seg-3.js" is segment 3 of
// the bundle's map (x_facebook_segments), "seg-3_12.js" module 12 of segment 3, "12.js" module
// 12 of segment 0; a module's frames are relative to its first line, which the map's
// x_facebook_offsets[module] gives. `module` is nullopt for a whole segment.
struct RamBundleName {
  uint32_t segment = 0;
  std::optional<uint32_t> module;
};
std::optional<RamBundleName> parseRamBundleName(std::string_view name);

// The name a map serves when the upload does not say: the map's "file" field, else the upload's
// file name without a trailing ".map". Both go through minifiedFileName.
std::string servedFileName(std::string_view map_file_field, std::string_view upload_name);

}  // namespace restack::sourcemap
