#include "worker/pipeline/event_processor.h"

#include <algorithm>

#include "worker/pipeline/event_writer.h"
#include "worker/pipeline/fingerprint.h"
#include "worker/pipeline/stack_kind.h"

namespace restack::pipeline {
namespace {

constexpr size_t kFingerprintRecordBytes = 64 * 1024;

// The frames of the written event (the stacks and frames event_writer.cc writes for `shape`) that
// wait for symbols and name the identifier (not those of an operating-system image: reason
// system_image).
void missingFrames(const RawEvent& raw, const RestoredEvent& restored, const OutputShape& shape,
                   std::vector<MissingFrame>& out) {
  auto add = [&](const RestoredStack& stack) {
    const size_t kept = std::min(stack.frames.size(), shape.frames_per_stack);
    for (size_t i = 0; i < kept; ++i) {
      const OutputFrame& frame = stack.frames[i];
      if (frame.reason != FrameReason::kMissingSymbols || frame.missing_id.empty()) continue;
      out.push_back({kindName(frame.kind), frame.missing_id, frame.frame.module, std::string(frame.raw)});
    }
  };
  for (size_t t = 0; t < raw.threads.size() && t < restored.threads.size(); ++t) {
    if (raw.threads[t].has_stack) add(restored.threads[t].stack);
    for (size_t s = 0; s < raw.threads[t].samples.size() && s < restored.threads[t].samples.size(); ++s) {
      add(restored.threads[t].samples[s]);
    }
  }
}

}  // namespace

ProcessResult EventProcessor::deadLetter(std::string_view input_key, std::string_view value, const Error& error) const {
  ProcessResult result;
  result.dead_letter = true;
  result.error = error.message();
  result.error_code = error.code();
  result.records.push_back(deadLetterRecord(input_key, value, error, options_.max_output_bytes));
  return result;
}

Expected<ProcessResult> EventProcessor::process(std::string_view input_key, std::string_view value,
                                                std::string_view previous_fingerprint) {
  auto raw = parseRawEvent(value, options_.event);
  if (!raw) return deadLetter(input_key, value, raw.error());
  if (!previous_fingerprint.empty()) raw->previous_fingerprint = std::string(previous_fingerprint);
  auto restored = restorer_.restore(*raw);
  if (!restored) return restored.error();
  EventFingerprint fingerprint = fingerprintEvent(*raw, *restored, *options_.grouping);
  const size_t limit = options_.max_output_bytes;

  if (fingerprint.key.size() > kMaxKeyBytes) {
    return deadLetter(
        input_key, value,
        tooLarge("the output key \"<app>:<fingerprint>\" would be " + std::to_string(fingerprint.key.size()) +
                 " bytes, over " + std::to_string(kMaxKeyBytes) + ": the app name is too long"));
  }
  auto record_json = fitFingerprintRecord(fingerprint.record_json, std::min(kFingerprintRecordBytes, limit / 4));
  if (!record_json) {
    return deadLetter(
        input_key, value,
        tooLarge("fingerprint record of " + std::to_string(fingerprint.record_json.size()) +
                 " bytes cannot be cut down under limits.max_output_bytes (" + std::to_string(limit) + ")"));
  }
  OutputShape shape;
  auto event_json =
      writeRestoredEventWithin(*raw, *restored, *record_json, limit, options_.restore.max_frames_per_thread, &shape);
  if (!event_json) {
    return deadLetter(input_key, value,
                      tooLarge("restored event exceeds limits.max_output_bytes (" + std::to_string(limit) +
                               ") even without its restored text and with one frame per stack: the event's own "
                               "fields are too large"));
  }

  ProcessResult result;
  OutputRecord event;
  event.kind = OutputKind::kSymbolicated;
  event.key = fingerprint.key;
  event.value = std::move(*event_json);
  event.headers = {{"restack.symbolication", symbolicationStateName(restored->state)}};

  OutputRecord record;
  record.kind = OutputKind::kFingerprint;
  record.key = fingerprint.key;
  record.value = std::move(*record_json);

  result.pending_symbols = restored->state == SymbolicationState::kPending;
  result.app = raw->app;
  result.event_id = raw->event_id;
  result.build_id = raw->build_id;
  result.platform = raw->platform;
  result.fingerprint = fingerprint.hash;
  result.frames_total = restored->frames_total;
  result.frames_symbolicated = restored->frames_symbolicated;
  result.frames_by_kind = restored->frames_by_kind;
  missingFrames(*raw, *restored, shape, result.missing_frames);
  result.records.push_back(std::move(event));
  result.records.push_back(std::move(record));
  return result;
}

}  // namespace restack::pipeline
