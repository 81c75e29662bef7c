#include "symbolstore/symbolizer.h"

namespace restack {

Symbolizer::Symbolizer(SymbolStore& store, const SymbolizerOptions& options) : store_(store) {
  for (const ResolverType& type : resolverTypes()) resolvers_.push_back(type.make(store, options));
}

void Symbolizer::forgetId(std::string_view id) {
  for (auto& resolver : resolvers_) resolver->forgetId(id);
}

void Symbolizer::storeChanged() {
  for (auto& resolver : resolvers_) resolver->storeChanged();
}

void Symbolizer::noteUsed(const EventScope& scope, const StoreFamily& family) {
  if (scope.app.empty() && scope.build_id.empty()) return;
  // Called per restored frame: one buffer per thread instead of a string per call.
  thread_local std::string set;
  set.clear();
  usage::appendBuildSet(set, family.name(), scope.app, scope.build_id);
  usage_.note(set);
}

void Symbolizer::noteId(const StoreFamily& family, std::string_view id) {
  if (id.empty()) return;
  thread_local std::string set;
  set.clear();
  usage::appendIdSet(set, family.name(), id);
  usage_.note(set);
}

void Symbolizer::noteImage(std::string_view debug_id_hex) {
  if (debug_id_hex.empty()) return;
  thread_local std::string set;
  set.assign("d");
  set.append(debug_id_hex);
  usage_.note(set);
}

}  // namespace restack
