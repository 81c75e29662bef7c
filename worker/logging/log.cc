#include "worker/logging/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "formats/common/json_text.h"

namespace restack::logging {
namespace {

thread_local const LogContext* t_context = nullptr;

// The logger librdkafka's lines go to: a clone of the default logger (same sinks, same
// formatter) named "kafka", made by configureLogging.
std::mutex g_kafka_logger_mutex;
std::shared_ptr<spdlog::logger> g_kafka_logger;

void appendTime(std::string& out, spdlog::log_clock::time_point time) {
  const auto since_epoch = time.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds).count();
  const std::time_t whole = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char buffer[40];
  const size_t size = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
  out.append(buffer, size);
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03dZ", static_cast<int>(millis));
  out += fraction;
}

// The names of observability.log_level, so that a filter on the log reads like the config.
std::string_view levelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "off";
  }
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& message, spdlog::memory_buf_t& dest) override {
    std::string line;
    line.reserve(128 + message.payload.size());
    line += "{\"time\":\"";
    appendTime(line, message.time);
    line += "\",\"level\":";
    appendJsonString(line, levelName(message.level));
    line += ",\"logger\":";
    appendJsonString(line, message.logger_name.size()
                               ? std::string_view(message.logger_name.data(), message.logger_name.size())
                               : std::string_view("restack"));
    line += ",\"message\":";
    appendJsonString(line, std::string_view(message.payload.data(), message.payload.size()));
    if (const LogContext* context = t_context) {
      if (!context->event_id.empty()) {
        line += ",\"event_id\":";
        appendJsonString(line, context->event_id);
      }
      if (!context->topic.empty()) {
        line += ",\"topic\":";
        appendJsonString(line, context->topic);
      }
      if (context->partition >= 0) line += ",\"partition\":" + std::to_string(context->partition);
      if (context->offset >= 0) line += ",\"offset\":" + std::to_string(context->offset);
    }
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

spdlog::level::level_enum levelOfSeverity(int severity) {
  if (severity <= 2) return spdlog::level::critical;
  if (severity == 3) return spdlog::level::err;
  if (severity == 4) return spdlog::level::warn;
  if (severity <= 6) return spdlog::level::info;
  return spdlog::level::debug;
}

}  // namespace

ScopedLogContext::ScopedLogContext(const LogContext& context) : previous_(t_context), context_(context) {
  t_context = &context_;
}

ScopedLogContext::~ScopedLogContext() {
  t_context = previous_;
}

const LogContext* currentLogContext() {
  return t_context;
}

std::unique_ptr<spdlog::formatter> makeJsonFormatter() {
  return std::make_unique<JsonFormatter>();
}

Status configureLogging(std::string_view level, std::string_view format) {
  static constexpr std::string_view kLevels[] = {"trace", "debug", "info", "warn", "error"};
  bool known = false;
  for (std::string_view name : kLevels) known = known || name == level;
  if (!known)
    return invalidArgument("log level '" + std::string(level) + "' (expected trace, debug, info, warn or error)");
  if (format != "text" && format != "json")
    return invalidArgument("log format '" + std::string(format) + "' (expected text or json)");

  spdlog::set_level(spdlog::level::from_str(std::string(level)));
  if (format == "json") {
    spdlog::set_formatter(makeJsonFormatter());
  } else {
    spdlog::set_formatter(std::make_unique<spdlog::pattern_formatter>());
  }
  std::lock_guard lock(g_kafka_logger_mutex);
  g_kafka_logger = spdlog::default_logger()->clone("kafka");
  return Status::ok();
}

void logFromKafka(int severity, std::string_view facility, std::string_view client, std::string_view message) {
  std::shared_ptr<spdlog::logger> logger;
  {
    std::lock_guard lock(g_kafka_logger_mutex);
    logger = g_kafka_logger;
  }
  if (!logger) logger = spdlog::default_logger();
  logger->log(levelOfSeverity(severity), "{} {}: {}", client, facility, message);
}

namespace {

class RocksdbLogger : public rocksdb::Logger {
 public:
  RocksdbLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list arguments) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, arguments);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list arguments) override {
    if (level < GetInfoLogLevel()) return;
    char line[1024];
    std::vsnprintf(line, sizeof(line), format, arguments);
    spdlog::level::level_enum mapped = spdlog::level::info;
    switch (level) {
      case rocksdb::InfoLogLevel::DEBUG_LEVEL:
        mapped = spdlog::level::debug;
        break;
      case rocksdb::InfoLogLevel::INFO_LEVEL:
      case rocksdb::InfoLogLevel::HEADER_LEVEL:
        mapped = spdlog::level::info;
        break;
      case rocksdb::InfoLogLevel::WARN_LEVEL:
        mapped = spdlog::level::warn;
        break;
      default:
        mapped = spdlog::level::err;
        break;
    }
    spdlog::default_logger()->log(mapped, "rocksdb: {}", line);
  }
};

}  // namespace

std::shared_ptr<rocksdb::Logger> makeRocksdbLogger() {
  return std::make_shared<RocksdbLogger>();
}

}  // namespace restack::logging
