#include "worker/demo/demo_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <simdjson.h>

#include "worker/demo/embedded_files.h"

namespace restack::demo {
namespace {

std::string_view sample(std::string_view name) {
  for (const auto& file : kEmbeddedFiles) {
    if (file.name == name) return file.bytes;
  }
  return {};
}

}  // namespace

Expected<std::vector<SampleUpload>> sampleUploads() {
  std::string_view manifest = sample("manifest.json");
  if (manifest.empty()) return Error(ErrorCode::kInternal, "the demo samples have no manifest.json");
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(manifest.data(), manifest.size()).get(root)) return malformed("demo manifest.json is not JSON");
  std::vector<SampleUpload> uploads;
  simdjson::dom::array list;
  if (root["uploads"].get_array().get(list)) return malformed("demo manifest.json has no uploads array");
  for (auto entry : list) {
    SampleUpload upload;
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
    upload.bytes = sample(upload.file);
    if (upload.bytes.empty()) return malformed("demo sample " + upload.file + " is missing");
    uploads.push_back(std::move(upload));
  }
  return uploads;
}

Expected<std::unique_ptr<MockKafka>> MockKafka::start(const config::Topics& topics, int partitions) {
  std::unique_ptr<MockKafka> mock(new MockKafka());
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", error, sizeof error);
  mock->owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (!mock->owner_) return Error(ErrorCode::kInternal, std::string("cannot start librdkafka: ") + error);
  mock->cluster_ = rd_kafka_mock_cluster_new(mock->owner_, 1);
  if (!mock->cluster_) return Error(ErrorCode::kInternal, "cannot start the mock Kafka cluster");
  mock->bootstrap_ = rd_kafka_mock_cluster_bootstraps(mock->cluster_);
  for (const auto& [topic, count] : std::vector<std::pair<std::string, int>>{{topics.events, partitions},
                                                                             {topics.symbols, partitions},
                                                                             {topics.symbols_shared, 1},
                                                                             {topics.symbolicated, partitions},
                                                                             {topics.fingerprints, partitions},
                                                                             {topics.dlq, 1},
                                                                             {topics.pending, partitions}}) {
    rd_kafka_mock_topic_create(mock->cluster_, topic.c_str(), count, 1);
  }
  return mock;
}

MockKafka::~MockKafka() {
  // The cluster lives as long as the rd_kafka_t handle that created it.
  if (cluster_) rd_kafka_mock_cluster_destroy(cluster_);
  if (owner_) rd_kafka_destroy(owner_);
}

Status produceRecord(RdKafka::Producer& producer, const std::string& topic, const std::string& key,
                     std::string_view value, const worker::Headers& headers) {
  RdKafka::Headers* kafka_headers = RdKafka::Headers::create();
  for (const auto& [name, text] : headers) kafka_headers->add(name, text);
  while (true) {
    RdKafka::ErrorCode code = producer.produce(topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                                               const_cast<char*>(value.data()), value.size(), key.data(), key.size(), 0,
                                               kafka_headers, nullptr);
    if (code == RdKafka::ERR_NO_ERROR) return Status::ok();
    if (code == RdKafka::ERR__QUEUE_FULL) {
      producer.poll(50);
      continue;
    }
    delete kafka_headers;
    return ioError("cannot produce to " + topic + ": " + RdKafka::err2str(code));
  }
}

Status publishSampleSymbols(RdKafka::Producer& producer, const config::Topics& topics,
                            const std::function<void(const std::string&, const std::string&)>& on_published) {
  auto uploads = sampleUploads();
  if (!uploads) return uploads.error();
  for (const SampleUpload& upload : *uploads) {
    const auto& meta = upload.message.meta;
    const std::string& topic = meta.shared ? topics.symbols_shared : topics.symbols;
    const std::string key = meta.shared ? upload.file : meta.app + ":" + meta.build_id;
    RESTACK_RETURN_IF_ERROR(
        produceRecord(producer, topic, key, upload.bytes, worker::encodeUploadHeaders(upload.message)));
    if (on_published) on_published(upload.file, topic);
  }
  return Status::ok();
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

std::vector<std::string> sampleEvents() {
  std::vector<std::string> events;
  for (std::string& line : splitLines(sample("events.jsonl"))) {
    if (!line.empty()) events.push_back(std::move(line));
  }
  return events;
}

std::string eventKey(std::string_view event_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element event;
  std::string_view app, build;
  if (parser.parse(event_json.data(), event_json.size()).get(event) || event["app"].get_string().get(app) ||
      event["build_id"].get_string().get(build)) {
    return "demo:unknown";
  }
  return std::string(app) + ":" + std::string(build);
}

}  // namespace restack::demo
