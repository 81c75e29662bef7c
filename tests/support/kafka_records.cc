#include "tests/support/kafka_records.h"

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <tuple>

namespace restack::testkafka {
namespace {

using Clock = std::chrono::steady_clock;

std::optional<std::string> bytesOrNull(const void* data, size_t size) {
  if (data == nullptr) return std::nullopt;
  return std::string(static_cast<const char*>(data), size);
}

KafkaRecord toRecord(const rd_kafka_message_t& message) {
  KafkaRecord record;
  record.partition = message.partition;
  record.offset = message.offset;
  record.key = bytesOrNull(message.key, message.key_len);
  record.value = bytesOrNull(message.payload, message.len);
  record.timestamp_ms = rd_kafka_message_timestamp(&message, nullptr);
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name;
    const void* value;
    size_t size;
    for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
      record.headers.push_back({name, bytesOrNull(value, size)});
    }
  }
  return record;
}

Expected<int> topicPartitionCount(rd_kafka_t* client, const std::string& topic) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (true) {
    const rd_kafka_metadata_t* metadata = nullptr;
    std::optional<int> partitions;
    rd_kafka_resp_err_t error = rd_kafka_metadata(client, 1, nullptr, &metadata, 5000);
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR) {
      for (int t = 0; t < metadata->topic_cnt; ++t) {
        if (topic == metadata->topics[t].topic && metadata->topics[t].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
          partitions = metadata->topics[t].partition_cnt;
        }
      }
      rd_kafka_metadata_destroy(metadata);
      if (partitions) return *partitions;
    }
    if (Clock::now() > deadline) {
      return notFound("topic " + topic + " does not exist (or the broker is unreachable: " + describeKafkaError(error) +
                      ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string uniqueReaderGroup() {
  static std::atomic<unsigned> counter{0};
  return "restack-test-reader-" + std::to_string(std::random_device{}()) + "-" + std::to_string(counter++);
}

}  // namespace

std::optional<std::string> KafkaRecord::header(std::string_view name) const {
  for (const KafkaHeader& h : headers) {
    if (h.name == name) return h.value;
  }
  return std::nullopt;
}

Expected<std::vector<KafkaRecord>> consumeAll(const std::string& bootstrap, const std::string& topic,
                                              const ConsumeOptions& options) {
  KafkaProperties properties = {
      {"bootstrap.servers", bootstrap},
      // Never joined (partitions are assigned by hand) and never committed; librdkafka still
      // wants a group id for a consumer.
      {"group.id", uniqueReaderGroup()},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"enable.partition.eof", "true"},
      {"isolation.level", options.isolation_level},
  };
  for (const auto& [name, value] : options.properties) properties[name] = value;
  auto consumer = makeClient(RD_KAFKA_CONSUMER, properties);
  if (!consumer) return consumer.error();
  rd_kafka_t* client = consumer->get();

  auto partitions = topicPartitionCount(client, topic);
  if (!partitions) return partitions.error();
  TopicPartitionList assignment(rd_kafka_topic_partition_list_new(*partitions));
  for (int p = 0; p < *partitions; ++p) {
    rd_kafka_topic_partition_list_add(assignment.get(), topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  if (rd_kafka_resp_err_t error = rd_kafka_assign(client, assignment.get())) {
    return ioError("assigning " + topic + " failed: " + describeKafkaError(error));
  }

  std::vector<KafkaRecord> records;
  std::vector<bool> at_end(*partitions, false);
  const auto started = Clock::now();
  auto last_activity = started;
  while (true) {
    Message message(rd_kafka_consumer_poll(client, 100));
    const auto now = Clock::now();
    if (message) {
      if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (message->partition >= 0 && message->partition < *partitions) {
          at_end[message->partition] = true;
        }
      } else if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return ioError("consuming " + topic + " failed: " + rd_kafka_message_errstr(message.get()));
      } else {
        records.push_back(toRecord(*message));
        if (message->partition >= 0 && message->partition < *partitions) {
          at_end[message->partition] = false;
        }
        last_activity = now;
      }
    }
    const bool all_at_end = std::all_of(at_end.begin(), at_end.end(), [](bool b) { return b; });
    if (all_at_end && now - last_activity >= options.idle) break;
    if (now - started >= options.max_wait) {
      return ioError("consuming " + topic + " did not reach the end of every partition within " +
                     std::to_string(options.max_wait.count()) + " ms (" + std::to_string(records.size()) +
                     " records read)");
    }
  }
  std::sort(records.begin(), records.end(), [](const KafkaRecord& a, const KafkaRecord& b) {
    return std::tie(a.partition, a.offset) < std::tie(b.partition, b.offset);
  });
  return records;
}

