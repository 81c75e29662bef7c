// One raw event in, the records it produces out: the restored event and its fingerprint record,
// or a DLQ record when the event cannot be read. No Kafka here: the worker publishes the records,
// `restack symbolicate` prints them.
//
// Every record fits limits.max_output_bytes (its value; keys and headers are bounded by
// output_record.h). A restored event that would not fit is cut down, in this order, until it does:
//   1. the fingerprint record (also embedded in the event) is cut down when it is larger than a
//      quarter of the limit, at most 64 KiB (fitFingerprintRecord: long strings and lists
//      shortened, "truncated": true);
//   2. every stack's "restored" text is left out;
//   3. frames past limits.max_frames_per_thread in each stack (the ones never restored) are
//      dropped, then the frames kept per stack are halved until the event fits, down to one;
//      the event says what was dropped (event_writer.h: "frames_dropped", symbolication.truncated);
//   4. failing that (the input's own fields are too large), the raw event goes to the DLQ:
//      too_large, "restored event exceeds limits.max_output_bytes …".
// A DLQ copy larger than the limit keeps its first max_output_bytes bytes and says so in the
// "restack.truncated" header; nothing is dropped silently.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "grouping/rules.h"
#include "symbolstore/symbolizer.h"
#include "worker/pipeline/event_restorer.h"
#include "worker/pipeline/output_record.h"
#include "worker/pipeline/raw_event.h"

namespace restack::pipeline {

struct ProcessorOptions {
  EventLimits event;
  RestoreLimits restore;
  // limits.max_output_bytes: the largest value of any record (see above).
  uint64_t max_output_bytes = 900000;
  // Grouping options and per-app rules; default: built-in rules only.
  std::shared_ptr<const grouping::GroupingConfig> grouping = std::make_shared<grouping::GroupingConfig>();
};

// A frame of the published event that waits for symbols nobody uploaded (reason missing_symbols,
// with the identifier to ask for; an operating-system image's frame waits for nothing), as the
// event's JSON states it: what the symbol-demand feed counts (worker/kafka/symbol_demand.h,
// demandOfMissingFrames) without reading the output back.
struct MissingFrame {
  std::string_view kind;  // "native", "java", "js"
  std::string missing_id;
  std::string module;  // the restored frame's module, often empty
  std::string raw;     // the raw line
};

struct ProcessResult {
  std::vector<OutputRecord> records;
  bool dead_letter = false;
  std::string error;                            // why it went to the DLQ
  ErrorCode error_code = ErrorCode::kInternal;  // its code (the restack.error.code header)
  bool pending_symbols = false;                 // some frames wait for symbols that were never uploaded
  std::string app;                              // of a readable event
  std::string event_id;
  std::string build_id;     // of a readable event
  std::string platform;     // of a readable event: ios | android | web | react_native | as sent
  std::string fingerprint;  // the hash published for it
  size_t frames_total = 0;
  size_t frames_symbolicated = 0;
  FrameTally frames_by_kind{};
  // The published event's frames with reason missing_symbols and a missing_id, in output order
  // (frames the output dropped to fit are not in it either).
  std::vector<MissingFrame> missing_frames;
};

class EventProcessor {
 public:
  EventProcessor(Symbolizer& symbolizer, const ProcessorOptions& options)
      : restorer_(symbolizer, options.restore), options_(options) {}
  // `input_key` is the Kafka key ("<app>:<build_id>"), reused for the DLQ record.
  // Errors are infrastructure failures only (the store could not be read): the caller must retry
  // the event later rather than publish anything.
  // `previous_fingerprint`: the provisional fingerprint this event was published with before its
  // symbols arrived; the new fingerprint record links to it ("replaces").
  Expected<ProcessResult> process(std::string_view input_key, std::string_view value,
                                  std::string_view previous_fingerprint = {});

 private:
  ProcessResult deadLetter(std::string_view input_key, std::string_view value, const Error& error) const;

  EventRestorer restorer_;
  ProcessorOptions options_;
};

}  // namespace restack::pipeline
