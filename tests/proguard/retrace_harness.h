// Test harness: a throwaway SymbolStore with mappings ingested from text, and retrace of whole
// traces through the worker's restorer to the text users see.
#pragma once

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/stack/java_line.h"
#include "symbolstore/ingest.h"
#include "symbolstore/proguard/proguard_resolver.h"
#include "symbolstore/store.h"
#include "symbolstore/symbolizer.h"
#include "worker/pipeline/event_restorer.h"

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
    symbolizer_ = std::make_unique<Symbolizer>(*store_, SymbolizerOptions{});
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

  // Restores `trace` (lines joined by '\n') as the worker restores a thread's stack, and returns
  // the thread's `restored` text, the one users see (worker/pipeline/kinds/java_kind.cc), lines
  // joined by '\n' (and a final '\n').
  std::string retrace(const std::string& trace, EventScope scope = {"app", "1", "android", {}}) {
    pipeline::RawEvent event;
    event.app = scope.app;
    event.build_id = scope.build_id;
    event.platform = scope.platform;
    event.symbol_ids = scope.symbol_ids;
    pipeline::RawThread& thread = event.threads.emplace_back();
    thread.has_stack = true;
    thread.stack = trace;
    // Whole traces, however long: the frame limit is the worker's, not the retracer's.
    pipeline::EventRestorer restorer(*symbolizer_, pipeline::RestoreLimits{UINT32_MAX});
    auto restored = restorer.restore(event);
    if (!restored) return "ERROR: " + restored.error().describe();
    const std::string& text = restored->threads.front().stack.restored_text;
    return text.empty() ? text : text + "\n";
  }

  Expected<std::vector<JavaLineResult>> retraceResults(const std::string& trace,
                                                       EventScope scope = {"app", "1", "android", {}}) {
    lines_ = stack::parseStack(trace);
    return resolver().retrace(scope, lines_);
  }

  SymbolStore& store() { return *store_; }
  ProguardResolver& resolver() { return proguardResolver(*symbolizer_); }
  const std::filesystem::path& dir() const { return dir_.path(); }

 private:
  TempDir dir_;
  std::unique_ptr<SymbolStore> store_;
  std::unique_ptr<Symbolizer> symbolizer_;
  std::vector<stack::StackLine> lines_;
};

// Joins lines with '\n' (and a final '\n').
inline std::string lines(std::initializer_list<const char*> items) {
  std::string out;
  for (const char* item : items) out += std::string(item) + "\n";
  return out;
}

}  // namespace restack::testing
