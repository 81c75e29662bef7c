// JavaScript lookups (Web H5, React Native) against source maps.
#pragma once

#include <memory>

#include "formats/common/status.h"
#include "formats/stack/stack_line.h"
#include "symbolstore/frame_lookup.h"
#include "symbolstore/store.h"

namespace restack {

struct SourcemapResolverOptions {
  // Decoded records kept in memory in front of RocksDB. Default 256 MiB.
  size_t cache_bytes = 256u << 20;
  // Source lines attached above and below the frame's line when sourcesContent has them.
  uint32_t context_lines = 2;
};

class SourcemapResolver {
 public:
  SourcemapResolver(SymbolStore& store, const SourcemapResolverOptions& options);
  ~SourcemapResolver();
  Expected<FrameLookup> lookup(const EventScope& scope, const stack::JsFrameLine& frame);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace restack
