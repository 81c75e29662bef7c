#include "worker/demo/demo_runner.h"

#include <librdkafka/rdkafkacpp.h>
#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <thread>

#include "formats/common/temp_dir.h"
#include "formats/stack/stack_line.h"
#include "worker/demo/demo_cluster.h"
#include "worker/kafka/clients.h"
#include "worker/kafka/metrics.h"
#include "worker/kafka/upload_message.h"
#include "worker/kafka/worker.h"

namespace restack::demo {
namespace {

using Clock = std::chrono::steady_clock;

// Tabs as four spaces, so both columns indent alike.
std::string untab(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\t')
      out.append("    ");
    else
      out.push_back(c);
  }
  return out;
}

std::string fit(std::string_view line, size_t width) {
  std::string text = untab(line);
  if (text.size() > width) text = text.substr(0, width - 1) + "~";
  text.resize(width, ' ');
  return text;
}

void printEvent(const std::string& restored_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element event;
  if (parser.parse(restored_json).get(event)) {
    std::cout << restored_json << "\n";
    return;
  }
  std::string_view platform, kind, id, status, fingerprint;
  (void)event["platform"].get_string().get(platform);
  (void)event["kind"].get_string().get(kind);
  (void)event["event_id"].get_string().get(id);
  (void)event["symbolication"]["status"].get_string().get(status);
  (void)event["fingerprint"]["fingerprint"].get_string().get(fingerprint);
  constexpr size_t kWidth = 78;
  std::cout << "\n== " << platform << " " << kind << " " << id << "  symbolication: " << status
            << "  fingerprint: " << fingerprint << "\n";
  simdjson::dom::array threads;
  if (event["threads"].get_array().get(threads)) return;
  for (auto thread : threads) {
    std::string_view name;
    (void)thread["name"].get_string().get(name);
    auto print = [&](simdjson::dom::element holder) {
      std::string_view raw_text, restored_text;
      simdjson::dom::array frames;
      if (holder["stack"].get_string().get(raw_text) || holder["restored"].get_string().get(restored_text) ||
          holder["frames"].get_array().get(frames)) {
        return;
      }
      std::cout << "-- thread " << name << "\n" << fit("raw", kWidth) << " | restored\n";
      auto left = splitLines(raw_text), right = splitLines(restored_text);
      std::vector<simdjson::dom::element> entries(frames.begin(), frames.end());
      size_t next_entry = 0, next_right = 0;
      for (const std::string& raw_line : left) {
        // How many restored lines this raw line became: one per output frame of it (inlined
        // frames and "<OR>" alternatives included), none when it was removed (R8 synthesized).
        size_t lines = 1;
        std::string_view entry_raw;
        if (next_entry < entries.size() && !entries[next_entry]["raw"].get_string().get(entry_raw) &&
            entry_raw == raw_line) {
          lines = 0;
          while (next_entry < entries.size()) {
            simdjson::dom::element entry = entries[next_entry++];
            ++lines;
            simdjson::dom::array alternatives;
            if (!entry["alternatives"].get_array().get(alternatives)) {
              for (auto alternative : alternatives) lines += simdjson::dom::array(alternative).size();
            }
            bool inlined = false;
            if (entry["inlined"].get_bool().get(inlined) || !inlined) break;
          }
        } else if (stack::parseStackLine(raw_line).isFrame()) {
          lines = 0;
        }
        for (size_t k = 0; k < std::max<size_t>(lines, 1); ++k) {
          std::string restored = k < lines && next_right < right.size() ? right[next_right++] : "";
          std::cout << fit(k == 0 ? raw_line : "", kWidth) << " | " << untab(restored) << "\n";
        }
      }
      while (next_right < right.size()) std::cout << fit("", kWidth) << " | " << untab(right[next_right++]) << "\n";
    };
    print(thread);
    simdjson::dom::array samples;
    if (!thread["samples"].get_array().get(samples)) {
      for (auto entry : samples) print(entry);
    }
  }
}

}  // namespace

