#include "symbolstore/native/native_resolver.h"

namespace restack {

struct NativeResolver::Impl {
  SymbolStore& store;
};

NativeResolver::NativeResolver(SymbolStore& store, const NativeResolverOptions&)
    : impl_(new Impl{store}) {}
NativeResolver::~NativeResolver() = default;

Expected<FrameLookup> NativeResolver::lookup(const EventScope&, const stack::NativeFrameLine& frame,
                                             uint64_t) {
  return FrameLookup::missing(frame.debug_id.empty() ? frame.module : frame.debug_id);
}

}  // namespace restack
