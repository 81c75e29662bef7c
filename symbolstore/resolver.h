// The read side of one symbol family, as the Symbolizer holds it (docs/design.md §10).
//
// Each family that answers frames (native images, ProGuard mappings, source maps) has one
// resolver: its records decoded and cached in memory in front of RocksDB. The registry in
// resolvers.cc lists them, one line each; the Symbolizer creates one of each and never names
// them. A stack kind reaches its own resolver through the typed accessor declared next to the
// resolver class (`nativeResolver(symbolizer)`), which costs one array index per call.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace restack {

class SymbolStore;

// What the Symbolizer's owner sets for every resolver. The resolvers' other knobs keep the
// defaults documented in their own options structs.
struct SymbolizerOptions {
  // Bytes of decoded records each resolver may cache, by resolver name ("native", "proguard",
  // "sourcemap"; the worker fills it from the config's `cache.<name>_mb`). A resolver missing
  // here keeps its own default.
  std::map<std::string, size_t, std::less<>> cache_bytes;
  // Native: frames of operating-system images whose symbols are missing wait for them like any
  // other (reason missing_symbols) instead of being reason system_image (config
  // pending.await_system_symbols). Default false.
  bool await_system_symbols = false;

  // The cache size for `name`, or `fallback` when none is set.
  size_t cacheBytes(std::string_view name, size_t fallback) const {
    auto it = cache_bytes.find(name);
    return it == cache_bytes.end() ? fallback : it->second;
  }
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // An upload whose records name `id` was applied (a debug id, a pg_map_id, a bundle): drop
  // whatever is cached as missing or stale for it, so the next frame sees the new symbols.
  virtual void forgetId(std::string_view id) {}
  // Lookups see newly applied records (an upload ingested while they were pinned to the store as
  // it was before: SymbolStore::pinLookups): drop whatever was cached from the older view, such as
  // "no mapping for this build". Resolvers whose caches follow an ingest counter move it here, as
  // the lookups made between the ingest's end and now read the older view under the new count.
  virtual void storeChanged() {}
};

struct ResolverType {
  // "native": its slot's name, and its key in SymbolizerOptions::cache_bytes.
  const char* name = "";
  std::unique_ptr<Resolver> (*make)(SymbolStore& store, const SymbolizerOptions& options) = nullptr;
};

// The registered resolvers, in registry order: slot i of a Symbolizer holds resolverTypes()[i].
std::span<const ResolverType> resolverTypes();
// The slot of the resolver named `name`. Asking for an unregistered name is a programming error
// (the typed accessors ask once, for their own name) and aborts.
size_t resolverSlot(std::string_view name);

}  // namespace restack
