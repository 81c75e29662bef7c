// Writes the restored event of docs/design.md §5: the input event with its unknown fields untouched,
// plus "frames" and "restored" on every thread (and lag sample), "symbolication" and
// "fingerprint".
//
// An event written smaller than in full (OutputShape, chosen by event_processor.cc to fit
// limits.max_output_bytes) says so:
//   - a stack whose "restored" text was left out has no "restored" field;
//   - a stack (thread or lag sample) that lost frames carries "frames_dropped": <count> next to
//     its "frames", which keeps the first (innermost) frames;
//   - "symbolication" gets "truncated": {"max_output_bytes": 900000, "restored_dropped": true,
//     "frames_dropped": 99488, "frames_per_stack": 512} ("frames_*" only when frames were dropped).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "worker/pipeline/fingerprint.h"
#include "worker/pipeline/raw_event.h"
#include "worker/pipeline/restored_event.h"

namespace restack::pipeline {

// The whole event.
std::string writeRestoredEvent(const RawEvent& raw, const RestoredEvent& restored, const EventFingerprint& fingerprint);

struct OutputShape {
  bool restored_text = true;                                     // each stack's "restored" text
  size_t frames_per_stack = std::numeric_limits<size_t>::max();  // the rest are dropped, counted
  // Writing stops (nullopt) as soon as the output is larger: a 100,000-frame event costs at most
  // this many bytes per attempt.
  size_t max_bytes = std::numeric_limits<size_t>::max();
  uint64_t max_output_bytes = 0;  // the limit named in the "truncated" marker
};

// `fingerprint_json`: the fingerprint record as published (possibly cut down, output_record.h).
std::optional<std::string> writeRestoredEvent(const RawEvent& raw, const RestoredEvent& restored,
                                              std::string_view fingerprint_json, const OutputShape& shape);

// The event in the first shape that fits `max_output_bytes`, in event_processor.h's order: whole;
// without restored texts; at most `max_frames_per_thread` frames per stack, then half as many
// each time down to one. nullopt when even the last does not fit.
// `shape`, when given, receives the shape of the output returned (which frames it kept).
std::optional<std::string> writeRestoredEventWithin(const RawEvent& raw, const RestoredEvent& restored,
                                                    std::string_view fingerprint_json, size_t max_output_bytes,
                                                    size_t max_frames_per_thread, OutputShape* shape = nullptr);

}  // namespace restack::pipeline
