// The raw event of docs/design.md §3, as read from restack.events.raw (or stdin for
// `restack symbolicate`).
//
// Restack reads only the fields it needs and keeps every other field's JSON text byte for byte,
// so that the restored event (§5) passes unknown fields through untouched. Example:
//
//   {"event_id":"e1","kind":"crash","platform":"android","app":"shop","build_id":"7.8.0(78007)",
//    "exception":{"type":"a.b.c","message":"boom"},"sdk":{"v":3},
//    "threads":[{"name":"main","crashed":true,"stack":"a.b.c(SourceFile:1)\n…","tid":1}]}
//
//   -> app "shop", build "7.8.0(78007)", one thread "main" (crashed) with its stack; "sdk"
//      kept as the raw text {"v":3}; the thread's "tid" kept as raw text 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/common/status.h"
#include "symbolstore/frame_lookup.h"

namespace restack::pipeline {

// A field kept verbatim: its key as escaped in the input and its value's JSON text.
struct RawField {
  std::string key;  // unescaped; re-escaped on output
  std::string json;
};

struct RawSample {
  std::string stack;
  uint64_t timestamp_ms = 0;
  std::vector<RawField> passthrough;  // every field but "stack" (timestamp_ms included)
};

struct RawThread {
  std::string name;
  bool crashed = false;
  bool has_stack = false;  // "stack" present (otherwise "samples")
  std::string stack;
  std::vector<RawSample> samples;     // lag events
  std::vector<RawField> passthrough;  // every field but stack/samples/frames/restored
};

struct RawEvent {
  std::string event_id;
  std::string kind;      // crash | anr | lag | error
  std::string platform;  // ios | android | web | react_native
  std::string app;
  std::string build_id;
  int64_t timestamp_ms = 0;
  bool has_exception = false;
  std::string exception_type;
  std::string exception_message;
  // The symbol files the event names for its frames, per stack kind: a kind's eventIdField
  // ("pg_map_id" for java) at the top level or in "attributes" (stack_kind.h).
  ScopeSymbolIds symbol_ids;
  // An event published earlier while symbols were missing and fed in again carries its
  // provisional fingerprint; the new record links to it ("replaces").
  std::string previous_fingerprint;
  std::vector<RawThread> threads;
  // Every top-level field but "threads" and the fields Restack writes ("symbolication",
  // "fingerprint"), in input order.
  std::vector<RawField> passthrough;
};

struct EventLimits {
  uint64_t max_event_bytes = 1 << 20;
  uint32_t max_threads = 256;
};

// Parses one event. Errors (malformed_input / too_large) carry the reason that goes to the DLQ.
Expected<RawEvent> parseRawEvent(std::string_view json, const EventLimits& limits);

}  // namespace restack::pipeline
