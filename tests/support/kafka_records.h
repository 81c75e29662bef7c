// Reading and writing whole topics in tests: produce a list of records, consume everything a
// topic holds (key, value, headers, partition, offset) until it stays idle.
//
//   auto sent = produceAll(broker.bootstrap(), "restack.events.raw",
//                          {{.key = "shopee:7.8.0(78007)", .value = event_json}});
//   auto got = consumeAll(broker.bootstrap(), "restack.events.symbolicated");
//   for (const KafkaRecord& r : *got) ... r.partition, r.key, r.header("restack-error") ...
//
// consumeAll does not join a consumer group: it assigns every partition from the beginning, so
// it neither waits for a rebalance nor commits offsets that could disturb the group under test.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "tests/support/rdkafka_handles.h"

namespace restack::testkafka {

struct KafkaHeader {
  std::string name;
  std::optional<std::string> value{};  // nullopt: a header with a null value
};

struct KafkaRecord {
  int32_t partition = -1;  // -1 in produceAll's input: let the partitioner choose
  int64_t offset = -1;
  std::optional<std::string> key{};    // nullopt: a null key (not the same as "")
  std::optional<std::string> value{};  // nullopt: a null value (a tombstone)
  std::vector<KafkaHeader> headers{};
  int64_t timestamp_ms = -1;

  // The value of the first header called `name`, nullopt when absent or null.
  std::optional<std::string> header(std::string_view name) const;
};

struct ConsumeOptions {
  // Stop once every partition reported its end and no record arrived for this long.
  // Default 1 s.
  std::chrono::milliseconds idle{1000};
  // Give up (with what was read so far as an error) after this long. Default 30 s.
  std::chrono::milliseconds max_wait{30000};
  // "read_committed" (default: what downstream consumers of Restack see; records of open or
  // aborted transactions are hidden) or "read_uncommitted".
  std::string isolation_level = "read_committed";
  // Extra librdkafka properties for the consumer. Default: none.
  KafkaProperties properties{};
};

// Every record of every partition of `topic`, ordered by (partition, offset).
Expected<std::vector<KafkaRecord>> consumeAll(const std::string& bootstrap, const std::string& topic,
                                              const ConsumeOptions& options = {});

// Reads `topic` again and again until it holds at least `count` records or `limit` is up; what
// it last read either way.
std::vector<KafkaRecord> waitForRecords(const std::string& bootstrap, const std::string& topic, size_t count,
                                        std::chrono::milliseconds limit = std::chrono::seconds(60));

struct ProduceOptions {
  // Extra librdkafka producer properties. Defaults set here: partitioner=murmur2_random (the
  // Java client's choice, as Restack's producers use), acks=all, enable.idempotence=true.
  KafkaProperties properties{};
  // How long to wait for every record to be acknowledged. Default 30 s.
  std::chrono::milliseconds timeout{30000};
};

// Produces `records` in order and waits until all are acknowledged; returns them with the
// partition and offset the broker assigned.
Expected<std::vector<KafkaRecord>> produceAll(const std::string& bootstrap, const std::string& topic,
                                              const std::vector<KafkaRecord>& records,
                                              const ProduceOptions& options = {});

}  // namespace restack::testkafka
