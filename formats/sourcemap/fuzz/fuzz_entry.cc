#include "formats/sourcemap/fuzz/fuzz_entry.h"

#include <string_view>

#include "formats/sourcemap/function_map.h"
#include "formats/sourcemap/function_scanner.h"
#include "formats/sourcemap/inline_map.h"
#include "formats/sourcemap/mappings.h"
#include "formats/sourcemap/source_map.h"
#include "formats/sourcemap/url.h"

namespace restack::sourcemap {

int fuzzSourcemapOnce(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = parseSourceMap(text);
  if (doc) {
    MappingLimits limits;
    limits.source_count = static_cast<uint32_t>(doc->sources.size());
    limits.name_count = static_cast<uint32_t>(doc->names.size());
    (void)decodeMappings(doc->mappings, limits, [](const Mapping&) {});
    for (const auto& function_map : doc->function_maps) {
      if (function_map) (void)decodeFunctionMap(function_map->names, function_map->mappings);
    }
  }
  // The raw bytes as a mappings string, a function map and a source text.
  MappingLimits limits;
  limits.source_count = 4;
  limits.name_count = 4;
  uint64_t segments = 0;
  (void)decodeMappings(text, limits, [&](const Mapping&) { ++segments; });
  (void)decodeFunctionMap({"a", "b", "c"}, text);
  FunctionMap inferred = inferFunctionMap(text);
  (void)inferred.enclosing(1, 5);
  (void)minifiedFileName(text);
  (void)parseRamBundleName(text);
  // The raw bytes as a script with an inline map, and a map decoded from them parsed again.
  if (auto inlined = inlineSourceMap(text, 1u << 20); inlined && *inlined) (void)parseSourceMap((*inlined)->json);
  return 0;
}

}  // namespace restack::sourcemap
