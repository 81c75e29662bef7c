#include "worker/pipeline/event_processor.h"

#include "worker/pipeline/event_writer.h"
#include "worker/pipeline/fingerprint.h"

namespace restack::pipeline {

Expected<ProcessResult> EventProcessor::process(std::string_view input_key, std::string_view value,
                                                std::string_view previous_fingerprint) {
  ProcessResult result;
  auto raw = parseRawEvent(value, options_.event);
  if (!raw) {
    result.dead_letter = true;
    result.error = raw.error().message();
    OutputRecord dlq;
    dlq.kind = OutputKind::kDeadLetter;
    dlq.key = std::string(input_key);
    dlq.value = std::string(value);
    dlq.headers = {{"restack.error", raw.error().message()}, {"restack.error.code", errorCodeName(raw.error().code())}};
    result.records.push_back(std::move(dlq));
    return result;
  }
  if (!previous_fingerprint.empty()) raw->previous_fingerprint = std::string(previous_fingerprint);
  auto restored = restorer_.restore(*raw);
  if (!restored) return restored.error();
  EventFingerprint fingerprint = fingerprintEvent(*raw, *restored, *options_.grouping);

  OutputRecord event;
  event.kind = OutputKind::kSymbolicated;
  event.key = fingerprint.key;
  event.value = writeRestoredEvent(*raw, *restored, fingerprint);
  event.headers = {{"restack.symbolication", symbolicationStateName(restored->state)}};

  OutputRecord record;
  record.kind = OutputKind::kFingerprint;
  record.key = fingerprint.key;
  record.value = fingerprint.record_json;

  result.pending_symbols = restored->state == SymbolicationState::kPending;
  result.app = raw->app;
  result.event_id = raw->event_id;
  result.fingerprint = fingerprint.hash;
  result.frames_total = restored->frames_total;
  result.frames_symbolicated = restored->frames_symbolicated;
  result.records.push_back(std::move(event));
  result.records.push_back(std::move(record));
  return result;
}

}  // namespace restack::pipeline
