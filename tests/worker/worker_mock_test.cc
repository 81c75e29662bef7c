// The worker end to end on librdkafka's mock cluster: symbols and events in; restored events,
// fingerprints and DLQ records out; a restart in the middle; a rebalance between two workers.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "formats/common/mapped_file.h"
#include "formats/common/temp_dir.h"
#include "tests/support/kafka_records.h"
#include "tests/support/test_http_server.h"
#include "tests/worker/worker_fixtures.h"
#include "worker/kafka/scratch.h"
#include "worker/pipeline/output_record.h"

namespace restack::worker_test {
namespace {

using testkafka::KafkaRecord;
using testkafka::waitForRecords;
namespace fs = std::filesystem;

KafkaRecord uploadRecord(const NativeLibrary& library, const std::string& app, const std::string& build) {
  auto file = readFile(library.path);
  EXPECT_TRUE(file);
  KafkaRecord record;
  record.key = app + ":" + build;
  record.value = *file;
  record.headers = {{"restack.kind", std::string("elf")}, {"restack.file_name", std::string("libcrash.so")}};
  return record;
}

KafkaRecord eventRecord(const std::string& id, const NativeLibrary& library, const std::string& build = "1.0") {
  KafkaRecord record;
  record.key = "shop:" + build;
  record.value = nativeCrashEvent(id, "shop", build, library);
  return record;
}

std::string eventId(const KafkaRecord& record) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  std::string_view id;
  if (parser.parse(*record.value).get(root) || root["event_id"].get_string().get(id)) return {};
  return std::string(id);
}

void produce(const std::string& bootstrap, const std::string& topic, const std::vector<KafkaRecord>& records) {
  auto sent = testkafka::produceAll(bootstrap, topic, records);
  ASSERT_TRUE(sent) << sent.error().message();
}

TEST(WorkerOnMockCluster, RestoresPublishesFingerprintsAndDeadLetters) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto store = TempDir::create("worker-test-");
  ASSERT_TRUE(store);
  config::Config config = testConfig(kafka.bootstrap(), store->path(), "restack-e2e");
  const auto& topics = config.kafka.topics;
  kafka.createTopics(topics, 3);

  // Events first, their upload second: the worker must still ingest the upload before
  // restoring them (symbols partitions are replayed before events partitions are consumed).
  NativeLibrary unknown;  // an image nobody uploaded
  unknown.build_id = "00112233445566778899aabbccddeeff00112233";
  unknown.crash_address = 0x1000;
  unknown.caller_return = 0x2000;
  std::vector<KafkaRecord> events = {eventRecord("a1", library), eventRecord("a2", library),
                                     eventRecord("missing", unknown, "2.0")};
  KafkaRecord broken;
  broken.key = "shop:1.0";
  broken.value = R"({"app":"shop","build_id":"1.0","platform":"android","threads":{}})";
  events.push_back(broken);
  produce(kafka.bootstrap(), topics.events, events);
  produce(kafka.bootstrap(), topics.symbols, {uploadRecord(library, "shop", "1.0")});
  KafkaRecord bad_upload;
  bad_upload.key = "shop:1.0";
  bad_upload.value = "this is not a symbol file";
  produce(kafka.bootstrap(), topics.symbols, {bad_upload});

  auto worker = RunningWorker::start(config);
  ASSERT_TRUE(worker);
  auto restored = waitForRecords(kafka.bootstrap(), topics.symbolicated, 3);
  auto fingerprints = waitForRecords(kafka.bootstrap(), topics.fingerprints, 3);
  auto dead = waitForRecords(kafka.bootstrap(), topics.dlq, 2);
  ASSERT_TRUE(worker->stop());

