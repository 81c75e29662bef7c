// One record the pipeline hands to the worker (or `restack symbolicate`), and the helpers that
// keep every record inside limits.max_output_bytes plus config::kOutputRecordMargin, so that the
// producer never refuses it (config/config.h). Keys and header values are bounded here; values
// are bounded by event_processor.cc (restored events) and below (fingerprint records, DLQ copies).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/common/status.h"

namespace restack::pipeline {

enum class OutputKind { kSymbolicated, kFingerprint, kDeadLetter };

struct OutputRecord {
  OutputKind kind = OutputKind::kSymbolicated;
  std::string key;
  std::string value;
  std::vector<std::pair<std::string, std::string>> headers;
};

// Together with the worker's own DLQ headers (source topic, partition, offset) and Kafka's
// framing these stay well inside config::kOutputRecordMargin.
inline constexpr size_t kMaxKeyBytes = 4096;
inline constexpr size_t kMaxHeaderValueBytes = 1024;
// What is kept of a record the producer refused although the pipeline sized it
// (refusedOutputDeadLetter).
inline constexpr size_t kRefusedOutputKeptBytes = 4096;

// `text` cut to at most `max_bytes` without splitting a UTF-8 sequence.
std::string_view cutUtf8(std::string_view text, size_t max_bytes);

// The DLQ record of an input: the input key and bytes unchanged with the reason in headers
// ("restack.error", "restack.error.code"). An input larger than `max_output_bytes` keeps its
// first `max_output_bytes` bytes and says so in "restack.truncated"; a key longer than
// kMaxKeyBytes is cut the same way ("restack.key.truncated").
OutputRecord deadLetterRecord(std::string_view key, std::string_view value, const Error& error,
                              size_t max_output_bytes);

// The fingerprint record (grouping/record_json.h) as published: unchanged when it fits `budget`
// bytes; otherwise rewritten with long strings and lists cut short and "truncated": true; nullopt
// when even that does not fit.
std::optional<std::string> fitFingerprintRecord(std::string_view record_json, size_t budget);

// For the worker: a record the producer refused as larger than its message.max.bytes, sent to
// the DLQ instead of failing the batch on every retry. Keeps the first kRefusedOutputKeptBytes
// bytes of its value; the headers say which topic refused how many bytes.
OutputRecord refusedOutputDeadLetter(const OutputRecord& refused, std::string_view topic);

}  // namespace restack::pipeline
