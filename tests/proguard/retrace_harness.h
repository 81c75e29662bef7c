// Test harness: a throwaway SymbolStore with mappings ingested from text, and retrace of whole
// traces to R8-style text.
#pragma once

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/stack/stack_line.h"
#include "symbolstore/ingest.h"
#include "symbolstore/proguard/proguard_render.h"
#include "symbolstore/proguard/proguard_resolver.h"
#include "symbolstore/store.h"

namespace restack::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device device;
    path_ = std::filesystem::temp_directory_path() /
            ("restack-proguard-" + std::to_string(device()) + "-" + std::to_string(device()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// An Android event's scope that names R8's pg_map_id.
inline EventScope scopeWithMapId(std::string app, std::string build, std::string map_id) {
  EventScope scope{std::move(app), std::move(build), "android", {}};
  scope.symbol_ids.set(kProguardScopeKind, std::move(map_id));
  return scope;
}

class RetraceHarness {
 public:
  RetraceHarness() {
    StoreOptions options;
    options.path = (dir_.path() / "store").string();
    options.block_cache_bytes = 16u << 20;
    options.write_buffer_bytes = 8u << 20;
    auto store = SymbolStore::open(options);
    if (!store) ADD_FAILURE() << store.error().describe();
    store_ = std::move(*store);
    resolver_ = std::make_unique<ProguardResolver>(*store_, ProguardResolverOptions{});
  }

  Expected<IngestReport> ingest(const std::string& mapping, const std::string& app = "app",
                                const std::string& build = "1") {
    UploadMeta meta;
    meta.kind = SymbolKind::kProguard;
    meta.app = app;
    meta.build_id = build;
    UploadContent content;
    content.bytes = mapping;
    content.display_name = "mapping.txt";
    return ingestProguard(*store_, meta, content, IngestOptions{});
  }

  // Retraces `trace` (lines joined by '\n') and returns the R8-style text, lines joined by '\n'.
  std::string retrace(const std::string& trace, EventScope scope = {"app", "1", "android", {}}) {
    auto lines = stack::parseStack(trace);
    auto results = resolver_->retrace(scope, lines);
    if (!results) return "ERROR: " + results.error().describe();
    auto text = proguard::renderJavaLines(lines, *results);
    std::string joined;
    for (const auto& line : text) joined += line + "\n";
    return joined;
  }

  Expected<std::vector<JavaLineResult>> retraceResults(const std::string& trace,
                                                       EventScope scope = {"app", "1", "android", {}}) {
    lines_ = stack::parseStack(trace);
    return resolver_->retrace(scope, lines_);
  }

  SymbolStore& store() { return *store_; }
  ProguardResolver& resolver() { return *resolver_; }
  const std::filesystem::path& dir() const { return dir_.path(); }

 private:
  TempDir dir_;
  std::unique_ptr<SymbolStore> store_;
  std::unique_ptr<ProguardResolver> resolver_;
  std::vector<stack::StackLine> lines_;
};

// Joins lines with '\n' (and a final '\n').
inline std::string lines(std::initializer_list<const char*> items) {
  std::string out;
  for (const char* item : items) out += std::string(item) + "\n";
  return out;
}

}  // namespace restack::testing