  ASSERT_EQ(restored.size(), 3u);
  ASSERT_EQ(fingerprints.size(), 3u);
  std::map<std::string, std::string> status_by_id;
  for (const KafkaRecord& record : restored) {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(*record.value).get(root), simdjson::SUCCESS);
    std::string id = eventId(record);
    status_by_id[id] = std::string(std::string_view(root["symbolication"]["status"]));
    std::string_view fingerprint = root["fingerprint"]["fingerprint"];
    EXPECT_EQ(*record.key, "shop:" + std::string(fingerprint));
    if (id != "missing") {
      EXPECT_EQ(std::string_view(root["threads"].at(0)["frames"].at(0)["function"]), library.expected_crash_function);
    }
  }
  EXPECT_EQ(status_by_id["a1"], "complete");
  EXPECT_EQ(status_by_id["a2"], "complete");
  EXPECT_EQ(status_by_id["missing"], "pending");
  // a1 and a2 are the same crash: one fingerprint, hence the same key.
  std::set<std::string> keys;
  for (const auto& record : fingerprints) keys.insert(*record.key);
  EXPECT_EQ(keys.size(), 2u);

  ASSERT_EQ(dead.size(), 2u);
  bool saw_event = false, saw_upload = false;
  for (const KafkaRecord& record : dead) {
    ASSERT_TRUE(record.header("restack.error"));
    ASSERT_TRUE(record.header("restack.source.topic"));
    if (*record.header("restack.source.topic") == topics.events) {
      saw_event = true;
      EXPECT_EQ(*record.value, *broken.value);
      EXPECT_EQ(*record.key, "shop:1.0");
      EXPECT_NE(record.header("restack.error")->find("'threads' must be an array"), std::string::npos);
    } else {
      saw_upload = true;
      EXPECT_EQ(*record.header("restack.source.topic"), topics.symbols);
      EXPECT_NE(record.header("restack.error")->find("cannot tell what kind"), std::string::npos)
          << *record.header("restack.error");
    }
  }
  EXPECT_TRUE(saw_event);
  EXPECT_TRUE(saw_upload);
  EXPECT_EQ(worker->metrics().uploads_ingested, 1u);
  EXPECT_EQ(worker->metrics().uploads_rejected, 1u);
  // The broken event counts under its reason's code, the one its DLQ record carries.
  for (const KafkaRecord& record : dead) {
    if (*record.header("restack.source.topic") != topics.events) continue;
    ASSERT_TRUE(record.header("restack.error.code"));
    EXPECT_EQ(*record.header("restack.error.code"), "malformed_input");
  }
  EXPECT_EQ(worker->metrics().events_dead_lettered_by_code[static_cast<size_t>(ErrorCode::kMalformedInput)], 1u);
}

// The configuration keeps limits.max_output_bytes under message.max.bytes; should a record still
// be refused as too large (here: a config built without that check), it goes to the DLQ cut
// down and the batch commits, instead of failing again on every retry.
TEST(WorkerOnMockCluster, ARecordTheProducerRefusesGoesToTheDlqInsteadOfFailingTheBatch) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto store = TempDir::create("worker-test-");
  ASSERT_TRUE(store);
  config::Config config = testConfig(kafka.bootstrap(), store->path(), "restack-too-large");
  config.kafka.properties["message.max.bytes"] = "20000";
  const auto& topics = config.kafka.topics;
  kafka.createTopics(topics, 1);
  produce(kafka.bootstrap(), topics.symbols, {uploadRecord(library, "shop", "1.0")});
  KafkaRecord big = eventRecord("big", library);
  big.value->insert(1, R"("attributes":{"blob":")" + std::string(30000, 'b') + R"("},)");
  produce(kafka.bootstrap(), topics.events, {eventRecord("small", library), big});

  auto worker = RunningWorker::start(config);
  ASSERT_TRUE(worker);
  auto restored = waitForRecords(kafka.bootstrap(), topics.symbolicated, 1);
  auto dead = waitForRecords(kafka.bootstrap(), topics.dlq, 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (worker->metrics().batches_committed == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GE(worker->metrics().batches_committed, 1u);
  ASSERT_TRUE(worker->stop());

  ASSERT_EQ(restored.size(), 1u);
  EXPECT_EQ(eventId(restored[0]), "small");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].value->size(), pipeline::kRefusedOutputKeptBytes);
  EXPECT_TRUE(dead[0].value->starts_with(R"({"attributes":{"blob":"bbb)")) << dead[0].value->substr(0, 100);
  EXPECT_EQ(dead[0].header("restack.error.code"), "too_large");
  ASSERT_TRUE(dead[0].header("restack.error"));
  EXPECT_NE(dead[0].header("restack.error")->find("larger than the producer's message.max.bytes"), std::string::npos)
      << *dead[0].header("restack.error");
}

