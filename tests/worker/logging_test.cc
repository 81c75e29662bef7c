// Log lines in JSON (worker/logging/log.h): every line, the worker's own and librdkafka's, is one
// JSON object that a log pipeline can parse, with the event's coordinates where a line is about
// one event.
#include <gtest/gtest.h>
#include <librdkafka/rdkafkacpp.h>
#include <simdjson.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "worker/kafka/clients.h"
#include "worker/logging/log.h"

namespace restack {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Captures the default logger's output for one test, and puts the previous logger back after.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_, /*force_flush=*/true);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("restack", sink));
  }
  ~CapturedLog() {
    spdlog::set_default_logger(previous_);
    EXPECT_TRUE(logging::configureLogging("info", "text"));
  }
  std::string text() const { return stream_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream stream_;
};

TEST(JsonLogs, EveryLineIsOneObjectWithTheEventItIsAbout) {
  CapturedLog log;
  ASSERT_TRUE(logging::configureLogging("info", "json"));
  spdlog::info("worker starting: store {}", "/var/lib/restack");
  {
    const logging::ScopedLogContext context(
        {.event_id = "e-\"42\"", .topic = "restack.events.raw", .partition = 3, .offset = 1017});
    spdlog::warn("event sent to the DLQ: malformed_event: line 1:\n\t\"unexpected\" \xff byte");
  }
  spdlog::debug("below the level: not written");
  spdlog::error("after the event");

  const auto written = lines(log.text());
  ASSERT_EQ(written.size(), 3u) << log.text();
  simdjson::dom::parser parser;
  std::vector<simdjson::dom::element> objects;
  for (const std::string& line : written) {
    auto parsed = parser.parse(line);
    ASSERT_FALSE(parsed.error()) << line;
    simdjson::dom::object object;
    ASSERT_FALSE(parsed.get(object)) << line;
    EXPECT_TRUE(std::string(object["time"].get_string().value()).ends_with("Z")) << line;
    EXPECT_EQ(std::string(object["logger"].get_string().value()), "restack") << line;
  }
  auto first = parser.parse(written[0]).value();
  EXPECT_EQ(std::string(first["level"].get_string().value()), "info");
  EXPECT_EQ(std::string(first["message"].get_string().value()), "worker starting: store /var/lib/restack");
  EXPECT_TRUE(first["event_id"].error()) << "no event around that line";

  auto second = parser.parse(written[1]).value();
  EXPECT_EQ(std::string(second["level"].get_string().value()), "warn");
  EXPECT_EQ(std::string(second["message"].get_string().value()),
            "event sent to the DLQ: malformed_event: line 1:\n\t\"unexpected\" \xEF\xBF\xBD byte");
  EXPECT_EQ(std::string(second["event_id"].get_string().value()), "e-\"42\"");
  EXPECT_EQ(std::string(second["topic"].get_string().value()), "restack.events.raw");
  EXPECT_EQ(second["partition"].get_int64().value(), 3);
  EXPECT_EQ(second["offset"].get_int64().value(), 1017);

  auto third = parser.parse(written[2]).value();
  EXPECT_EQ(std::string(third["level"].get_string().value()), "error");
  EXPECT_TRUE(third["partition"].error()) << "the context ended with its scope";
}

TEST(JsonLogs, UnknownLevelOrFormatIsAnError) {
  EXPECT_FALSE(logging::configureLogging("verbose", "json"));
  EXPECT_FALSE(logging::configureLogging("info", "xml"));
}

// librdkafka logs on its own threads: a client pointed at a closed loopback port logs its failed
// connections, and those lines must come out as JSON from the "kafka" logger, not as
// librdkafka's own "%3|…|FAIL|…" text.
TEST(JsonLogs, LibrdkafkaLinesGoThroughTheSameFormatter) {
  CapturedLog log;
  ASSERT_TRUE(logging::configureLogging("info", "json"));
  worker::KafkaProperties properties;
  properties.set("bootstrap.servers", "127.0.0.1:1");
  properties.set("reconnect.backoff.ms", "10");
  properties.set("reconnect.backoff.max.ms", "50");
  auto conf = worker::makeConf(properties);
  ASSERT_TRUE(conf) << conf.error().message();
  std::string error;
  std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(conf->get(), error));
  ASSERT_TRUE(producer) << error;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (log.text().find("\"logger\":\"kafka\"") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    producer->poll(50);
  }
  producer.reset();

  simdjson::dom::parser parser;
  size_t from_kafka = 0, naming_the_broker = 0;
  for (const std::string& line : lines(log.text())) {
    auto parsed = parser.parse(line);
    ASSERT_FALSE(parsed.error()) << "not JSON: " << line;
    std::string_view logger;
    ASSERT_FALSE(parsed["logger"].get(logger)) << line;
    if (logger == "kafka") {
      ++from_kafka;
      std::string_view message;
      ASSERT_FALSE(parsed["message"].get(message));
      if (message.find("127.0.0.1:1") != std::string_view::npos) ++naming_the_broker;
    }
  }
  EXPECT_GT(from_kafka, 0u) << log.text();
  EXPECT_GT(naming_the_broker, 0u) << log.text();
}

}  // namespace
}  // namespace restack
