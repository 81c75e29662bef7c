// The worker's log lines: plain text for a terminal, or one JSON object per line for a log
// pipeline (observability.log_format, config/config.h).
//
// A JSON line carries the time (UTC, milliseconds), the level, the component that logged and the
// message, plus the event's coordinates when the line is about one event:
//
//   {"time":"2026-11-23T18:40:01.123Z","level":"warn","logger":"restack",
//    "message":"event sent to the DLQ: malformed_event: …","event_id":"e-42",
//    "topic":"restack.events.raw","partition":3,"offset":1017}
//
// The coordinates come from a `ScopedLogContext` the worker opens around the work on one event,
// so that every line logged inside it, from any module, names the event without each call
// formatting them itself. librdkafka's own log lines go through the same formatter
// (`logFromKafka`), so that a JSON log never mixes in a line that is not JSON.
#pragma once

#include <rocksdb/env.h>
#include <spdlog/formatter.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "formats/common/status.h"

namespace restack::logging {

// The event a log line is about. Empty fields are left out of the line.
struct LogContext {
  std::string_view event_id;
  std::string_view topic;
  int32_t partition = -1;  // -1: none
  int64_t offset = -1;     // -1: none
};

// Sets the context of every line the current thread logs until it goes out of scope; nests (the
// inner context wins and the outer one comes back).
class ScopedLogContext {
 public:
  explicit ScopedLogContext(const LogContext& context);
  ~ScopedLogContext();
  ScopedLogContext(const ScopedLogContext&) = delete;
  ScopedLogContext& operator=(const ScopedLogContext&) = delete;

 private:
  const LogContext* previous_;
  LogContext context_;
};

// The current thread's context, or nullptr.
const LogContext* currentLogContext();

// One JSON object per line: see the top of this file.
std::unique_ptr<spdlog::formatter> makeJsonFormatter();

// Applies observability.log_level ("trace" … "error") and observability.log_format ("text" or
// "json") to the default logger. Unknown names are an error (the config loader already refuses
// them; this keeps the function safe for other callers).
Status configureLogging(std::string_view level, std::string_view format);

// Logs one librdkafka log line (syslog severity 0–7, the facility such as "FAIL" or "REQTMOUT",
// the client name and its message) through the default logger, under the "kafka" component.
void logFromKafka(int severity, std::string_view facility, std::string_view client, std::string_view message);

// RocksDB's messages (the symbol store's, StoreOptions::info_log) as the worker's log lines,
// "rocksdb: …", at the level RocksDB gives them.
std::shared_ptr<rocksdb::Logger> makeRocksdbLogger();

}  // namespace restack::logging