TEST(WorkerOnMockCluster, ARestartInTheMiddleLosesNothingAndRepeatsNothing) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto store = TempDir::create("worker-test-");
  ASSERT_TRUE(store);
  config::Config config = testConfig(kafka.bootstrap(), store->path(), "restack-restart");
  config.worker.batch_size = 5;
  const auto& topics = config.kafka.topics;
  kafka.createTopics(topics, 3);
  produce(kafka.bootstrap(), topics.symbols, {uploadRecord(library, "shop", "1.0")});
  std::vector<KafkaRecord> first, second;
  for (int i = 0; i < 40; ++i) first.push_back(eventRecord("r" + std::to_string(i), library));
  for (int i = 40; i < 60; ++i) second.push_back(eventRecord("r" + std::to_string(i), library));
  produce(kafka.bootstrap(), topics.events, first);

  auto worker = RunningWorker::start(config);
  ASSERT_TRUE(worker);
  waitForRecords(kafka.bootstrap(), topics.symbolicated, 10);
  ASSERT_TRUE(worker->stop());  // SIGTERM's path: finish the batch, commit, leave
  const uint64_t uploads_first_run = worker->metrics().uploads_ingested;
  worker.reset();
  produce(kafka.bootstrap(), topics.events, second);
  // The stop left no scratch folder; what a killed run leaves in one goes when the worker starts.
  const std::string scratch = worker::scratchDirFor(config);
  EXPECT_FALSE(fs::exists(scratch)) << scratch;
  fs::create_directories(scratch + "/restack-download-left");
  std::ofstream(scratch + "/restack-download-left/upload") << "half an upl";

  auto restarted = RunningWorker::start(config);
  ASSERT_TRUE(restarted);
  EXPECT_FALSE(fs::exists(scratch + "/restack-download-left"));
  auto outputs = waitForRecords(kafka.bootstrap(), topics.symbolicated, 60);
  ASSERT_TRUE(restarted->stop());
  std::map<std::string, int> seen;
  for (const auto& record : outputs) ++seen[eventId(record)];
  EXPECT_EQ(seen.size(), 60u);
  for (const auto& [id, count] : seen) EXPECT_EQ(count, 1) << id << " was published " << count << " times";
  // The store remembered how far the symbols topic was applied: nothing was ingested again.
  EXPECT_EQ(uploads_first_run, 1u);
  EXPECT_EQ(restarted->metrics().uploads_ingested, 0u);
}

TEST(WorkerOnMockCluster, TwoWorkersShareTheGroupAndEachReplaysItsOwnSymbols) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto store_a = TempDir::create("worker-a-");
  auto store_b = TempDir::create("worker-b-");
  ASSERT_TRUE(store_a && store_b);
  config::Config config_a = testConfig(kafka.bootstrap(), store_a->path(), "restack-pair");
  config::Config config_b = testConfig(kafka.bootstrap(), store_b->path(), "restack-pair");
  const auto& topics = config_a.kafka.topics;
  kafka.createTopics(topics, 4);
  // Builds spread over partitions; each build's upload is on the partition of its key.
  std::vector<KafkaRecord> uploads, batch1, batch2, batch3;
  for (int b = 0; b < 8; ++b) uploads.push_back(uploadRecord(library, "shop", "b" + std::to_string(b)));
  produce(kafka.bootstrap(), topics.symbols, uploads);
  for (int i = 0; i < 48; ++i) {
    KafkaRecord event = eventRecord("p" + std::to_string(i), library, "b" + std::to_string(i % 8));
    (i < 16 ? batch1 : i < 32 ? batch2 : batch3).push_back(event);
  }

  auto worker_a = RunningWorker::start(config_a);
  ASSERT_TRUE(worker_a);
  produce(kafka.bootstrap(), topics.events, batch1);
  waitForRecords(kafka.bootstrap(), topics.symbolicated, 16);
  auto worker_b = RunningWorker::start(config_b);
  ASSERT_TRUE(worker_b);
  // Wait for the rebalance to give B its share before sending more.
  for (int i = 0; i < 600 && worker_b->metrics().assigned_partitions == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GT(worker_b->metrics().assigned_partitions, 0u);
  produce(kafka.bootstrap(), topics.events, batch2);
  waitForRecords(kafka.bootstrap(), topics.symbolicated, 32);
  ASSERT_TRUE(worker_a->stop());  // B takes every partition over
  produce(kafka.bootstrap(), topics.events, batch3);
  auto outputs = waitForRecords(kafka.bootstrap(), topics.symbolicated, 48);
  ASSERT_TRUE(worker_b->stop());

  std::map<std::string, int> seen;
  for (const auto& record : outputs) {
    ++seen[eventId(record)];
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(*record.value).get(root), simdjson::SUCCESS);
    EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "complete") << *record.value;
  }
  // Nothing is lost. At-least-once: a batch whose commit the group refused while it was
  // rebalancing (librdkafka then treats the partitions as lost) is restored again by the next
  // owner, so duplicates are bounded by one batch per partition that moved.
  EXPECT_EQ(seen.size(), 48u);
  size_t duplicates = 0;
  for (const auto& [id, count] : seen) duplicates += static_cast<size_t>(count - 1);
  EXPECT_LE(duplicates, config_a.worker.batch_size * 4u);
  EXPECT_GT(worker_b->metrics().events_consumed, 0u);
  EXPECT_GT(worker_a->metrics().events_consumed, 0u);
  // B replayed the uploads of the partitions it took over into its own store.
  EXPECT_GT(worker_b->metrics().uploads_ingested, 0u);
}

