// A process-wide counter of source-map ingests. Resolvers cache which map serves a file name;
// they drop that cache when the counter moves, so a map uploaded while the worker runs (or a
// replacement for the same file name) is seen by the next lookup.
#pragma once

#include <cstdint>

namespace restack::sourcemap_records {

void noteSourcemapIngested();
uint64_t sourcemapIngestGeneration();

}  // namespace restack::sourcemap_records
