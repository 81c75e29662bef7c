// The read side of the store as the worker sees it: one resolver per registered symbol family
// (symbolstore/resolver.h, registry in resolvers.cc), each with its in-memory cache of decoded
// records in front of RocksDB, plus the usage notes of the symbols that answered.
#pragma once

#include <memory>
#include <vector>

#include "symbolstore/frame_lookup.h"
#include "symbolstore/resolver.h"
#include "symbolstore/store.h"
#include "symbolstore/usage.h"

namespace restack {

class Symbolizer {
 public:
  Symbolizer(SymbolStore& store, const SymbolizerOptions& options);
  SymbolStore& store() { return store_; }
  // The resolver in `slot` (resolverSlot). Kinds use the typed accessor next to their resolver
  // class (nativeResolver(symbolizer), …) rather than this.
  Resolver& resolver(size_t slot) { return *resolvers_[slot]; }
  // An upload naming `id` was applied: every resolver drops what it cached about it.
  void forgetId(std::string_view id);
  // Lookups see records they did not see before (SymbolStore::unpinLookups): every resolver drops
  // what it cached from the older view (Resolver::storeChanged).
  void storeChanged();
  // Which symbol sets answered frames (symbolstore/usage.h); the worker flushes it into the
  // store's `usage` family. Callers note a frame once it restored: noteUsed for the scope's build
  // (`family` is the family of the symbols that answered), noteImage for a native image the frame
  // named by its debug id (lowercase hex, as formats/stack prints it).
  UsageTracker& usage() { return usage_; }
  void noteUsed(const EventScope& scope, const StoreFamily& family);
  void noteImage(std::string_view debug_id_hex);
  // The symbols of `family` the event named by `id` (R8's pg_map_id), whatever its build.
  void noteId(const StoreFamily& family, std::string_view id);

 private:
  SymbolStore& store_;
  std::vector<std::unique_ptr<Resolver>> resolvers_;
  UsageTracker usage_;
};

}  // namespace restack
