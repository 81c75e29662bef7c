// The read side of the store as the worker sees it: one resolver per symbol type, each with its
// in-memory cache of decoded records in front of RocksDB.
#pragma once

#include <memory>

#include "symbolstore/native/native_resolver.h"
#include "symbolstore/proguard/proguard_resolver.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"
#include "symbolstore/store.h"
#include "symbolstore/usage.h"

namespace restack {

struct SymbolizerOptions {
  NativeResolverOptions native;
  ProguardResolverOptions proguard;
  SourcemapResolverOptions sourcemap;
};

class Symbolizer {
 public:
  Symbolizer(SymbolStore& store, const SymbolizerOptions& options);
  NativeResolver& native() { return native_; }
  ProguardResolver& proguard() { return proguard_; }
  SourcemapResolver& sourcemap() { return sourcemap_; }
  SymbolStore& store() { return store_; }
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
  NativeResolver native_;
  ProguardResolver proguard_;
  SourcemapResolver sourcemap_;
  UsageTracker usage_;
};

}  // namespace restack