TEST(WorkerOnMockCluster, EventsWaitingForSymbolsAreRestoredWhenTheyArrive) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto store = TempDir::create("worker-test-");
  ASSERT_TRUE(store);
  config::Config config = testConfig(kafka.bootstrap(), store->path(), "restack-later");
  const auto& topics = config.kafka.topics;
  kafka.createTopics(topics, 3);
  produce(kafka.bootstrap(), topics.events, {eventRecord("late-1", library, "late")});

  auto worker = RunningWorker::start(config);
  ASSERT_TRUE(worker);
  auto first = waitForRecords(kafka.bootstrap(), topics.fingerprints, 1);
  ASSERT_EQ(first.size(), 1u);
  for (int i = 0; i < 100 && worker->metrics().pending_events == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(worker->metrics().pending_events, 1u);
  // The symbols arrive after the event was published as pending.
  produce(kafka.bootstrap(), topics.symbols, {uploadRecord(library, "shop", "late")});
  auto restored = waitForRecords(kafka.bootstrap(), topics.symbolicated, 2);
  auto records = waitForRecords(kafka.bootstrap(), topics.fingerprints, 2);
  ASSERT_TRUE(worker->stop());

  ASSERT_EQ(restored.size(), 2u);
  ASSERT_EQ(records.size(), 2u);
  std::vector<std::string> statuses, hashes, replaces;
  for (const auto& record : restored) {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(*record.value).get(root), simdjson::SUCCESS);
    EXPECT_EQ(eventId(record), "late-1");
    statuses.emplace_back(std::string_view(root["symbolication"]["status"]));
  }
  std::sort(statuses.begin(), statuses.end());
  EXPECT_EQ(statuses, (std::vector<std::string>{"complete", "pending"}));
  for (const auto& record : records) {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(*record.value).get(root), simdjson::SUCCESS);
    hashes.emplace_back(std::string_view(root["fingerprint"]));
    std::string_view replaced;
    replaces.emplace_back(root["replaces"].get_string().get(replaced) ? "" : std::string(replaced));
  }
  // Restoring the frames changed the fingerprint (names instead of the message), and the final
  // record names the provisional fingerprint it replaces.
  ASSERT_NE(hashes[0], hashes[1]);
  EXPECT_TRUE((replaces[0].empty() && replaces[1] == hashes[0]) || (replaces[1].empty() && replaces[0] == hashes[1]))
      << hashes[0] << " " << hashes[1] << " / " << replaces[0] << " " << replaces[1];
  EXPECT_EQ(worker->metrics().events_restored_later, 1u);
  EXPECT_EQ(worker->metrics().pending_events, 0u);
}

