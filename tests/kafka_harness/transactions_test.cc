// Exactly-once consume-transform-produce against the real broker: outputs and the consumer
// group's input offsets commit together in one transaction, or neither does. librdkafka's mock
// cluster accepts these calls but drops the committed offsets and shows aborted records, so
// only a real broker can prove the worker's "nothing lost, nothing twice" path.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/kafka_harness/broker_fixture.h"
#include "tests/support/kafka_records.h"

namespace restack::testkafka {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kGroup[] = "restack-txn-test";
constexpr char kInput[] = "txn.in";
constexpr char kOutput[] = "txn.out";
constexpr char kFencedOutput[] = "txn.fenced.out";

KafkaProperties consumerProperties(const std::string& bootstrap) {
  return {{"bootstrap.servers", bootstrap},      {"group.id", kGroup},
          {"enable.auto.commit", "false"},       {"auto.offset.reset", "earliest"},
          {"isolation.level", "read_committed"}, {"session.timeout.ms", "6000"},
          {"heartbeat.interval.ms", "500"}};
}

// Polls the subscribed consumer until `count` records arrived (or the deadline passes).
std::vector<KafkaRecord> pollRecords(rd_kafka_t* consumer, size_t count,
                                     std::chrono::seconds timeout = std::chrono::seconds(30)) {
  std::vector<KafkaRecord> records;
  const auto deadline = Clock::now() + timeout;
  while (records.size() < count && Clock::now() < deadline) {
    Message message(rd_kafka_consumer_poll(consumer, 200));
    if (!message || message->err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    KafkaRecord record;
    record.partition = message->partition;
    record.offset = message->offset;
    if (message->key) record.key = std::string(static_cast<const char*>(message->key), message->key_len);
    if (message->payload) {
      record.value = std::string(static_cast<const char*>(message->payload), message->len);
    }
    records.push_back(std::move(record));
  }
  return records;
}

// The next offset to read per partition, as a transaction commits it: last offset + 1.
TopicPartitionList nextOffsets(const std::vector<KafkaRecord>& records) {
  std::map<int32_t, int64_t> next;
  for (const KafkaRecord& record : records) {
    next[record.partition] = std::max(next[record.partition], record.offset + 1);
  }
  TopicPartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(next.size())));
  for (const auto& [partition, offset] : next) {
    rd_kafka_topic_partition_list_add(list.get(), kInput, partition)->offset = offset;
  }
  return list;
}

std::string errorText(const KafkaError& error) {
  return error ? rd_kafka_error_string(error.get()) : "";
}