int runDemo(const DemoOptions& options) {
  spdlog::set_level(options.verbose ? spdlog::level::info : spdlog::level::warn);
  config::Config config;
  config.kafka.group_id = "restack-demo";
  config.kafka.session_timeout_ms = 6000;
  config.observability.http_port = 0;
  config.worker.batch_linger_ms = 20;
  // The demo runs on librdkafka's mock cluster, which has no transactions (librdkafka 2.0.2).
  config.kafka.delivery = "at_least_once";
  const auto& topics = config.kafka.topics;
  auto mock = MockKafka::start(topics, 3);
  if (!mock) {
    std::cerr << "restack demo: " << mock.error().message() << "\n";
    return 1;
  }
  config.kafka.brokers = (*mock)->bootstrap();
  std::cout << "mock Kafka cluster at " << config.kafka.brokers << "\n";

  auto producer = worker::makeProducer(config, "restack-demo-producer", nullptr);
  if (!producer) {
    std::cerr << "restack demo: " << producer.error().message() << "\n";
    return 1;
  }
  Status published = publishSampleSymbols(**producer, topics, [](const std::string& file, const std::string& topic) {
    std::cout << "published symbol file " << file << " to " << topic << "\n";
  });
  if (!published) {
    std::cerr << "restack demo: " << published.error().message() << "\n";
    return 1;
  }
  const std::vector<std::string> events = sampleEvents();
  for (const std::string& line : events) {
    Status sent = produceRecord(**producer, topics.events, eventKey(line), line, {});
    if (!sent) {
      std::cerr << "restack demo: " << sent.error().message() << "\n";
      return 1;
    }
  }
  const size_t event_count = events.size();
  (*producer)->flush(10000);
  std::cout << "published " << event_count << " raw events to " << topics.events << "\n";

  auto store_dir = TempDir::create("restack-demo-store-");
  if (!store_dir) {
    std::cerr << "restack demo: " << store_dir.error().message() << "\n";
    return 1;
  }
  config.store.path = store_dir->path();
  worker::Metrics metrics;
  auto worker = worker::Worker::create(config, metrics);
  if (!worker) {
    std::cerr << "restack demo: cannot start the worker: " << worker.error().message() << "\n";
    return 1;
  }
  std::atomic<bool> stop{false};
  Status worker_status;
  std::thread worker_thread([&] { worker_status = (*worker)->run(stop); });

  // Read the outputs back like a downstream consumer would.
  auto properties = worker::commonProperties(config, "restack-demo-reader");
  properties["group.id"] = "restack-demo-reader";
  properties["auto.offset.reset"] = "earliest";
  properties["session.timeout.ms"] = "6000";
  auto conf = worker::makeConf(properties);
  std::string create_error;
  std::unique_ptr<RdKafka::KafkaConsumer> reader(RdKafka::KafkaConsumer::create(conf->get(), create_error));
  reader->subscribe({topics.symbolicated, topics.dlq});
  std::map<std::string, std::string> restored_by_id;
  std::vector<std::string> dead_letters;
  const auto deadline = Clock::now() + std::chrono::seconds(options.timeout_seconds);
  while (restored_by_id.size() + dead_letters.size() < event_count && Clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> message(reader->consume(200));
    if (message->err() != RdKafka::ERR_NO_ERROR) continue;
    std::string value(static_cast<const char*>(message->payload()), message->len());
    if (message->topic_name() == topics.dlq) {
      std::string reason;
      if (const auto* header_list = message->headers()) {
        for (const auto& header : header_list->get_all()) {
          if (header.key() == "restack.error")
            reason.assign(static_cast<const char*>(header.value()), header.value_size());
        }
      }
      dead_letters.push_back(reason);
      continue;
    }
    simdjson::dom::parser parser;
    simdjson::dom::element event;
    std::string_view id;
    if (!parser.parse(value).get(event) && !event["event_id"].get_string().get(id)) {
      restored_by_id[std::string(id)] = value;
    }
  }
  reader->close();
  stop = true;
  worker_thread.join();

  size_t frames = metrics.frames_total, restored_frames = metrics.frames_symbolicated;
  for (const std::string& line : events) {
    simdjson::dom::parser parser;
    simdjson::dom::element event;
    std::string_view id;
    if (line.empty() || parser.parse(line).get(event) || event["event_id"].get_string().get(id)) continue;
    auto found = restored_by_id.find(std::string(id));
    if (found != restored_by_id.end()) printEvent(found->second);
  }
  for (const std::string& reason : dead_letters) std::cout << "\n== dead-lettered event: " << reason << "\n";
  std::cout << "\n"
            << restored_by_id.size() << " of " << event_count << " events restored, " << dead_letters.size()
            << " dead-lettered; " << restored_frames << " of " << frames << " frames symbolicated; "
            << metrics.uploads_ingested << " symbol files ingested\n";
  if (!worker_status) {
    std::cerr << "restack demo: the worker failed: " << worker_status.error().message() << "\n";
    return 1;
  }
  if (restored_by_id.size() + dead_letters.size() != event_count) {
    std::cerr << "restack demo: timed out waiting for the restored events\n";
    return 1;
  }
  return 0;
}

}  // namespace restack::demo
