// JavaScript lookups (Web H5, React Native) against source maps ingested into the `sourcemap`
// column family (layout: sourcemap_records.h).
//
// Which map: the frame URL's file name (formats/sourcemap/url.h) under the event's app — plus
// the build for React Native (platform "react_native"), whose bundle names repeat across builds;
// uploads marked shared serve every app. Index-map "url" sections resolve the same way. Metro
// RAM-bundle module names ("seg-N.js", "seg-N_M.js", "M.js") that no upload is named after are
// served by the app/build's RAM-bundle map, as metro-symbolicate reads them: segment N from
// x_facebook_segments, module M's first line from that segment's x_facebook_offsets.
// Position: frame line/column are 1-based as printed; Hermes "(address at …)" columns are
// bytecode offsets, used as the map's 0-based generated column (as metro-symbolicate does).
// Hermes crash-report frames (SegmentID, FunctionID, ByteCodeOffset; stack_line.h) go through
// lookupBytecode: line SegmentID, column x_hermes_function_offsets[SegmentID][FunctionID] +
// ByteCodeOffset of the map their SourceURL names (without SourceURL: the build's only map).
// Answer: the original file (sourceRoot applied), 1-based line and column (as V8 prints them),
// the enclosing function's original name from the source's function map — Metro's
// x_facebook_sources (tier "function_map") or one inferred from sourcesContent at ingest
// (tier "sourcemap"; see formats/sourcemap/function_scanner.h) — and context lines from
// sourcesContent. The map's generated function map ('f' record) comes first when it was decoded
// from the map's ECMA-426 "scopes" (formats/sourcemap/scopes.h), and last when it was scanned from
// the minified file uploaded beside the map (sourcemap_minified.h). Without any of them, the
// printed (minified) name is kept and `note` says so.
//
// Cost: a warm frame is one probe of the route table (none when the thread's previous frame had
// the same URL and scope), a short search over the cached chunks starting on its line (over those of
// its column bucket on a line where many start) and a short search inside one chunk, under one shared
// lock; its answer (source, function, context lines) was resolved the first time any frame hit that
// segment and is shared: the frame takes one reference on it (SymbolizedFrame::pin) and borrows the
// file, the function name, the bundle's name and the context lines (sourcemap_cache.h, FrameString). No RocksDB read,
// and no allocation but the returned FrameLookup's. A cold frame
// reads one pointer, the map header, one chunk (one SeekForPrev), one source record and at most two text chunks. The
// cache is bounded by cache_bytes; when full it is dropped and refilled from RocksDB. Safe to call from several
// threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/stack/js_line.h"
#include "symbolstore/frame_lookup.h"
#include "symbolstore/resolver.h"
#include "symbolstore/store.h"
#include "symbolstore/symbolizer.h"

namespace restack {

// Why no upload can restore a script printed at `url` (its frames are not_found runtime_code
// and hold no event for symbols), or nullptr: node's built-in modules ("node:internal/timers"),
// Hermes's built-ins ("InternalBytecode.js"), browser extensions ("chrome-extension://…",
// "moz-extension://…", Safari's), code made at run time ("blob:…", "data:…").
const char* scriptNoUploadRestores(std::string_view url);

struct SourcemapResolverOptions {
  // Decoded records kept in memory in front of RocksDB. Default 256 MiB.
  size_t cache_bytes = 256u << 20;
  // Source lines attached above and below the frame's line when sourcesContent has them.
  uint32_t context_lines = 2;
};

// What a printed call frame's column points at. V8, Hermes and SpiderMonkey print the start of
// the callee (`fail(…)` at `f`, `obj.m()` at `m`), which is where mapping segments start;
// JavaScriptCore prints the call's divot, after the callee (`fail(` at the `(`), inside the
// callee's segment.
enum class JsColumns { kCallStart, kDivot };

// One frame of SourcemapResolver::lookupStack.
struct JsFrameQuery {
  const stack::JsFrameLine* frame = nullptr;
  JsColumns columns = JsColumns::kCallStart;
};

class SourcemapResolver : public Resolver {
 public:
  SourcemapResolver(SymbolStore& store, const SourcemapResolverOptions& options);
  ~SourcemapResolver();
  // With kDivot the restored column is the original divot: the segment's original column plus
  // the frame's offset into the segment, or plus the original name's length where the segment
  // renames an identifier (`a(` for `fail(`).
  Expected<FrameLookup> lookup(const EventScope& scope, const stack::JsFrameLine& frame,
                               JsColumns columns = JsColumns::kCallStart);

  // The frames of one stack, looked up together: answers[i] (the vector is replaced) is what
  // lookup(scope, *frames[i].frame, frames[i].columns) answers. Frames whose answers are cached
  // are resolved under one lock, and their memory is fetched for all of them before any is read,
  // so that their cache misses overlap (a stack's frames lie far apart in a large map); the
  // others go through lookup(). Fails with the first error lookup() gives.
  Status lookupStack(const EventScope& scope, std::span<const JsFrameQuery> frames, std::vector<FrameLookup>& answers);

  // Hermes frames given as (SegmentID, FunctionID, ByteCodeOffset), e.g. from a Hermes crash
  // report: the generated position is line SegmentID, column x_hermes_function_offsets[SegmentID]
  // [FunctionID] + ByteCodeOffset of the map serving `bundle` ("seg-N.js": segment N's map, as
  // metro-symbolicate's symbolicateHermesMinidumpTrace picks it). lookup() calls this for
  // JsFrameLine::hermes_function_offset frames.
  Expected<FrameLookup> lookupBytecode(const EventScope& scope, std::string_view bundle, uint32_t segment_id,
                                       uint32_t function_id, uint32_t bytecode_offset);
  // Drops which map serves which file, as after an ingest (sourcemapIngestGeneration moves).
  void storeChanged() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The Symbolizer's sourcemap resolver (its slot in symbolstore/resolvers.cc).
inline SourcemapResolver& sourcemapResolver(Symbolizer& symbolizer) {
  static const size_t slot = resolverSlot("sourcemap");
  return static_cast<SourcemapResolver&>(symbolizer.resolver(slot));
}
// Makes the resolver for the registry, with its cache size from `options`.
std::unique_ptr<Resolver> makeSourcemapResolver(SymbolStore& store, const SymbolizerOptions& options);

}  // namespace restack
