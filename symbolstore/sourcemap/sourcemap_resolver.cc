#include "symbolstore/sourcemap/sourcemap_resolver.h"

namespace restack {

struct SourcemapResolver::Impl {
  SymbolStore& store;
};

SourcemapResolver::SourcemapResolver(SymbolStore& store, const SourcemapResolverOptions&)
    : impl_(new Impl{store}) {}
SourcemapResolver::~SourcemapResolver() = default;

Expected<FrameLookup> SourcemapResolver::lookup(const EventScope&, const stack::JsFrameLine& frame) {
  return FrameLookup::missing(frame.url);
}

}  // namespace restack
