// Which uploaded map a frame's URL means (DESIGN.md §1: matched by the minified file name).
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

#include <string>
#include <string_view>

namespace restack::sourcemap {

std::string minifiedFileName(std::string_view url);

// The name a map serves when the upload does not say: the map's "file" field, else the upload's
// file name without a trailing ".map". Both go through minifiedFileName.
std::string servedFileName(std::string_view map_file_field, std::string_view upload_name);

}  // namespace restack::sourcemap
