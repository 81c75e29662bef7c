// A source map carried inside the script it serves, as a data: URL in its last
// sourceMappingURL comment (bundlers' "inline" source maps: webpack's inline-source-map,
// esbuild --sourcemap=inline, terser --source-map url=inline, Metro debug bundles):
//
//   …minified code…
//   //# sourceMappingURL=data:application/json;charset=utf-8;base64,eyJ2ZXJzaW9uIjozLC…
//
// -> the map's JSON text ({"version":3,…}). The older "//@" prefix is read too. Only base64
// data is decoded (OpenSSL's EVP decoder); the rarer percent-encoded form is reported as
// unsupported. A comment naming a file ("main.js.map") is no inline map: std::nullopt.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "formats/common/status.h"

namespace restack::sourcemap {

struct InlineSourceMap {
  std::string json;          // the map's text
  size_t comment_begin = 0;  // where the comment starts in the script: the code ends before it
};

// std::nullopt when the script's last sourceMappingURL comment is not a data: URL (or there is
// none); an error when it is one that cannot be decoded, or whose JSON would exceed `max_bytes`.
std::optional<Expected<InlineSourceMap>> inlineSourceMap(std::string_view script, size_t max_bytes);

}  // namespace restack::sourcemap
