#include "symbolstore/symbol_source.h"

#include <array>

#include "symbolstore/breakpad/breakpad_ingest.h"
#include "symbolstore/sourcemap/sourcemap_minified.h"

namespace restack {
namespace {

// A source map, or the minified file it serves uploaded beside it (sourcemap_minified.h).
bool looksLikeSourcemapOrMinifiedFile(std::string_view head) {
  return looksLikeSourcemap(head) || looksLikeMinifiedSource(head);
}

// The registry: one line per source, in the order the kinds are listed. Detectors do not overlap
// (ingest.h), so this order is not a priority.
constexpr auto kSources = std::to_array<SymbolSource>({
    {"dsym", "a .dSYM bundle (Contents/Resources/DWARF) or a folder of them", nullptr, looksLikeDsymBundle,
     ingestNative},
    {"macho", "Mach-O", looksLikeMachO, nullptr, ingestNative},
    {"elf", "ELF", looksLikeElf, nullptr, ingestNative},
    {"proguard", "a ProGuard mapping", looksLikeProguard, nullptr, ingestProguard},
    {"sourcemap", "a source map or the minified file it serves", looksLikeSourcemapOrMinifiedFile, nullptr,
     ingestSourcemap, nullptr, ingestJavaScriptUpload},
    {"breakpad", "a Breakpad symbol file", looksLikeBreakpad, nullptr, ingestBreakpad},
});

}  // namespace

std::span<const SymbolSource> symbolSources() {
  return kSources;
}

const SymbolSource* findSymbolSource(std::string_view name) {
  for (const SymbolSource& source : kSources) {
    if (name == source.name) return &source;
  }
  return nullptr;
}

std::string symbolKindList(std::string_view separator, std::string_view last_separator) {
  std::string out;
  for (size_t i = 0; i < kSources.size(); ++i) {
    if (i > 0) out += i + 1 == kSources.size() ? last_separator : separator;
    out += kSources[i].name;
  }
  return out;
}

}  // namespace restack
