// Fuzz entry point for the output side of the pipeline, shared by the libFuzzer target
// (tests/worker/fuzz_output.cc, -DRESTACK_FUZZ=ON) and the deterministic unit-test run
// (tests/worker/output_fuzz_test.cc, which also replays tests/worker/fuzz_regressions/).
//
// Input layout: two bytes pick limits.max_output_bytes (64 + 4 * big-endian value), one byte
// limits.max_frames_per_thread (1 + byte % 64); the rest are NUL-separated parts whose first
// byte picks what they add to a restored event (a top-level field, a thread, a lag sample, a
// frame with its function|file|module, restored text) and whose bytes, valid UTF-8 or not, are
// its content. The entry writes the event whole and within the limit, fits a fingerprint record
// and a DLQ copy, and checks the invariants: every JSON output parses back with simdjson, sizes
// stay within their limits, an event is only refused when its smallest shape does not fit.
// A violated invariant aborts.
#pragma once

#include <cstddef>
#include <cstdint>

namespace restack::pipeline {

// What became of the event, so a deterministic run can show it reached every path.
enum class FuzzOutcome { kTooShort, kWhole, kCutDown, kRefused };

FuzzOutcome outputFuzzOne(const uint8_t* data, size_t size);

}  // namespace restack::pipeline
