// The symbol-demand feed end to end on a real Apache Kafka broker (tests/support/kafka_broker.h):
// events of two builds that miss a native .so, a ProGuard mapping and a source map go through the
// worker (exactly_once) twice, across a restart; the compacted demand topic then holds one live
// record per key with the counts of both passes, `restack missing` (run as a process) prints
// them, and uploading the .so closes its record with a tombstone.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>

#include "formats/common/mapped_file.h"
#include "formats/common/temp_dir.h"
#include "tests/support/java_partitioner.h"
#include "tests/support/kafka_broker.h"
#include "tests/support/kafka_records.h"
#include "tests/support/run_command.h"
#include "tests/worker/worker_fixtures.h"
#include "tests/worker/worker_process.h"
#include "worker/kafka/symbol_demand.h"

namespace restack::worker_test {
namespace {

using namespace std::chrono_literals;
using testkafka::KafkaRecord;

constexpr int kPartitions = 2;

std::string javaEvent(const std::string& id) {
  return R"({"event_id":")" + id + R"(","kind":"crash","platform":"android","app":"shop","build_id":"2.0",)" +
         R"json("threads":[{"name":"main","crashed":true,"stack":"java.lang.IllegalStateException\n\tat a.a(SourceFile:1)\n\tat a.b(SourceFile:2)"}]})json";
}

std::string webEvent(const std::string& id) {
  return R"({"event_id":")" + id + R"(","kind":"error","platform":"web","app":"shop","build_id":"2.0",)" +
         R"json("threads":[{"name":"main","stack":"TypeError: x\n    at f (https://cdn.example.com/js/main.3f9a1c2b.js:1:10)"}]})json";
}

// The live records of the compacted topic: last record per key, tombstones delete.
std::map<std::string, worker::DemandRecord> liveDemand(const std::string& bootstrap, const std::string& topic,
                                                       std::map<std::string, int32_t>* partitions = nullptr) {
  testkafka::ConsumeOptions options;
  options.idle = 500ms;
  auto records = testkafka::consumeAll(bootstrap, topic, options);
  EXPECT_TRUE(records) << records.error().message();
  std::map<std::string, worker::DemandRecord> live;
  if (!records) return live;
  for (const KafkaRecord& record : *records) {
    const std::string key = record.key.value_or("");
    if (partitions) (*partitions)[key] = record.partition;
    if (!record.value) {
      live.erase(key);
      continue;
    }
    auto decoded = worker::decodeDemandRecord(*record.value);
    EXPECT_TRUE(decoded) << decoded.error().message() << ": " << *record.value;
    if (decoded) live[key] = *decoded;
  }
  return live;
}

class SymbolDemandOnKafka : public ::testing::Test {
 protected:
  void SetUp() override {
    auto broker = testkafka::KafkaBroker::start();
    ASSERT_TRUE(broker) << broker.error().message();
    broker_ = std::move(*broker);
    topics_.events = "demand.events";
    topics_.symbols = "demand.symbols";
    topics_.symbols_shared = "demand.symbols.shared";
    topics_.symbolicated = "demand.symbolicated";
    topics_.fingerprints = "demand.fingerprints";
    topics_.dlq = "demand.dlq";
    topics_.pending = "demand.pending";
    topics_.symbols_missing = "demand.symbols.missing";
    ASSERT_TRUE(broker_->createTopics({{topics_.events, kPartitions},
                                       {topics_.symbols, kPartitions},
                                       {topics_.symbols_shared, 1},
                                       {topics_.symbolicated, kPartitions},
                                       {topics_.fingerprints, kPartitions},
                                       {topics_.dlq, 1},
                                       {topics_.pending, kPartitions, {{"cleanup.policy", "compact"}}},
                                       {topics_.symbols_missing, kPartitions, {{"cleanup.policy", "compact"}}}}));
    auto dir = TempDir::create("restack-demand-");
    ASSERT_TRUE(dir);
    dir_.emplace(std::move(*dir));
    // What `restack missing` reads: the brokers and the topic's name.
    config_path_ = dir_->path() + "/restack.yaml";
    ASSERT_TRUE(test_support::writeTextFile(config_path_, "kafka:\n  brokers: \"" + broker_->bootstrap() +
                                                              "\"\n  topics:\n    symbols_missing: \"" +
                                                              topics_.symbols_missing + "\"\n"));
  }

  config::Config workerConfig() {
    config::Config config = testConfig(broker_->bootstrap(), dir_->path() + "/store", "demand.group");
    config.kafka.delivery = "exactly_once";
    config.kafka.transactional_id = "demand.worker";
    config.kafka.topics = topics_;
    config.symbols_missing.flush_interval_ms = 200;
    return config;
  }

  // Runs a worker until `done` holds (or 40 s pass), then stops it gracefully.
  void runWorkerUntil(const std::function<bool(worker::Metrics&)>& done, const std::string& what) {
    auto running = RunningWorker::start(workerConfig());
    ASSERT_TRUE(running);
    EXPECT_TRUE(waitUntil([&] { return done(running->metrics()); }, 40s)) << what;
    Status stopped = running->stop();
    EXPECT_TRUE(stopped) << stopped.error().message();
  }

  void produce(const std::string& topic, const std::vector<KafkaRecord>& records) {
    auto sent = testkafka::produceAll(broker_->bootstrap(), topic, records);
    ASSERT_TRUE(sent) << sent.error().message();
  }

  test_support::CommandOutput missing(const std::string& flags, const std::string& config = "") {
    return test_support::runCommand(std::string(RESTACK_BINARY) + " missing --config " +
                                    test_support::shellQuote(config.empty() ? config_path_ : config) + " " + flags);
  }

  std::unique_ptr<testkafka::KafkaBroker> broker_;
  config::Topics topics_;
  std::optional<TempDir> dir_;
  std::string config_path_;
};

TEST_F(SymbolDemandOnKafka, OneRecordPerMissingFileAcrossResendsAndRestartsUntilItsUploadArrives) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const int64_t started_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  std::vector<KafkaRecord> events;
  for (const std::string id : {"n1", "n2"}) {
    events.push_back({.key = "shop:1.0", .value = nativeCrashEvent(id, "shop", "1.0", library)});
  }
  for (const std::string id : {"j1", "j2"}) events.push_back({.key = "shop:2.0", .value = javaEvent(id)});
  events.push_back({.key = "shop:2.0", .value = webEvent("w1")});
  const size_t total = events.size();

  // First pass, then the same events sent again to a restarted worker on the same store.
  produce(topics_.events, events);
  runWorkerUntil(
      [&](worker::Metrics& m) {
        return m.events_published >= total && m.symbol_demand_keys == 3 && m.symbol_demand_records_published >= 3;
      },
      "first pass");
  auto first = liveDemand(broker_->bootstrap(), topics_.symbols_missing);
  EXPECT_EQ(first.size(), 3u);
  produce(topics_.events, events);
  runWorkerUntil(
      [&](worker::Metrics& m) { return m.events_published >= total && m.symbol_demand_records_published >= 3; },
      "second pass");

  std::map<std::string, int32_t> partitions;
  auto live = liveDemand(broker_->bootstrap(), topics_.symbols_missing, &partitions);
  const std::string native_key = "shop:1.0:native:" + library.build_id;
  const std::string java_key = "shop:2.0:java:shop:2.0";
  ASSERT_EQ(live.size(), 3u);
  ASSERT_TRUE(live.count(native_key));
  ASSERT_TRUE(live.count(java_key));
  std::string web_key;
  for (const auto& [key, record] : live) {
    if (record.kind == "js") web_key = key;
  }
  ASSERT_FALSE(web_key.empty());
  // The counts of both passes, each event once per pass.
  EXPECT_EQ(live[native_key].events, 4u);
  EXPECT_EQ(live[native_key].frames, 8u);
  EXPECT_EQ(live[native_key].module, "libcrash.so");
  EXPECT_EQ(live[native_key].platform, "android");
  EXPECT_EQ(live[java_key].events, 4u);
  EXPECT_EQ(live[java_key].frames, 8u);
  EXPECT_EQ(live[web_key].events, 2u);
  EXPECT_EQ(live[web_key].frames, 2u);
  EXPECT_EQ(live[web_key].module, "main.3f9a1c2b.js");
  for (const auto& [key, record] : live) {
    EXPECT_GE(record.first_seen_ms, started_ms - 1000) << key;
    EXPECT_LE(record.first_seen_ms, record.last_seen_ms) << key;
    EXPECT_LT(record.first_seen_ms, record.last_seen_ms) << key << ": seen in both passes";
    // Co-partitioned with the build's events.
    EXPECT_EQ(partitions[key], testkafka::javaPartitionFor(record.app + ":" + record.build_id, kPartitions)) << key;
  }

  // `restack missing` prints the same state.
  auto json = missing("--json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  std::map<std::string, worker::DemandRecord> printed;
  for (const std::string& line : test_support::outputLines(json.output)) {
    auto record = worker::decodeDemandRecord(line);
    ASSERT_TRUE(record) << line;
    printed[record->key()] = *record;
  }
  ASSERT_EQ(printed.size(), 3u) << json.output;
  EXPECT_EQ(printed[native_key].events, 4u);
  EXPECT_EQ(printed[java_key].frames, 8u);
  auto table = missing("--build 1.0");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  const auto lines = test_support::outputLines(table.output);
  ASSERT_EQ(lines.size(), 2u) << table.output;
  EXPECT_NE(lines[0].find("IDENTIFIER"), std::string::npos) << table.output;
  EXPECT_NE(lines[1].find(library.build_id), std::string::npos) << table.output;
  EXPECT_NE(lines[1].find("libcrash.so"), std::string::npos) << table.output;

  // The .so arrives: its record is closed, the others stay.
  auto so = readFile(library.path);
  ASSERT_TRUE(so);
  produce(topics_.symbols,
          {{.key = "shop:1.0",
            .value = *so,
            .headers = {{"restack.kind", std::string("elf")}, {"restack.file_name", std::string("libcrash.so")}}}});
  runWorkerUntil([&](worker::Metrics& m) { return m.uploads_ingested >= 1 && m.symbol_demand_keys == 2; },
                 "the upload closes the native record");
  live = liveDemand(broker_->bootstrap(), topics_.symbols_missing);
  EXPECT_EQ(live.size(), 2u);
  EXPECT_FALSE(live.count(native_key));
  json = missing("--json --app shop");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(test_support::outputLines(json.output).size(), 2u) << json.output;
  EXPECT_EQ(json.output.find(library.build_id), std::string::npos) << json.output;

  // A topic that does not exist is named, exit status 1.
  const std::string other = dir_->path() + "/other.yaml";
  ASSERT_TRUE(test_support::writeTextFile(
      other, "kafka:\n  brokers: \"" + broker_->bootstrap() + "\"\n  topics:\n    symbols_missing: nope\n"));
  auto absent = missing("", other);
  EXPECT_EQ(absent.exit_code, 1) << absent.output;
  EXPECT_NE(absent.output.find("topic nope does not exist"), std::string::npos) << absent.output;
}

TEST(RestackMissing, ABrokerThatDoesNotAnswerIsReportedWithinTheTimeout) {
  auto dir = TempDir::create("restack-demand-");
  ASSERT_TRUE(dir);
  const std::string config = dir->path() + "/restack.yaml";
  ASSERT_TRUE(test_support::writeTextFile(
      config, "kafka:\n  brokers: \"127.0.0.1:" + std::to_string(freeLoopbackPort()) + "\"\n"));
  const auto started = std::chrono::steady_clock::now();
  auto out = test_support::runCommand(std::string(RESTACK_BINARY) + " missing --timeout-ms 1500 --config " +
                                      test_support::shellQuote(config));
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_NE(out.output.find("no answer from the brokers"), std::string::npos) << out.output;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 15s);
}

}  // namespace
}  // namespace restack::worker_test
