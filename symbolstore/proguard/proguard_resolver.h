// Java/Kotlin retrace against ProGuard / R8 mapping files (app + build id, or an R8 map id).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/stack/java_line.h"
#include "symbolstore/frame_lookup.h"
#include "symbolstore/resolver.h"
#include "symbolstore/store.h"
#include "symbolstore/symbolizer.h"

namespace restack {

// The stack kind under which EventScope::symbol_ids holds the event's R8 pg_map_id.
inline constexpr std::string_view kProguardScopeKind = "java";

struct ProguardResolverOptions {
  // Decoded class records kept in memory in front of RocksDB. Default 256 MiB.
  size_t cache_bytes = 256u << 20;
};

struct JavaLineResult {
  FrameLookup lookup;           // for kJavaFrame lines
  std::string exception_class;  // for kJavaException lines: the deobfuscated class name
  // For kJavaException lines: the message with the obfuscated names inside it restored
  // (proguard_message.h); empty when nothing in it changed (print the message as received).
  std::string exception_message;
  // For kJavaException lines whose obfuscated class stands for several original classes (class
  // merging): the other candidates when the frames below the line do not single one out (then
  // exception_class is the first candidate in mapping order); empty when the choice is certain.
  std::vector<std::string> exception_class_alternatives;
  // For kJavaMore lines ("... N more"): how many restored lines the N elided frames stand for,
  // when that differs from N (inline chains add frames, dropped synthesized frames remove
  // some); unset when N stays right. 0: every elided frame was dropped, so the line goes too.
  std::optional<uint32_t> more_count;
};

class ProguardResolver : public Resolver {
 public:
  ProguardResolver(SymbolStore& store, const ProguardResolverOptions& options);
  ~ProguardResolver();
  // Retraces a run of consecutive Java lines of one thread (frames, exception headers,
  // "... N more"), returning one result per input line, in order. The run is passed whole
  // because rules such as rewriteFrame depend on the exception above a frame.
  Expected<std::vector<JavaLineResult>> retrace(const EventScope& scope, std::span<const stack::StackLine> lines);
  // Deobfuscates a class name such as the event's exception.type; std::nullopt when unknown.
  Expected<std::optional<std::string>> deobfuscateClass(const EventScope& scope, std::string_view obfuscated);
  // Restores the obfuscated names inside an exception message such as the event's
  // exception.message (shapes: proguard_message.h); std::nullopt when nothing changed.
  Expected<std::optional<std::string>> deobfuscateMessage(const EventScope& scope, std::string_view message);
  // Drops the build and map-id pointers cached so far (proguardStoreEpoch moves).
  void storeChanged() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The Symbolizer's proguard resolver (its slot in symbolstore/resolvers.cc).
inline ProguardResolver& proguardResolver(Symbolizer& symbolizer) {
  static const size_t slot = resolverSlot("proguard");
  return static_cast<ProguardResolver&>(symbolizer.resolver(slot));
}
// Makes the resolver for the registry, with its cache size from `options`.
std::unique_ptr<Resolver> makeProguardResolver(SymbolStore& store, const SymbolizerOptions& options);

}  // namespace restack
