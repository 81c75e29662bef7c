// Interim fingerprint until the grouping library (grouping/) is wired in: the exception type and
// the first five restored function names, hashed with FNV-1a 64.
#include <cstdio>

#include "worker/pipeline/fingerprint.h"
#include "worker/pipeline/json_writer.h"

namespace restack::pipeline {
namespace {

uint64_t fnv1a(std::string_view text, uint64_t hash = 0xcbf29ce484222325ull) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

EventFingerprint fingerprintEvent(const RawEvent& raw, const RestoredEvent& restored) {
  EventFingerprint fingerprint;
  fingerprint.algorithm = "v1";
  const RestoredThread* crashed = nullptr;
  for (size_t t = 0; t < raw.threads.size(); ++t) {
    if (raw.threads[t].crashed || !crashed) crashed = &restored.threads[t];
    if (raw.threads[t].crashed) break;
  }
  if (crashed) {
    const RestoredStack& stack = crashed->samples.empty() ? crashed->stack : crashed->samples.front();
    for (const OutputFrame& frame : stack.frames) {
      if (frame.status != FrameStatus::kSymbolicated || frame.frame.function.empty()) continue;
      fingerprint.frames.push_back(frame.frame.function);
      if (fingerprint.frames.size() == 5) break;
    }
  }
  uint64_t hash = fnv1a(restored.exception_type);
  for (const auto& frame : fingerprint.frames) hash = fnv1a(frame, fnv1a("\n", hash));
  if (fingerprint.frames.empty()) hash = fnv1a(raw.exception_message, hash);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  fingerprint.id = hex;
  fingerprint.title = restored.exception_type.empty() ? std::string("<unknown>") : restored.exception_type;
  fingerprint.culprit = fingerprint.frames.empty() ? std::string() : fingerprint.frames.front();
  fingerprint.quality = restored.state == SymbolicationState::kComplete  ? "complete"
                        : restored.state == SymbolicationState::kPartial ? "partial"
                                                                         : "provisional";
  JsonWriter json;
  json.beginObject();
  json.key("id");
  json.string(fingerprint.id);
  json.key("algorithm");
  json.string(fingerprint.algorithm);
  json.key("title");
  json.string(fingerprint.title);
  json.key("culprit");
  json.string(fingerprint.culprit);
  json.key("quality");
  json.string(fingerprint.quality);
  json.key("frames");
  json.beginArray();
  for (const auto& frame : fingerprint.frames) json.string(frame);
  json.endArray();
  json.endObject();
  fingerprint.record_json = json.take();
  return fingerprint;
}

}  // namespace restack::pipeline

namespace restack::pipeline {

std::string fingerprintRecord(const RawEvent& raw, const RestoredEvent& restored,
                              const EventFingerprint& fingerprint) {
  JsonWriter json;
  json.beginObject();
  json.key("app");
  json.string(raw.app);
  json.key("build_id");
  json.string(raw.build_id);
  json.key("event_id");
  json.string(raw.event_id);
  json.key("platform");
  json.string(raw.platform);
  json.key("kind");
  json.string(raw.kind);
  json.key("timestamp_ms");
  json.number(raw.timestamp_ms);
  json.key("symbolication");
  json.string(symbolicationStateName(restored.state));
  json.key("fingerprint");
  json.raw(fingerprint.record_json);
  json.endObject();
  return json.take();
}

}  // namespace restack::pipeline
