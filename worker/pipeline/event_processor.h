// One raw event in, the records it produces out: the restored event and its fingerprint record,
// or a DLQ record when the event cannot be read. No Kafka here: the worker publishes the records,
// `restack symbolicate` prints them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "grouping/rules.h"
#include "symbolstore/symbolizer.h"
#include "worker/pipeline/event_restorer.h"
#include "worker/pipeline/raw_event.h"

namespace restack::pipeline {

enum class OutputKind { kSymbolicated, kFingerprint, kDeadLetter };

struct OutputRecord {
  OutputKind kind = OutputKind::kSymbolicated;
  std::string key;
  std::string value;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct ProcessorOptions {
  EventLimits event;
  RestoreLimits restore;
  // Grouping options and per-app rules; default: built-in rules only.
  std::shared_ptr<const grouping::GroupingConfig> grouping = std::make_shared<grouping::GroupingConfig>();
};

struct ProcessResult {
  std::vector<OutputRecord> records;
  bool dead_letter = false;
  std::string error;             // why it went to the DLQ
  bool pending_symbols = false;  // some frames wait for symbols that were never uploaded
  std::string app;               // of a readable event
  std::string event_id;
  std::string fingerprint;  // the hash published for it
  size_t frames_total = 0;
  size_t frames_symbolicated = 0;
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
  EventRestorer restorer_;
  ProcessorOptions options_;
};

}  // namespace restack::pipeline
