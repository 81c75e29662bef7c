// Where the Java Kafka client's default partitioner puts a keyed record, written from the Kafka
// spec (org.apache.kafka.common.utils.Utils.murmur2; partition = (hash & 0x7fffffff) % n). Tests
// use it as an independent witness of Restack's and librdkafka's partitioning.
#pragma once

#include <cstdint>
#include <string_view>

namespace restack::testkafka {

// Kafka's murmur2: MurmurHash2 (32-bit) with seed 0x9747b28c, little-endian 4-byte blocks, the
// tail folded in highest byte first, then the final avalanche.
int32_t javaMurmur2(std::string_view key);

// The partition of `key` among `partitions` under the Java client's default partitioner.
int javaPartitionFor(std::string_view key, int partitions);

}  // namespace restack::testkafka
