#include "worker/demo/demo_runner.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
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
#include "worker/demo/embedded_files.h"
#include "worker/kafka/clients.h"
#include "worker/kafka/metrics.h"
#include "worker/kafka/upload_message.h"
#include "worker/kafka/worker.h"

namespace restack::demo {
namespace {

using Clock = std::chrono::steady_clock;

std::string_view sample(std::string_view name) {
  for (const auto& file : kEmbeddedFiles) {
    if (file.name == name) return file.bytes;
  }
  return {};
}

std::vector<std::string> splitLines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// Tabs as four spaces, so both columns indent alike.
std::string untab(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\t') out.append("    ");
    else out.push_back(c);
  }
  return out;
}

std::string fit(std::string_view line, size_t width) {
  std::string text = untab(line);
  if (text.size() > width) text = text.substr(0, width - 1) + "~";
  text.resize(width, ' ');
  return text;
}

// The mock cluster lives as long as the rd_kafka_t handle that created it.
struct MockCluster {
  rd_kafka_t* owner = nullptr;
  rd_kafka_mock_cluster_t* cluster = nullptr;
  ~MockCluster() {
    if (cluster) rd_kafka_mock_cluster_destroy(cluster);
    if (owner) rd_kafka_destroy(owner);
  }
};

struct Upload {
  std::string file;
  worker::UploadMessage message;
};

Expected<std::vector<Upload>> readManifest() {
  std::string_view manifest = sample("manifest.json");
  if (manifest.empty()) return Error(ErrorCode::kInternal, "the demo samples have no manifest.json");
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(manifest.data(), manifest.size()).get(root)) return malformed("demo manifest.json is not JSON");
  std::vector<Upload> uploads;
  simdjson::dom::array list;
  if (root["uploads"].get_array().get(list)) return malformed("demo manifest.json has no uploads array");
  for (auto entry : list) {
    Upload upload;
    std::string_view text;
    if (!entry["file"].get_string().get(text)) upload.file = std::string(text);
    if (!entry["kind"].get_string().get(text)) {
      auto kind = parseSymbolKind(text);
      if (!kind) return kind.error();
      upload.message.meta.kind = *kind;
    }
    if (!entry["app"].get_string().get(text)) upload.message.meta.app = std::string(text);
    if (!entry["build_id"].get_string().get(text)) upload.message.meta.build_id = std::string(text);
    if (!entry["name"].get_string().get(text)) upload.message.meta.name = std::string(text);
    bool shared = false;
    if (!entry["shared"].get_bool().get(shared)) upload.message.meta.shared = shared;
    upload.message.file_name = upload.file.substr(upload.file.find_last_of('/') + 1);
    if (sample(upload.file).empty()) return malformed("demo sample " + upload.file + " is missing");
    uploads.push_back(std::move(upload));
  }
  return uploads;
}

Status produce(RdKafka::Producer& producer, const std::string& topic, const std::string& key, std::string_view value,
               const worker::Headers& headers) {
  RdKafka::Headers* kafka_headers = RdKafka::Headers::create();
  for (const auto& [name, text] : headers) kafka_headers->add(name, text);
  RdKafka::ErrorCode code =
      producer.produce(topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                       const_cast<char*>(value.data()), value.size(), key.data(), key.size(), 0, kafka_headers, nullptr);
  if (code != RdKafka::ERR_NO_ERROR) {
    delete kafka_headers;
    return ioError("cannot produce to " + topic + ": " + worker::errorText(code));
  }
  return Status::ok();
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
        } else if (stack::parseStackLine(raw_line).kind == stack::LineKind::kJavaFrame) {
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
  auto uploads = readManifest();
  if (!uploads) {
    std::cerr << "restack demo: " << uploads.error().message() << "\n";
    return 1;
  }
  const std::vector<std::string> events = splitLines(sample("events.jsonl"));

  MockCluster mock;
  char error[512];
  rd_kafka_conf_t* owner_conf = rd_kafka_conf_new();
  rd_kafka_conf_set(owner_conf, "log_level", "3", error, sizeof error);
  mock.owner = rd_kafka_new(RD_KAFKA_PRODUCER, owner_conf, error, sizeof error);
  if (!mock.owner) {
    std::cerr << "restack demo: cannot start librdkafka: " << error << "\n";
    return 1;
  }
  mock.cluster = rd_kafka_mock_cluster_new(mock.owner, 1);
  if (!mock.cluster) {
    std::cerr << "restack demo: cannot start the mock Kafka cluster\n";
    return 1;
  }
  config::Config config;
  config.kafka.brokers = rd_kafka_mock_cluster_bootstraps(mock.cluster);
  config.kafka.group_id = "restack-demo";
  config.kafka.session_timeout_ms = 6000;
  config.observability.http_port = 0;
  config.worker.batch_linger_ms = 20;
  const auto& topics = config.kafka.topics;
  for (const auto& [topic, partitions] : std::vector<std::pair<std::string, int>>{
           {topics.events, 3}, {topics.symbols, 3}, {topics.symbols_shared, 1}, {topics.symbolicated, 3},
           {topics.fingerprints, 3}, {topics.dlq, 1}}) {
    rd_kafka_mock_topic_create(mock.cluster, topic.c_str(), partitions, 1);
  }
  std::cout << "mock Kafka cluster at " << config.kafka.brokers << "\n";

  auto producer = worker::makeProducer(config, "restack-demo-producer", nullptr);
  if (!producer) {
    std::cerr << "restack demo: " << producer.error().message() << "\n";
    return 1;
  }
  for (const Upload& upload : *uploads) {
    const auto& meta = upload.message.meta;
    const std::string& topic = meta.shared ? topics.symbols_shared : topics.symbols;
    const std::string key = meta.shared ? upload.file : meta.app + ":" + meta.build_id;
    Status sent = produce(**producer, topic, key, sample(upload.file), worker::encodeUploadHeaders(upload.message));
    if (!sent) {
      std::cerr << "restack demo: " << sent.error().message() << "\n";
      return 1;
    }
    std::cout << "published symbol file " << upload.file << " to " << topic << "\n";
  }
  size_t event_count = 0;
  for (const std::string& line : events) {
    if (line.empty()) continue;
    simdjson::dom::parser parser;
    simdjson::dom::element event;
    std::string key = "demo:unknown";
    if (!parser.parse(line).get(event)) {
      std::string_view app, build;
      if (!event["app"].get_string().get(app) && !event["build_id"].get_string().get(build)) {
        key = std::string(app) + ":" + std::string(build);
      }
    }
    Status sent = produce(**producer, topics.events, key, line, {});
    if (!sent) {
      std::cerr << "restack demo: " << sent.error().message() << "\n";
      return 1;
    }
    ++event_count;
  }
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
          if (header.key() == "restack.error") reason.assign(static_cast<const char*>(header.value()), header.value_size());
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
  std::cout << "\n" << restored_by_id.size() << " of " << event_count << " events restored, " << dead_letters.size()
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
