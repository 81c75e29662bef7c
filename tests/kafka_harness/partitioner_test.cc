// Keyed records land where the Java client puts them. SDK producers partition raw events and
// symbol uploads with the Java client's default partitioner (murmur2 of the key), and Restack's
// co-partitioning of restack.events.raw with restack.symbols relies on librdkafka's
// `partitioner=murmur2_random` choosing the same partition for the same key.
//
// Three witnesses must agree for every key: Kafka's own Java producer (kafka.tools.
// ConsoleProducer from the broker's jars), librdkafka, and murmur2 written here from the
// Kafka spec (org.apache.kafka.common.utils.Utils.murmur2; partition = (hash & 0x7fffffff) % n).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/kafka_harness/broker_fixture.h"
#include "tests/support/java_partitioner.h"
#include "tests/support/kafka_records.h"

namespace restack::testkafka {
namespace {

// Keys shaped like Restack's (`<app>:<build_id>`), non-ASCII app names, and random printable
// keys of every length from 1 to 48 (each tail length of the hash's 4-byte blocks many times).
// No tabs or newlines: the console producer reads "key<TAB>value" lines.
std::vector<std::string> sampleKeys() {
  std::vector<std::string> keys = {"shopee:7.8.0(78007)",      "a",          "ab",         "abc", "abcd",
                                   "com.example.app:1.0.0(1)", "应用:2.3.4", "ünïcødé:1.0"};
  const char* apps[] = {"shopee", "lazada", "garena", "mdap-demo", "rn.app", "h5"};
  for (int i = 0; i < 120; ++i) {
    keys.push_back(std::string(apps[i % 6]) + ":" + std::to_string(i / 10) + "." + std::to_string(i % 10) + ".0(" +
                   std::to_string(1000 + i * 7) + ")");
  }
  std::mt19937 random(20240611);
  std::uniform_int_distribution<int> printable(0x21, 0x7e);
  for (int i = 0; i < 192; ++i) {
    std::string key;
    const int length = 1 + i % 48;
    for (int c = 0; c < length; ++c) key += static_cast<char>(printable(random));
    keys.push_back(key);
  }
  std::set<std::string> unique(keys.begin(), keys.end());
  return {unique.begin(), unique.end()};
}

std::map<std::string, int> partitionByKey(const std::vector<KafkaRecord>& records) {
  std::map<std::string, int> result;
  for (const KafkaRecord& record : records) {
    if (record.key) result[*record.key] = record.partition;
  }
  return result;
}

class PartitionerTest : public BrokerTest, public ::testing::WithParamInterface<int> {};

TEST_P(PartitionerTest, Murmur2RandomMatchesTheJavaProducer) {
  const int partitions = GetParam();
  const std::string java_topic = "keys.java." + std::to_string(partitions);
  const std::string rdkafka_topic = "keys.rdkafka." + std::to_string(partitions);
  ASSERT_TRUE(broker().createTopics({{java_topic, partitions, {}}, {rdkafka_topic, partitions, {}}}));
  const std::vector<std::string> keys = sampleKeys();

  std::string lines;
  std::vector<KafkaRecord> records;
  for (size_t i = 0; i < keys.size(); ++i) {
    lines += keys[i] + "\t" + std::to_string(i) + "\n";
    records.push_back({.key = keys[i], .value = std::to_string(i)});
  }
  auto java = broker().runTool("kafka.tools.ConsoleProducer",
                               {"--bootstrap-server", broker().bootstrap(), "--topic", java_topic, "--property",
                                "parse.key=true", "--property", "key.separator=\t", "--producer-property", "acks=all"},
                               lines);
  ASSERT_TRUE(java) << java.error().message();
  auto sent = produceAll(broker().bootstrap(), rdkafka_topic, records);
  ASSERT_TRUE(sent) << sent.error().message();

  auto java_records = consumeAll(broker().bootstrap(), java_topic);
  ASSERT_TRUE(java_records) << java_records.error().message();
  auto rdkafka_records = consumeAll(broker().bootstrap(), rdkafka_topic);
  ASSERT_TRUE(rdkafka_records) << rdkafka_records.error().message();
  const auto java_partition = partitionByKey(*java_records);
  const auto rdkafka_partition = partitionByKey(*rdkafka_records);
  ASSERT_EQ(java_partition.size(), keys.size()) << "the Java producer lost records: " << *java;
  ASSERT_EQ(rdkafka_partition.size(), keys.size());

  std::set<int> used;
  int mismatches = 0;
  for (const std::string& key : keys) {
    const int expected = javaPartitionFor(key, partitions);
    used.insert(java_partition.at(key));
    if (java_partition.at(key) != rdkafka_partition.at(key) || java_partition.at(key) != expected) {
      if (++mismatches <= 10) {
        ADD_FAILURE() << "key '" << key << "': Java producer -> " << java_partition.at(key)
                      << ", librdkafka murmur2_random -> " << rdkafka_partition.at(key) << ", murmur2 from the spec -> "
                      << expected;
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << keys.size() << " keys";
  // Hundreds of keys reach every partition; a partitioner that ignored keys would not.
  EXPECT_EQ(static_cast<int>(used.size()), partitions);
}

// 12 is a typical production count; 7 (prime) catches an off-by-one in the modulo.
INSTANTIATE_TEST_SUITE_P(PartitionCounts, PartitionerTest, ::testing::Values(7, 12),
                         [](const auto& info) { return std::to_string(info.param) + "Partitions"; });

}  // namespace
}  // namespace restack::testkafka
