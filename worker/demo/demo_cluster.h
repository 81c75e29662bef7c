// The pieces `restack demo` and the load test share: librdkafka's mock cluster with Restack's
// topics, and the embedded sample symbol files and events (worker/demo/samples/).
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "formats/common/status.h"
#include "worker/kafka/upload_message.h"

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_mock_cluster_s rd_kafka_mock_cluster_t;

namespace restack::demo {

// A mock Kafka cluster (one broker) with every Restack topic created, events-side topics with
// `partitions` partitions. It lives as long as this object.
class MockKafka {
 public:
  static Expected<std::unique_ptr<MockKafka>> start(const config::Topics& topics, int partitions);
  ~MockKafka();
  const std::string& bootstrap() const { return bootstrap_; }

 private:
  MockKafka() = default;
  rd_kafka_t* owner_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::string bootstrap_;
};

// A sample symbol file and what it is (samples/manifest.json).
struct SampleUpload {
  std::string file;  // path under worker/demo/samples
  worker::UploadMessage message;
  std::string_view bytes;
};
Expected<std::vector<SampleUpload>> sampleUploads();

// Publishes every upload of samples/manifest.json to the symbols topics.
Status publishSampleSymbols(RdKafka::Producer& producer, const config::Topics& topics,
                            const std::function<void(const std::string& file, const std::string& topic)>& on_published);

// The sample raw events (samples/events.jsonl), one JSON document per entry.
std::vector<std::string> sampleEvents();

// "<app>:<build_id>" of a raw event, as the SDK producer keys it ("demo:unknown" when unreadable).
std::string eventKey(std::string_view event_json);

Status produceRecord(RdKafka::Producer& producer, const std::string& topic, const std::string& key,
                     std::string_view value, const worker::Headers& headers);

std::vector<std::string> splitLines(std::string_view text);

}  // namespace restack::demo
