// One fuzz iteration over every parser of this folder: JSON document, mappings, function maps
// (decoded and inferred from text) and URL names. Shared by the libFuzzer target
// (tests/sourcemap/fuzz_sourcemap.cc, -DRESTACK_FUZZ=ON) and the unit tests' deterministic run.
// Returns 0 always; a crash, sanitizer report or hang is the failure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace restack::sourcemap {

int fuzzSourcemapOnce(const uint8_t* data, size_t size);

}  // namespace restack::sourcemap
