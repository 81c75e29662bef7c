// Owning handles for librdkafka's C objects, so every early return in a test or helper frees
// them (and a consumer is closed before it is destroyed, which leaves its group cleanly).
#pragma once

#include <librdkafka/rdkafka.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "formats/common/status.h"

namespace restack::testkafka {

struct KafkaClientDeleter {
  void operator()(rd_kafka_t* client) const;
};
struct TopicPartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const { rd_kafka_topic_partition_list_destroy(list); }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* event) const { rd_kafka_event_destroy(event); }
};
struct MessageDeleter {
  void operator()(rd_kafka_message_t* message) const { rd_kafka_message_destroy(message); }
};
struct ErrorDeleter {
  void operator()(rd_kafka_error_t* error) const { rd_kafka_error_destroy(error); }
};

// Destroying a KafkaClient closes it first when it is a consumer.
using KafkaClient = std::unique_ptr<rd_kafka_t, KafkaClientDeleter>;
using TopicPartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, TopicPartitionListDeleter>;
using Queue = std::unique_ptr<rd_kafka_queue_t, QueueDeleter>;
using Event = std::unique_ptr<rd_kafka_event_t, EventDeleter>;
using Message = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;
using KafkaError = std::unique_ptr<rd_kafka_error_t, ErrorDeleter>;

// librdkafka configuration as plain strings ("bootstrap.servers" -> "127.0.0.1:9092").
using KafkaProperties = std::map<std::string, std::string>;

// Creates a producer or consumer from `properties`; the error names the property librdkafka
// rejected. A consumer gets its partition queue redirected to the consumer queue so that one
// rd_kafka_consumer_poll() serves everything. `customize` may install callbacks (delivery
// reports, rebalance) and an opaque on the configuration before the client is created.
Expected<KafkaClient> makeClient(rd_kafka_type_t type, const KafkaProperties& properties,
                                 const std::function<void(rd_kafka_conf_t*)>& customize = {});

// "Local: Timed out (-185)" style text for an error code.
std::string describeKafkaError(rd_kafka_resp_err_t error);

}  // namespace restack::testkafka
