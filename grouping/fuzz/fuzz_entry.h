// Fuzz entry point for the grouping library, shared by the libFuzzer target
// (grouping/fuzz/grouping_fuzz.cc, -DRESTACK_FUZZ=ON) and the deterministic unit-test run.
//
// Input layout: NUL-separated parts. Part 0 is a rule file (YAML); the next part's first byte
// picks the event kind and platform; every further part becomes a frame whose first byte picks
// the frame kind, state and thread/sample, and whose rest is the function name (and, after a
// '|', the file/module). The entry computes a fingerprint and its JSON record and checks the
// invariants (32 hex digits, deterministic, balanced JSON); a violated invariant aborts.
#pragma once

#include <cstddef>
#include <cstdint>

namespace restack::grouping {

void groupingFuzzOne(const uint8_t* data, size_t size);

}  // namespace restack::grouping
