// What an assignment of events partitions does before their events are consumed:
//   - a partition assigned when reading its committed offset fails must still be consumed, from
//     that committed offset;
//   - replaying the pending partition gives up only after pending.replay_stall_s without
//     progress, however long a replay that keeps progressing takes.
// (The fault test, scripts/fault-test.sh, lost a partition's events this way when a broker that
// was the group coordinator shut down during a rebalance: librdkafka 2.0.2 gives up on the
// offset query and never fetches the partition.)
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "formats/common/mapped_file.h"
#include "formats/common/temp_dir.h"
#include "tests/support/kafka_records.h"
#include "tests/worker/worker_fixtures.h"
#include "worker/kafka/pending_events.h"

namespace restack::worker_test {
namespace {

using testkafka::KafkaRecord;
using testkafka::waitForRecords;

constexpr int kOffsetFetch = 9;      // Kafka API key
constexpr int kNotCoordinator = 16;  // Kafka error code

KafkaRecord eventRecord(const std::string& id, const NativeLibrary& library) {
  KafkaRecord record;
  record.key = "shop:1.0";
  record.value = nativeCrashEvent(id, "shop", "1.0", library);
  return record;
}

std::multiset<std::string> eventIds(const std::vector<KafkaRecord>& records) {
  std::multiset<std::string> ids;
  for (const KafkaRecord& record : records) {
    Json json;
    if (json.parse(record.value)) ids.insert(stringAt(json.root["event_id"]));
  }
  return ids;
}

TEST(WorkerAssignment, PartitionsAssignedWhileOffsetQueriesFailAreConsumedFromTheirCommittedOffsets) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto store = TempDir::create("worker-assignment-");
  ASSERT_TRUE(store);
  config::Config config = testConfig(kafka.bootstrap(), store->path(), "restack-assignment");
  const auto& topics = config.kafka.topics;
  kafka.createTopics(topics, 2);

  auto file = readFile(library.path);
  ASSERT_TRUE(file);
  KafkaRecord upload;
  upload.key = "shop:1.0";
  upload.value = *file;
  upload.headers = {{"restack.kind", std::string("elf")}, {"restack.file_name", std::string("libcrash.so")}};
  ASSERT_TRUE(testkafka::produceAll(kafka.bootstrap(), topics.symbols, {upload}));
  ASSERT_TRUE(testkafka::produceAll(kafka.bootstrap(), topics.events,
                                    {eventRecord("e1", library), eventRecord("e2", library)}));

  // Every offset query of the first assignment fails, and librdkafka's retries of it too.
  kafka.failRequests(kOffsetFetch, 20, kNotCoordinator);
  auto first = RunningWorker::start(config);
  ASSERT_TRUE(first);
  auto restored = waitForRecords(kafka.bootstrap(), topics.symbolicated, 2, std::chrono::seconds(60));
  EXPECT_EQ(eventIds(restored), (std::multiset<std::string>{"e1", "e2"}))
      << "the events partition assigned while its committed offset could not be read was never consumed";
  ASSERT_TRUE(first->stop());

  // The next assignment fails the same way; it must start at the committed offsets (e1 and e2
  // not again), not at the partition's beginning.
  ASSERT_TRUE(testkafka::produceAll(kafka.bootstrap(), topics.events, {eventRecord("e3", library)}));
  kafka.failRequests(kOffsetFetch, 20, kNotCoordinator);
  auto second = RunningWorker::start(config);
  ASSERT_TRUE(second);
  restored = waitForRecords(kafka.bootstrap(), topics.symbolicated, 3, std::chrono::seconds(60));
  // Whatever might still come late (a repeat) has had its chance.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  restored = waitForRecords(kafka.bootstrap(), topics.symbolicated, 3, std::chrono::seconds(10));
  ASSERT_TRUE(second->stop());
  EXPECT_EQ(eventIds(restored), (std::multiset<std::string>{"e1", "e2", "e3"}));
}

TEST(WorkerAssignment, APendingReplayThatKeepsProgressingCompletesHoweverLongItTakes) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto store = TempDir::create("worker-replay-");
  ASSERT_TRUE(store);
  config::Config config = testConfig(kafka.bootstrap(), store->path(), "restack-replay");
  config.pending.replay_stall_s = 3;
  const auto& topics = config.kafka.topics;
  kafka.createTopics(topics, 1);

  // Events waiting for symbols of build 2.0 (never uploaded), each record produced on its own:
  // the mock broker answers a fetch with one record batch, so the replay takes one round trip
  // per record.
  constexpr size_t kRecords = 30;
  for (size_t i = 0; i < kRecords; ++i) {
    worker::PendingEvent waiting;
    waiting.app = "shop";
    waiting.event_id = "p" + std::to_string(i);
    waiting.input_key = "shop:2.0";
    waiting.provisional_fingerprint = "0123456789abcdef";
    waiting.value = nativeCrashEvent(waiting.event_id, "shop", "2.0", library);
    waiting.enqueued_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    waiting.partition = 0;
    KafkaRecord record;
    record.partition = 0;
    record.key = waiting.key();
    record.value = worker::PendingEvents::encodeRecord(waiting);
    ASSERT_TRUE(testkafka::produceAll(kafka.bootstrap(), topics.pending, {record}));
  }

  // 30 round trips of 300 ms: the replay takes 9 s or more, three times the stall limit, with
  // progress every 300 ms (its first record comes after a few round trips more: the start
  // offset, the first fetch). A limit on the replay's total time would stop the worker.
  kafka.setRoundTrip(300);
  auto worker = RunningWorker::start(config);
  ASSERT_TRUE(worker);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (worker->metrics().pending_events < kRecords && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(worker->metrics().pending_events, kRecords);
  kafka.setRoundTrip(0);
  Status stopped = worker->stop();
  EXPECT_TRUE(stopped) << stopped.error().message();
}

}  // namespace
}  // namespace restack::worker_test
