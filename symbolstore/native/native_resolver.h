// Native lookups (iOS images, Android .so): debug id + address -> function, file, line, inlines.
#pragma once

#include <memory>

#include "formats/common/status.h"
#include "formats/stack/stack_line.h"
#include "symbolstore/frame_lookup.h"
#include "symbolstore/store.h"

namespace restack {

struct NativeResolverOptions {
  // Decoded records kept in memory in front of RocksDB. Default 512 MiB.
  size_t cache_bytes = 512u << 20;
};

class NativeResolver {
 public:
  NativeResolver(SymbolStore& store, const NativeResolverOptions& options);
  ~NativeResolver();
  // `frame` as parsed; `lookup_address` is the image-relative address to look up, already
  // adjusted (address - 1) for return addresses. Errors are store failures only; "no symbols"
  // and "not covered" are statuses of the lookup.
  Expected<FrameLookup> lookup(const EventScope& scope, const stack::NativeFrameLine& frame,
                               uint64_t lookup_address);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace restack
