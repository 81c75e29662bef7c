#include "symbolstore/proguard/proguard_resolver.h"

namespace restack {

struct ProguardResolver::Impl {
  SymbolStore& store;
};

ProguardResolver::ProguardResolver(SymbolStore& store, const ProguardResolverOptions&)
    : impl_(new Impl{store}) {}
ProguardResolver::~ProguardResolver() = default;

Expected<std::vector<JavaLineResult>> ProguardResolver::retrace(
    const EventScope& scope, std::span<const stack::StackLine> lines) {
  std::vector<JavaLineResult> results(lines.size());
  for (auto& result : results) result.lookup = FrameLookup::missing(scope.app + ":" + scope.build_id);
  return results;
}

Expected<std::optional<std::string>> ProguardResolver::deobfuscateClass(const EventScope&,
                                                                        std::string_view) {
  return std::optional<std::string>();
}

}  // namespace restack
