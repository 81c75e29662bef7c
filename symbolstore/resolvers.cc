#include <cstdio>
#include <cstdlib>

#include "symbolstore/native/native_resolver.h"
#include "symbolstore/proguard/proguard_resolver.h"
#include "symbolstore/resolver.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"

namespace restack {

std::span<const ResolverType> resolverTypes() {
  // One line per resolver.
  static const ResolverType kResolvers[] = {
      {"native", &makeNativeResolver},
      {"proguard", &makeProguardResolver},
      {"sourcemap", &makeSourcemapResolver},
  };
  return kResolvers;
}

size_t resolverSlot(std::string_view name) {
  const auto types = resolverTypes();
  for (size_t i = 0; i < types.size(); ++i) {
    if (name == types[i].name) return i;
  }
  std::fprintf(stderr, "restack: no resolver named '%.*s' is registered (symbolstore/resolvers.cc)\n",
               static_cast<int>(name.size()), name.data());
  std::abort();
}

}  // namespace restack
