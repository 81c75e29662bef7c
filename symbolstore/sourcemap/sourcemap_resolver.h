// JavaScript lookups (Web H5, React Native) against source maps ingested into the `sourcemap`
// column family (layout: sourcemap_records.h).
//
// Which map: the frame URL's file name (formats/sourcemap/url.h) under the event's app — plus
// the build for React Native (platform "react_native"), whose bundle names repeat across builds;
// uploads marked shared serve every app. Index-map "url" sections resolve the same way.
// Position: frame line/column are 1-based as printed; Hermes "(address at …)" columns are
// bytecode offsets, used as the map's 0-based generated column (as metro-symbolicate does).
// Answer: the original file (sourceRoot applied), 1-based line and column (as V8 prints them),
// the enclosing function's original name from the source's function map — Metro's
// x_facebook_sources (tier "function_map") or one inferred from sourcesContent at ingest
// (tier "sourcemap"; see formats/sourcemap/function_scanner.h) — and context lines from
// sourcesContent. Without either, the printed (minified) name is kept and `note` says so.
//
// Cost: a warm frame touches only the in-memory cache (decoded chunks of 256 segments, source
// records, pointers); a cold one reads one pointer, the map header, one chunk (one SeekForPrev),
// one source record and at most two text chunks. The cache is bounded by cache_bytes; when full
// it is dropped and refilled from RocksDB. Safe to call from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "formats/common/status.h"
#include "formats/stack/stack_line.h"
#include "symbolstore/frame_lookup.h"
#include "symbolstore/store.h"

namespace restack {

struct SourcemapResolverOptions {
  // Decoded records kept in memory in front of RocksDB. Default 256 MiB.
  size_t cache_bytes = 256u << 20;
  // Source lines attached above and below the frame's line when sourcesContent has them.
  uint32_t context_lines = 2;
};

class SourcemapResolver {
 public:
  SourcemapResolver(SymbolStore& store, const SourcemapResolverOptions& options);
  ~SourcemapResolver();
  Expected<FrameLookup> lookup(const EventScope& scope, const stack::JsFrameLine& frame);

  // Hermes frames given as (SegmentID, FunctionID, ByteCodeOffset), e.g. from a Hermes crash
  // report: the generated position is line SegmentID, column x_hermes_function_offsets[SegmentID]
  // [FunctionID] + ByteCodeOffset of the map serving `bundle` (or its x_facebook_segments entry).
  Expected<FrameLookup> lookupBytecode(const EventScope& scope, std::string_view bundle,
                                       uint32_t segment_id, uint32_t function_id,
                                       uint32_t bytecode_offset);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace restack