// A symbol upload whose location answers slowly (a trickling or hostile server) holds back no
// event: the download runs beside the worker loop, the events of builds the worker has symbols for
// are restored and published meanwhile, and the worker stops at once with the download still under
// way (the upload stays in the store and is fetched again after a restart).
TEST(WorkerOnMockCluster, ASlowUploadLocationHoldsBackNoEvent) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  test::TestHttpServer http;
  ASSERT_TRUE(http.started());
  http.serveTrickle("/slow.so", 64 << 20, 4096);  // hours at this pace, above the low-speed limit
  MockCluster kafka;
  auto store = TempDir::create("worker-test-");
  ASSERT_TRUE(store);
  config::Config config = testConfig(kafka.bootstrap(), store->path(), "restack-slow-location");
  config.uploads.http_hosts = "localhost";
  config.uploads.allow_plain_http = true;
  config.uploads.allowed_networks = "127.0.0.1/32";
  config.uploads.low_speed_bytes_per_s = 512;
  config.uploads.fetch_wait_ms = 500;
  const auto& topics = config.kafka.topics;
  kafka.createTopics(topics, 3);
  KafkaRecord slow;
  slow.key = "shop:late";
  slow.value = std::string();
  slow.headers = {{"restack.kind", std::string("elf")}, {"restack.location", http.url("localhost", "/slow.so")}};
  produce(kafka.bootstrap(), topics.symbols, {slow, uploadRecord(library, "shop", "1.0")});
  std::vector<KafkaRecord> events;
  for (int i = 0; i < 6; ++i) events.push_back(eventRecord("steady-" + std::to_string(i), library));
  produce(kafka.bootstrap(), topics.events, events);

  auto worker = RunningWorker::start(config);
  ASSERT_TRUE(worker);
  auto restored = waitForRecords(kafka.bootstrap(), topics.symbolicated, events.size(), std::chrono::seconds(40));
  ASSERT_EQ(restored.size(), events.size()) << "events were held back by the download";
  for (const auto& record : restored) {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(*record.value).get(root), simdjson::SUCCESS);
    EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "complete") << eventId(record);
  }
  EXPECT_GE(http.hits("/slow.so"), 1u);
  EXPECT_EQ(worker->metrics().uploads_fetching, 1u);  // still downloading
  // into the worker's scratch folder (worker/kafka/scratch.h)
  size_t downloads = 0;
  std::error_code listed;
  for (const auto& entry : fs::directory_iterator(worker::scratchDirFor(config), listed)) {
    downloads += entry.path().filename().string().starts_with("restack-download-") ? 1 : 0;
  }
  EXPECT_EQ(downloads, 1u) << worker::scratchDirFor(config) << ": " << listed.message();
  const auto stopping = std::chrono::steady_clock::now();
  ASSERT_TRUE(worker->stop());
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(10));
}

// A symbol upload that takes long to ingest (a large legitimate one, or a hostile one sized to stall
// the fleet) holds back no event either: it is ingested beside the worker loop, the events of builds
// the worker has symbols for are restored meanwhile, and the worker stops at once with the ingest
// under way (its offset is not recorded: the upload is read again after a restart).
TEST(WorkerOnMockCluster, ALongIngestHoldsBackNoEvent) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto store = TempDir::create("worker-test-");
  ASSERT_TRUE(store);
  config::Config config = testConfig(kafka.bootstrap(), store->path(), "restack-long-ingest");
  config.uploads.fetch_wait_ms = 500;
  const auto& topics = config.kafka.topics;
  kafka.createTopics(topics, 3);
  produce(kafka.bootstrap(), topics.symbols, {uploadRecord(library, "shop", "1.0")});
  std::vector<KafkaRecord> events;
  for (int i = 0; i < 3; ++i) events.push_back(eventRecord("before-" + std::to_string(i), library));
  produce(kafka.bootstrap(), topics.events, events);

  std::atomic<int> stopped{0};
  worker::Worker::Hooks hooks;
  hooks.ingest = slowIngestOf("long", std::chrono::minutes(10), &stopped);
  auto worker = RunningWorker::start(config, hooks);
  ASSERT_TRUE(worker);
  ASSERT_EQ(waitForRecords(kafka.bootstrap(), topics.symbolicated, 3, std::chrono::seconds(40)).size(), 3u);

  // The long upload arrives while the worker runs; events keep coming.
  produce(kafka.bootstrap(), topics.symbols, {uploadRecord(library, "shop", "long")});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (worker->metrics().uploads_ingesting == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(worker->metrics().uploads_ingesting, 1u);
  std::vector<KafkaRecord> during;
  for (int i = 0; i < 6; ++i) during.push_back(eventRecord("during-" + std::to_string(i), library));
  produce(kafka.bootstrap(), topics.events, during);
  auto restored = waitForRecords(kafka.bootstrap(), topics.symbolicated, 9, std::chrono::seconds(40));
  ASSERT_EQ(restored.size(), 9u) << "events were held back by the ingest";
  for (const auto& record : restored) {
    Json json;
    ASSERT_TRUE(json.parse(record.value));
    EXPECT_EQ(stringAt(json.root["symbolication"]["status"]), "complete") << eventId(record);
    EXPECT_EQ(stringAt(json.root["threads"].at(0)["frames"].at(0)["function"]), library.expected_crash_function);
  }
  EXPECT_EQ(worker->metrics().uploads_ingesting, 1u);  // still ingesting
  const auto stopping = std::chrono::steady_clock::now();
  ASSERT_TRUE(worker->stop());
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(10));
  EXPECT_EQ(stopped, 1);
}

}  // namespace
}  // namespace restack::worker_test