namespace {

struct DeliveryState {
  std::vector<KafkaRecord>* records = nullptr;
  std::vector<bool> delivered;
  std::string first_error;
};

void onDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* state = static_cast<DeliveryState*>(opaque);
  const auto index = reinterpret_cast<uintptr_t>(message->_private);
  if (index >= state->delivered.size()) return;
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (state->first_error.empty()) {
      state->first_error = "record " + std::to_string(index) + ": " + describeKafkaError(message->err);
    }
    return;
  }
  state->delivered[index] = true;
  (*state->records)[index].partition = message->partition;
  (*state->records)[index].offset = message->offset;
}

}  // namespace

Expected<std::vector<KafkaRecord>> produceAll(const std::string& bootstrap, const std::string& topic,
                                              const std::vector<KafkaRecord>& records, const ProduceOptions& options) {
  KafkaProperties properties = {
      {"bootstrap.servers", bootstrap},
      {"partitioner", "murmur2_random"},
      {"acks", "all"},
      {"enable.idempotence", "true"},
      {"linger.ms", "5"},
  };
  for (const auto& [name, value] : options.properties) properties[name] = value;

  std::vector<KafkaRecord> sent = records;
  DeliveryState state{&sent, std::vector<bool>(records.size(), false), ""};
  auto producer = makeClient(RD_KAFKA_PRODUCER, properties, [&](rd_kafka_conf_t* conf) {
    rd_kafka_conf_set_dr_msg_cb(conf, onDelivery);
    rd_kafka_conf_set_opaque(conf, &state);
  });
  if (!producer) return producer.error();
  rd_kafka_t* client = producer->get();

  for (size_t i = 0; i < records.size(); ++i) {
    const KafkaRecord& record = records[i];
    rd_kafka_headers_t* headers = nullptr;
    if (!record.headers.empty()) {
      headers = rd_kafka_headers_new(record.headers.size());
      for (const KafkaHeader& h : record.headers) {
        rd_kafka_header_add(headers, h.name.data(), static_cast<ssize_t>(h.name.size()),
                            h.value ? h.value->data() : nullptr, h.value ? static_cast<ssize_t>(h.value->size()) : 0);
      }
    }
    // librdkafka's RD_KAFKA_V_* macros cast their arguments without parentheses: plain locals.
    const void* key = record.key ? record.key->data() : nullptr;
    const size_t key_size = record.key ? record.key->size() : 0;
    void* value = record.value ? const_cast<char*>(record.value->data()) : nullptr;
    const size_t value_size = record.value ? record.value->size() : 0;
    const int32_t partition = record.partition >= 0 ? record.partition : RD_KAFKA_PARTITION_UA;
    const int64_t timestamp = record.timestamp_ms >= 0 ? record.timestamp_ms : 0;
    rd_kafka_resp_err_t error;
    do {
      error =
          rd_kafka_producev(client, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, key_size),
                            RD_KAFKA_V_VALUE(value, value_size), RD_KAFKA_V_TIMESTAMP(timestamp),
                            RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(i)), RD_KAFKA_V_END);
      if (error == RD_KAFKA_RESP_ERR__QUEUE_FULL) rd_kafka_poll(client, 100);
    } while (error == RD_KAFKA_RESP_ERR__QUEUE_FULL);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (headers != nullptr) rd_kafka_headers_destroy(headers);  // not taken over on failure
      return ioError("producing record " + std::to_string(i) + " to " + topic +
                     " failed: " + describeKafkaError(error));
    }
    rd_kafka_poll(client, 0);
  }
  rd_kafka_resp_err_t flushed = rd_kafka_flush(client, static_cast<int>(options.timeout.count()));
  if (!state.first_error.empty()) return ioError("producing to " + topic + " failed: " + state.first_error);
  if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR ||
      !std::all_of(state.delivered.begin(), state.delivered.end(), [](bool b) { return b; })) {
    return ioError("not every record to " + topic + " was acknowledged within " +
                   std::to_string(options.timeout.count()) + " ms");
  }
  return sent;
}

std::vector<KafkaRecord> waitForRecords(const std::string& bootstrap, const std::string& topic, size_t count,
                                        std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<KafkaRecord> records;
  ConsumeOptions options;
  options.idle = std::chrono::milliseconds(200);
  while (true) {
    auto got = consumeAll(bootstrap, topic, options);
    if (got) records = std::move(*got);
    if (records.size() >= count || std::chrono::steady_clock::now() > deadline) return records;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

}  // namespace restack::testkafka
