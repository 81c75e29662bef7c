// The read side of the store as the worker sees it: one resolver per symbol type, each with its
// in-memory cache of decoded records in front of RocksDB.
#pragma once

#include <memory>

#include "symbolstore/native/native_resolver.h"
#include "symbolstore/proguard/proguard_resolver.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"
#include "symbolstore/store.h"

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

 private:
  SymbolStore& store_;
  NativeResolver native_;
  ProguardResolver proguard_;
  SourcemapResolver sourcemap_;
};

}  // namespace restack