// Produces one output per input record and hands the inputs' offsets to the transaction.
void produceOutputsAndOffsets(rd_kafka_t* producer, rd_kafka_t* consumer, const std::vector<KafkaRecord>& inputs,
                              const std::string& prefix) {
  for (const KafkaRecord& input : inputs) {
    const std::string value = prefix + *input.value;
    ASSERT_EQ(
        rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(kOutput), RD_KAFKA_V_KEY(input.key->data(), input.key->size()),
                          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
        RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  TopicPartitionList offsets = nextOffsets(inputs);
  rd_kafka_consumer_group_metadata_t* group = rd_kafka_consumer_group_metadata(consumer);
  KafkaError error(rd_kafka_send_offsets_to_transaction(producer, offsets.get(), group, 30000));
  rd_kafka_consumer_group_metadata_destroy(group);
  ASSERT_FALSE(error) << errorText(error);
}

// The group's committed offsets on the input topic, read with OffsetFetch (no group join).
std::map<int32_t, int64_t> committedOffsets(const std::string& bootstrap, int partitions) {
  auto reader = makeClient(RD_KAFKA_CONSUMER, consumerProperties(bootstrap));
  EXPECT_TRUE(reader) << reader.error().message();
  if (!reader) return {};
  TopicPartitionList list(rd_kafka_topic_partition_list_new(partitions));
  for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(list.get(), kInput, p);
  EXPECT_EQ(rd_kafka_committed(reader->get(), list.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  std::map<int32_t, int64_t> result;
  for (int i = 0; i < list->cnt; ++i) result[list->elems[i].partition] = list->elems[i].offset;
  return result;
}

int64_t sumOfOffsets(const std::map<int32_t, int64_t>& offsets) {
  int64_t sum = 0;
  for (const auto& [partition, offset] : offsets) sum += std::max<int64_t>(offset, 0);
  return sum;
}

std::vector<KafkaRecord> inputBatch(const std::string& name, int count) {
  std::vector<KafkaRecord> records;
  for (int i = 0; i < count; ++i) {
    records.push_back({.key = "app" + std::to_string(i % 5) + ":1.0", .value = name + "-" + std::to_string(i)});
  }
  return records;
}

TEST_F(BrokerTest, TransactionCommitsOutputsAndInputOffsetsTogether) {
  constexpr int kPartitions = 3;
  ASSERT_TRUE(broker().createTopics({{kInput, kPartitions, {}}, {kOutput, kPartitions, {}}}));
  ASSERT_TRUE(produceAll(broker().bootstrap(), kInput, inputBatch("first", 30)));

  auto consumer = makeClient(RD_KAFKA_CONSUMER, consumerProperties(broker().bootstrap()));
  ASSERT_TRUE(consumer) << consumer.error().message();
  TopicPartitionList subscription(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(subscription.get(), kInput, RD_KAFKA_PARTITION_UA);
  ASSERT_EQ(rd_kafka_subscribe(consumer->get(), subscription.get()), RD_KAFKA_RESP_ERR_NO_ERROR);

  auto producer = makeClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", broker().bootstrap()},
                                                 {"transactional.id", "restack-txn-test-0"},
                                                 {"partitioner", "murmur2_random"}});
  ASSERT_TRUE(producer) << producer.error().message();
  KafkaError init(rd_kafka_init_transactions(producer->get(), 30000));
  ASSERT_FALSE(init) << errorText(init);

  // Transaction 1: 30 inputs -> 30 outputs + offsets, committed.
  std::vector<KafkaRecord> first = pollRecords(consumer->get(), 30);
  ASSERT_EQ(first.size(), 30u);
  ASSERT_FALSE(KafkaError(rd_kafka_begin_transaction(producer->get())));
  produceOutputsAndOffsets(producer->get(), consumer->get(), first, "restored:");
  KafkaError commit(rd_kafka_commit_transaction(producer->get(), 30000));
  ASSERT_FALSE(commit) << errorText(commit);
  EXPECT_EQ(sumOfOffsets(committedOffsets(broker().bootstrap(), kPartitions)), 30);

  // Transaction 2: 10 more inputs processed, then aborted (a worker that failed mid-batch).
  ASSERT_TRUE(produceAll(broker().bootstrap(), kInput, inputBatch("second", 10)));
  std::vector<KafkaRecord> second = pollRecords(consumer->get(), 10);
  ASSERT_EQ(second.size(), 10u);
  ASSERT_FALSE(KafkaError(rd_kafka_begin_transaction(producer->get())));
  produceOutputsAndOffsets(producer->get(), consumer->get(), second, "aborted:");
  ASSERT_EQ(rd_kafka_flush(producer->get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  KafkaError abort(rd_kafka_abort_transaction(producer->get(), 30000));
  ASSERT_FALSE(abort) << errorText(abort);
  consumer->reset();  // leaves the group

  // Readers of the output see only the committed transaction; the aborted records exist in
  // the log (read_uncommitted sees them) but are filtered out.
  auto committed_view = consumeAll(broker().bootstrap(), kOutput);
  ASSERT_TRUE(committed_view) << committed_view.error().message();
  ASSERT_EQ(committed_view->size(), 30u);
  for (const KafkaRecord& record : *committed_view) {
    EXPECT_EQ(record.value->rfind("restored:first-", 0), 0u) << *record.value;
  }
  auto raw_view = consumeAll(broker().bootstrap(), kOutput, {.isolation_level = "read_uncommitted"});
  ASSERT_TRUE(raw_view) << raw_view.error().message();
  EXPECT_EQ(raw_view->size(), 40u);

  // The aborted batch's input offsets were not committed: a restarted member of the group
  // resumes exactly at the 10 records whose outputs were thrown away.
  EXPECT_EQ(sumOfOffsets(committedOffsets(broker().bootstrap(), kPartitions)), 30);
  auto restarted = makeClient(RD_KAFKA_CONSUMER, consumerProperties(broker().bootstrap()));
  ASSERT_TRUE(restarted) << restarted.error().message();
  ASSERT_EQ(rd_kafka_subscribe(restarted->get(), subscription.get()), RD_KAFKA_RESP_ERR_NO_ERROR);
  std::vector<KafkaRecord> replayed = pollRecords(restarted->get(), 10);
  std::vector<KafkaRecord> extra = pollRecords(restarted->get(), 1, std::chrono::seconds(2));
  EXPECT_TRUE(extra.empty()) << "replayed past the aborted batch: " << *extra.front().value;
  std::multiset<std::string> replayed_values, second_values;
  for (const KafkaRecord& record : replayed) replayed_values.insert(*record.value);
  for (const KafkaRecord& record : second) second_values.insert(*record.value);
  EXPECT_EQ(replayed_values, second_values);
}

TEST_F(BrokerTest, ANewProducerWithTheSameTransactionalIdFencesTheOldOne) {
  // Two workers that both believe they own a partition (a zombie after a long GC pause or a
  // network split) cannot both commit: the newer init_transactions() fences the older one.
  ASSERT_TRUE(broker().createTopic(kFencedOutput, 1));
  KafkaProperties properties = {{"bootstrap.servers", broker().bootstrap()}, {"transactional.id", "restack-worker-0"}};
  auto zombie = makeClient(RD_KAFKA_PRODUCER, properties);
  ASSERT_TRUE(zombie) << zombie.error().message();
  ASSERT_FALSE(KafkaError(rd_kafka_init_transactions(zombie->get(), 30000)));
  ASSERT_FALSE(KafkaError(rd_kafka_begin_transaction(zombie->get())));

  auto successor = makeClient(RD_KAFKA_PRODUCER, properties);
  ASSERT_TRUE(successor) << successor.error().message();
  ASSERT_FALSE(KafkaError(rd_kafka_init_transactions(successor->get(), 30000)));

  const std::string value = "from the zombie";
  rd_kafka_producev(zombie->get(), RD_KAFKA_V_TOPIC(kFencedOutput),
                    RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
  KafkaError commit(rd_kafka_commit_transaction(zombie->get(), 30000));
  ASSERT_TRUE(commit) << "the fenced producer's commit must fail";
  EXPECT_TRUE(rd_kafka_error_is_fatal(commit.get()) || rd_kafka_error_txn_requires_abort(commit.get()))
      << errorText(commit);

  auto visible = consumeAll(broker().bootstrap(), kFencedOutput);
  ASSERT_TRUE(visible) << visible.error().message();
  EXPECT_TRUE(visible->empty());
}

}  // namespace
}  // namespace restack::testkafka
