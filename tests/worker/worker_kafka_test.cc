// `restack run` as real child processes against a real Apache Kafka broker (KRaft, loopback):
//   - symbols and events in; restored events, fingerprint records and DLQ records out, each
//     output on the partition the Java client's murmur2 gives its key;
//   - SIGTERM in a steady stream: exit code 0, and a restarted worker restores every event
//     exactly once;
//   - SIGKILL in a steady stream (exactly_once): a restarted worker loses nothing and repeats
//     nothing that read_committed consumers see;
//   - transactions aborted in the middle of batches: nothing visible twice, nothing lost;
//   - pending events (waiting for symbols) move with their partition to another worker, which
//     restores them when the symbols arrive; more than 1,000 pending events of one app all restore;
//   - a corrupt store file at start: the worker moves the store aside, rebuilds it and serves;
//   - two worker processes in one group split the partitions, and the survivor takes all;
//   - /healthz, /readyz and /metrics.
//
// One broker serves every test of the process (a JVM start costs seconds of CPU; ctest runs
// each test in its own process, the binary run alone shares one broker across all five); each
// test names its topics and its group after itself. Worker processes are killed (SIGKILL) by their
// guards' destructors and, should this test process die first, by the kernel
// (PR_SET_PDEATHSIG), so none is ever left behind.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "formats/common/mapped_file.h"
#include "formats/common/temp_dir.h"
#include "symbolstore/store.h"
#include "tests/support/java_partitioner.h"
#include "tests/support/kafka_broker.h"
#include "tests/support/kafka_records.h"
#include "tests/worker/worker_fixtures.h"
#include "tests/worker/worker_process.h"
#include "worker/kafka/metrics.h"

namespace restack::worker_test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using testkafka::KafkaBroker;
using testkafka::KafkaRecord;
using testkafka::waitForRecords;

// ---------------------------------------------------------------------------------------------
// Partitioning witnesses: librdkafka's murmur2_random (what Restack configures) and Kafka's
// murmur2 from the spec (tests/support/java_partitioner.h, the Java client's default).

// librdkafka's own murmur2_random partitioner, called directly on a topic handle (nothing is
// produced).
class RdKafkaPartitioner {
 public:
  explicit RdKafkaPartitioner(const std::string& bootstrap) {
    auto client = testkafka::makeClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}});
    EXPECT_TRUE(client) << client.error().message();
    if (client) client_ = std::move(*client);
  }
  ~RdKafkaPartitioner() {
    for (auto& [name, topic] : topics_) rd_kafka_topic_destroy(topic);
  }
  int partition(const std::string& topic, const std::string& key, int partitions) {
    rd_kafka_topic_t*& handle = topics_[topic];
    if (handle == nullptr) handle = rd_kafka_topic_new(client_.get(), topic.c_str(), nullptr);
    return rd_kafka_msg_partitioner_murmur2_random(handle, key.data(), key.size(), partitions, nullptr, nullptr);
  }

 private:
  testkafka::KafkaClient client_;
  std::map<std::string, rd_kafka_topic_t*> topics_;
};

// "b<i>" build names chosen so that "<app>:<build>" keys cover every events partition,
// `per_partition` builds each.
std::vector<std::string> buildsCoveringPartitions(const std::string& app, int partitions, int per_partition) {
  std::vector<std::string> builds;
  std::map<int, int> used;
  for (int i = 0; builds.size() < static_cast<size_t>(partitions * per_partition); ++i) {
    const std::string build = "b" + std::to_string(i);
    int& count = used[testkafka::javaPartitionFor(app + ":" + build, partitions)];
    if (count < per_partition) {
      ++count;
      builds.push_back(build);
    }
  }
  return builds;
}

// ---------------------------------------------------------------------------------------------
// Records.

std::string eventId(const KafkaRecord& record) {
  Json json;
  if (!json.parse(record.value)) return {};
  return stringAt(json.root["event_id"]);
}

KafkaRecord uploadRecord(const NativeLibrary& library, const std::string& app, const std::string& build) {
  auto file = readFile(library.path);
  EXPECT_TRUE(file) << library.path;
  KafkaRecord record;
  record.key = app + ":" + build;
  record.value = file ? *file : std::string();
  record.headers = {{"restack.kind", std::string("elf")}, {"restack.file_name", std::string("libcrash.so")}};
  return record;
}

KafkaRecord eventRecord(const std::string& id, const NativeLibrary& library, const std::string& app,
                        const std::string& build) {
  KafkaRecord record;
  record.key = app + ":" + build;
  record.value = nativeCrashEvent(id, app, build, library);
  return record;
}

// Events "<prefix><first>" … "<prefix><first + count - 1>", round-robin over `builds`.
std::vector<KafkaRecord> events(const std::string& prefix, int first, int count, const NativeLibrary& library,
                                const std::string& app, const std::vector<std::string>& builds) {
  std::vector<KafkaRecord> records;
  for (int i = first; i < first + count; ++i) {
    records.push_back(eventRecord(prefix + std::to_string(i), library, app, builds[i % builds.size()]));
  }
  return records;
}

std::vector<KafkaRecord> readTopic(const std::string& bootstrap, const std::string& topic,
                                   std::chrono::milliseconds idle = 1000ms) {
  testkafka::ConsumeOptions options;
  options.idle = idle;
  auto records = testkafka::consumeAll(bootstrap, topic, options);
  EXPECT_TRUE(records) << records.error().message();
  return records ? std::move(*records) : std::vector<KafkaRecord>{};
}

// The ids "<prefix><i>", i < count, that `seen` lacks, as "a, b, c … (N)" ("" when none).
std::string missingIds(const std::map<std::string, int>& seen, const std::string& prefix, int count) {
  std::string text;
  int missing = 0;
  for (int i = 0; i < count; ++i) {
    if (seen.count(prefix + std::to_string(i))) continue;
    if (++missing <= 10) text += (text.empty() ? "" : ", ") + prefix + std::to_string(i);
  }
  return missing == 0 ? std::string() : text + (missing > 10 ? " …" : "") + " (" + std::to_string(missing) + ")";
}

// How often each event id was published.
std::map<std::string, int> countIds(const std::vector<KafkaRecord>& records) {
  std::map<std::string, int> seen;
  for (const auto& record : records) ++seen[eventId(record)];
  return seen;
}

// Reads `topic` until it holds an event "<prefix><i>" for every i < count (or the time is up).
bool waitForIds(const std::string& bootstrap, const std::string& topic, const std::string& prefix, int count,
                std::chrono::milliseconds limit = 90s) {
  return waitUntil(
      [&] {
        testkafka::ConsumeOptions options;
        options.idle = 200ms;
        auto got = testkafka::consumeAll(bootstrap, topic, options);
        if (!got) return false;
        const auto seen = countIds(*got);
        for (int i = 0; i < count; ++i) {
          if (!seen.count(prefix + std::to_string(i))) return false;
        }
        return true;
      },
      limit, 300ms);
}

// Produces events in small chunks with pauses on its own thread: a steady stream.
class EventStream {
 public:
  EventStream(std::string bootstrap, std::string topic, std::vector<KafkaRecord> records, size_t chunk,
              std::chrono::milliseconds pause)
      : bootstrap_(std::move(bootstrap)),
        topic_(std::move(topic)),
        records_(std::move(records)),
        chunk_(chunk),
        pause_(pause) {
    thread_ = std::thread([this] { run(); });
  }
  ~EventStream() { join(); }
  size_t produced() const { return produced_; }
  size_t total() const { return records_.size(); }
  // The first error, empty when every record was acknowledged.
  std::string join() {
    if (thread_.joinable()) thread_.join();
    return error_;
  }

 private:
  void run() {
    for (size_t at = 0; at < records_.size(); at += chunk_) {
      std::vector<KafkaRecord> part(records_.begin() + at, records_.begin() + std::min(records_.size(), at + chunk_));
      auto sent = testkafka::produceAll(bootstrap_, topic_, part);
      if (!sent) {
        error_ = sent.error().message();
        return;
      }
      produced_ += part.size();
      std::this_thread::sleep_for(pause_);
    }
  }

  std::string bootstrap_, topic_;
  std::vector<KafkaRecord> records_;
  size_t chunk_;
  std::chrono::milliseconds pause_;
  std::atomic<size_t> produced_{0};
  std::string error_;
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------------
// The fixture: one broker per process, topics and group per test.

constexpr int kEventPartitions = 4;
constexpr int kSymbolicatedPartitions = 3;
constexpr int kFingerprintPartitions = 5;
constexpr int kDlqPartitions = 2;

struct WorkerSettings {
  std::string store;
  int http_port = 0;
  uint32_t batch_size = 50;
  std::string delivery = "exactly_once";
  uint32_t min_commit_interval_ms = 0;
};

class WorkerOnKafka : public ::testing::Test {
 protected:
  void SetUp() override {
    Shared& shared = sharedBroker();
    ASSERT_TRUE(shared.broker) << "the Kafka test broker did not start: " << shared.start_error;
    const std::string base = testName();
    topics_.events = base + ".events";
    topics_.symbols = base + ".symbols";
    topics_.symbols_shared = base + ".symbols.shared";
    topics_.symbolicated = base + ".symbolicated";
    topics_.fingerprints = base + ".fingerprints";
    topics_.dlq = base + ".dlq";
    topics_.pending = base + ".pending";
    group_ = base + ".group";
    ASSERT_TRUE(broker().createTopics({{topics_.events, kEventPartitions},
                                       {topics_.symbols, kEventPartitions},
                                       {topics_.symbols_shared, 1},
                                       {topics_.symbolicated, kSymbolicatedPartitions},
                                       {topics_.fingerprints, kFingerprintPartitions},
                                       {topics_.dlq, kDlqPartitions}}));
    ASSERT_TRUE(broker().createTopic(topics_.pending, kEventPartitions, {{"cleanup.policy", "compact"}}));
    auto dir = TempDir::create("restack-kafkaint-");
    ASSERT_TRUE(dir);
    dir_.emplace(std::move(*dir));
    started_ = Clock::now();
  }

  void TearDown() override {
    const auto seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    std::fprintf(stderr, "[timing] %s: %.1f s after the topics were created\n", testName().c_str(), seconds);
    if (HasFailure() && sharedBroker().broker) {
      std::fprintf(stderr, "---- broker ----\n%s---- broker log ----\n%s\n", broker().diagnosis().c_str(),
                   broker().logTail(30).c_str());
    }
  }

  KafkaBroker& broker() { return *sharedBroker().broker; }
  const std::string& bootstrap() { return broker().bootstrap(); }
  const std::string& path() const { return dir_->path(); }

  // Worker `name` (not started) on a store of its own, kept until the test ends, serving metrics on
  // a loopback port no other worker of the test has, given in `*port`. Null when no store can be made.
  std::unique_ptr<WorkerProcess> workerWithOwnStore(const std::string& name, int* port) {
    auto store = TempDir::create("restack-kafkaint-" + name + "-");
    if (!store) return nullptr;
    stores_.push_back(std::move(*store));
    do {
      *port = freeLoopbackPort();
    } while (!ports_.insert(*port).second);
    return worker(name, {.store = stores_.back().path(), .http_port = *port});
  }

  // A worker process with its own YAML file and log; not started yet.
  std::unique_ptr<WorkerProcess> worker(const std::string& name, const WorkerSettings& settings) {
    const std::string config = path() + "/" + name + ".yaml";
    std::ofstream out(config);
    out << "kafka:\n"
        << "  brokers: \"" << bootstrap() << "\"\n"
        << "  group_id: \"" << group_ << "\"\n"
        << "  session_timeout_ms: 6000\n"
        << "  delivery: " << settings.delivery
        << "\n"
        // One id per store, as a StatefulSet pod keeps its name and its volume: a restart on the
        // same store fences the worker it replaces.
        << "  transactional_id: \"" << group_ << "-" << std::filesystem::path(settings.store).filename().string()
        << "\"\n"
        << "  topics:\n"
        << "    events: \"" << topics_.events << "\"\n"
        << "    symbols: \"" << topics_.symbols << "\"\n"
        << "    symbols_shared: \"" << topics_.symbols_shared << "\"\n"
        << "    symbolicated: \"" << topics_.symbolicated << "\"\n"
        << "    fingerprints: \"" << topics_.fingerprints << "\"\n"
        << "    dlq: \"" << topics_.dlq << "\"\n"
        << "    pending: \"" << topics_.pending << "\"\n"
        << "store:\n"
        << "  path: \"" << settings.store << "\"\n"
        << "  block_cache_mb: 8\n"
        << "cache:\n  native_mb: 16\n  proguard_mb: 16\n  sourcemap_mb: 16\n"
        << "worker:\n"
        << "  batch_size: " << settings.batch_size << "\n"
        << "  batch_linger_ms: 20\n"
        << "  min_commit_interval_ms: " << settings.min_commit_interval_ms << "\n"
        << "observability:\n"
        << "  http_port: " << settings.http_port << "\n"
        << "  log_level: info\n";
    out.close();
    return std::make_unique<WorkerProcess>(name, config, path() + "/" + name + ".log");
  }

  void produce(const std::string& topic, const std::vector<KafkaRecord>& records) {
    auto sent = testkafka::produceAll(bootstrap(), topic, records);
    ASSERT_TRUE(sent) << sent.error().message();
  }

  // One build of app "shop" per events partition, its symbols uploaded; returns the builds.
  std::vector<std::string> uploadShopBuilds(const NativeLibrary& library) {
    const auto builds = buildsCoveringPartitions("shop", kEventPartitions, 1);
    std::vector<KafkaRecord> uploads;
    for (const auto& build : builds) uploads.push_back(uploadRecord(library, "shop", build));
    produce(topics_.symbols, uploads);
    return builds;
  }

  // Waits until the worker's /metrics answers and restack_assigned_partitions satisfies `ok`;
  // gives up at once when the process ended.
  bool waitForAssigned(WorkerProcess& process, int port, const std::function<bool(uint64_t)>& ok,
                       std::chrono::milliseconds limit = 60s) {
    bool ended = false;
    const bool done = waitUntil(
        [&] {
          if (!process.running()) return ended = true;
          auto assigned = metric(port, "assigned_partitions");
          return assigned && ok(*assigned);
        },
        limit);
    if (ended) {
      ADD_FAILURE() << process.name() << " ended before it owned its partitions: "
                    << describeWaitStatus(process.waitForExit(0ms).value_or(-1));
    }
    return done && !ended;
  }

  static std::string testName() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("kafkaint.") + info->name();
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
    }
    return name;
  }

  config::Topics topics_;
  std::string group_;
  std::optional<TempDir> dir_;
  Clock::time_point started_;
  std::deque<TempDir> stores_;  // of workerWithOwnStore
  std::set<int> ports_;         // of workerWithOwnStore

 private:
  struct Shared {
    std::unique_ptr<KafkaBroker> broker;
    std::string start_error;
  };
  static Shared& sharedBroker() {
    static Shared shared = [] {
      Shared started;
      const auto begin = Clock::now();
      auto broker = KafkaBroker::start();
      if (broker) {
        started.broker = std::move(*broker);
        std::fprintf(stderr, "[timing] broker started in %.1f s\n",
                     std::chrono::duration<double>(Clock::now() - begin).count());
      } else {
        started.start_error = broker.error().message();
      }
      return started;
    }();
    return shared;
  }
};

// ---------------------------------------------------------------------------------------------

TEST_F(WorkerOnKafka, RestoresEventsPublishesFingerprintsOnMurmur2PartitionsAndDeadLetters) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());

  // Two apps, builds on every events partition; events first, their uploads second: the worker
  // must still apply the uploads before restoring the events.
  const auto shop_builds = buildsCoveringPartitions("shop", kEventPartitions, 1);
  const auto mall_builds = buildsCoveringPartitions("mall", kEventPartitions, 1);
  std::vector<KafkaRecord> input = events("shop-", 0, 8, library, "shop", shop_builds);
  for (auto& record : events("mall-", 0, 8, library, "mall", mall_builds)) input.push_back(record);
  NativeLibrary unknown;  // an image nobody uploaded
  unknown.build_id = "00112233445566778899aabbccddeeff00112233";
  unknown.crash_address = 0x1000;
  unknown.caller_return = 0x2000;
  input.push_back(eventRecord("missing", unknown, "shop", "9.9"));
  KafkaRecord broken;  // valid JSON, invalid event
  broken.key = "shop:" + shop_builds[0];
  broken.value =
      R"({"event_id":"broken","app":"shop","build_id":")" + shop_builds[0] + R"(","platform":"android","threads":{}})";
  KafkaRecord garbage;  // not JSON at all, with bytes that are not UTF-8
  garbage.key = "mall:" + mall_builds[1];
  garbage.value = std::string("\xff\xfe not json \x00\x01 at all", 21);
  input.push_back(broken);
  input.push_back(garbage);
  produce(topics_.events, input);
  std::vector<KafkaRecord> uploads;
  for (const auto& build : shop_builds) uploads.push_back(uploadRecord(library, "shop", build));
  for (const auto& build : mall_builds) uploads.push_back(uploadRecord(library, "mall", build));
  KafkaRecord bad_upload;
  bad_upload.key = "shop:" + shop_builds[1];
  bad_upload.value = "this is not a symbol file";
  uploads.push_back(bad_upload);
  produce(topics_.symbols, uploads);

  auto store = TempDir::create("restack-kafkaint-store-");
  ASSERT_TRUE(store);
  auto process = worker("worker", {.store = store->path(), .http_port = freeLoopbackPort()});
  ASSERT_TRUE(process->start());
  const size_t good = 16, restored_count = good + 1;  // + "missing"
  waitForRecords(bootstrap(), topics_.symbolicated, restored_count);
  waitForRecords(bootstrap(), topics_.fingerprints, restored_count);
  waitForRecords(bootstrap(), topics_.dlq, 3);
  auto status = process->terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describeWaitStatus(*status);

  const auto restored = readTopic(bootstrap(), topics_.symbolicated);
  const auto fingerprints = readTopic(bootstrap(), topics_.fingerprints);
  const auto dead = readTopic(bootstrap(), topics_.dlq);
  RdKafkaPartitioner partitioner(bootstrap());

  // Restored events: the fixture's llvm-symbolizer answers, keyed <app>:<fingerprint>.
  ASSERT_EQ(restored.size(), restored_count);
  std::set<int> restored_partitions;
  std::map<std::string, std::string> fingerprint_of;  // event id -> fingerprint id
  for (const KafkaRecord& record : restored) {
    Json json;
    ASSERT_TRUE(json.parse(record.value)) << *record.value;
    const std::string id = stringAt(json.root["event_id"]);
    const std::string app = stringAt(json.root["app"]);
    const std::string fingerprint = stringAt(json.root["fingerprint"]["fingerprint"]);
    SCOPED_TRACE("restored event " + id);
    ASSERT_FALSE(fingerprint.empty()) << *record.value;
    fingerprint_of[id] = fingerprint;
    ASSERT_TRUE(record.key);
    EXPECT_EQ(*record.key, app + ":" + fingerprint);
    EXPECT_EQ(record.partition, partitioner.partition(topics_.symbolicated, *record.key, kSymbolicatedPartitions));
    EXPECT_EQ(record.partition, testkafka::javaPartitionFor(*record.key, kSymbolicatedPartitions));
    restored_partitions.insert(record.partition);
    simdjson::dom::array frames;
    ASSERT_EQ(json.root["threads"].at(0)["frames"].get(frames), simdjson::SUCCESS) << *record.value;
    if (id == "missing") {
      EXPECT_EQ(stringAt(json.root["symbolication"]["status"]), "pending");
      EXPECT_EQ(stringAt(json.root["symbolication"]["missing"].at(0)), unknown.build_id) << *record.value;
      EXPECT_EQ(stringAt(frames.at(0)["status"]), "missing_symbols");
      continue;
    }
    EXPECT_EQ(stringAt(json.root["symbolication"]["status"]), "complete") << *record.value;
    ASSERT_EQ(frames.size(), 2u) << *record.value;
    EXPECT_EQ(stringAt(frames.at(0)["status"]), "symbolicated");
    EXPECT_EQ(stringAt(frames.at(0)["function"]), library.expected_crash_function);
    EXPECT_EQ(stringAt(frames.at(1)["status"]), "symbolicated");
    EXPECT_EQ(stringAt(frames.at(1)["function"]), library.expected_caller_function);
    // Unknown fields pass through untouched.
    EXPECT_EQ(simdjson::to_string(json.root["sdk"]), R"({"name":"apm","version":[1,2.5,null]})");
  }
  // The partitions follow from the keys alone; which ones they are depends on the fingerprint
  // algorithm (three keys may well share a partition), so the set is compared, not its size.
  std::set<int> expected_partitions;
  std::set<std::string> restored_keys;
  for (const KafkaRecord& record : restored) restored_keys.insert(*record.key);
  for (const std::string& key : restored_keys) {
    expected_partitions.insert(testkafka::javaPartitionFor(key, kSymbolicatedPartitions));
  }
  EXPECT_GE(restored_keys.size(), 3u) << "shop, mall and the pending event have their own keys";
  EXPECT_EQ(restored_partitions, expected_partitions);
  std::set<std::string> expected_ids = {"missing"};
  for (int i = 0; i < 8; ++i) expected_ids.insert({"shop-" + std::to_string(i), "mall-" + std::to_string(i)});
  std::set<std::string> restored_ids;
  for (const auto& [id, fp] : fingerprint_of) restored_ids.insert(id);
  EXPECT_EQ(restored_ids, expected_ids);

  // Fingerprint records: one per restored event, same key, murmur2 partition.
  ASSERT_EQ(fingerprints.size(), restored_count);
  std::map<std::string, std::set<std::string>> keys;  // key -> event ids
  for (const KafkaRecord& record : fingerprints) {
    Json json;
    ASSERT_TRUE(json.parse(record.value)) << *record.value;
    const std::string id = stringAt(json.root["event_id"]);
    const std::string fingerprint = stringAt(json.root["fingerprint"]);
    SCOPED_TRACE("fingerprint record of " + id);
    ASSERT_TRUE(record.key);
    EXPECT_EQ(*record.key, stringAt(json.root["app"]) + ":" + fingerprint);
    EXPECT_EQ(fingerprint, fingerprint_of[id]);
    EXPECT_EQ(stringAt(json.root["algorithm"]), "v2");
    EXPECT_EQ(record.partition, partitioner.partition(topics_.fingerprints, *record.key, kFingerprintPartitions));
    EXPECT_EQ(record.partition, testkafka::javaPartitionFor(*record.key, kFingerprintPartitions));
    keys[*record.key].insert(id);
  }
  // All crashes of one app are the same problem (one key); the event without symbols is another.
  EXPECT_EQ(keys.size(), 3u);
  for (const auto& [key, ids] : keys) EXPECT_TRUE(ids.size() == 8 || (ids.size() == 1 && ids.count("missing"))) << key;

  // DLQ: the two unreadable events and the unreadable upload, input bytes and keys unchanged.
  ASSERT_EQ(dead.size(), 3u);
  int from_events = 0, from_symbols = 0;
  for (const KafkaRecord& record : dead) {
    ASSERT_TRUE(record.header("restack.error"));
    EXPECT_FALSE(record.header("restack.error")->empty());
    ASSERT_TRUE(record.header("restack.source.topic"));
    ASSERT_TRUE(record.key);
    EXPECT_EQ(record.partition, partitioner.partition(topics_.dlq, *record.key, kDlqPartitions));
    if (*record.header("restack.source.topic") == topics_.events) {
      ++from_events;
      const KafkaRecord& original = *record.key == *broken.key ? broken : garbage;
      EXPECT_EQ(*record.key, *original.key);
      EXPECT_EQ(record.value, original.value) << "DLQ value must be the input bytes unchanged";
      if (&original == &broken) {
        EXPECT_NE(record.header("restack.error")->find("'threads' must be an array"), std::string::npos)
            << *record.header("restack.error");
      }
    } else {
      ++from_symbols;
      EXPECT_EQ(*record.header("restack.source.topic"), topics_.symbols);
      EXPECT_EQ(*record.key, *bad_upload.key);
      EXPECT_EQ(record.value, bad_upload.value);
    }
  }
  EXPECT_EQ(from_events, 2);
  EXPECT_EQ(from_symbols, 1);
  const std::string log = process->log();
  EXPECT_NE(log.find("restack worker stopped cleanly"), std::string::npos);
}

TEST_F(WorkerOnKafka, SigtermInASteadyStreamExitsCleanlyAndTheRestartRestoresEveryEventOnce) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const auto builds = uploadShopBuilds(library);

  auto store = TempDir::create("restack-kafkaint-store-");
  ASSERT_TRUE(store);
  const int port_first = freeLoopbackPort();
  auto first = worker("first", {.store = store->path(), .http_port = port_first, .batch_size = 10});
  ASSERT_TRUE(first->start());
  ASSERT_TRUE(waitForAssigned(*first, port_first, [](uint64_t n) { return n == kEventPartitions; }))
      << "the first worker never owned every events partition";

  const int total = 300;
  EventStream stream(bootstrap(), topics_.events, events("s", 0, total, library, "shop", builds), 10, 100ms);
  ASSERT_TRUE(waitUntil([&] { return metric(port_first, "events_published_total").value_or(0) >= 40; }, 60s));
  const size_t produced_at_stop = stream.produced();
  auto status = first->terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describeWaitStatus(*status);
  EXPECT_LT(produced_at_stop, static_cast<size_t>(total)) << "the stream should still have been running";
  EXPECT_NE(first->log().find("restack worker stopped cleanly"), std::string::npos);

  const int port_second = freeLoopbackPort();
  auto second = worker("second", {.store = store->path(), .http_port = port_second, .batch_size = 10});
  ASSERT_TRUE(second->start());
  EXPECT_EQ(stream.join(), "");
  EXPECT_TRUE(waitForIds(bootstrap(), topics_.symbolicated, "s", total)) << "the restarted worker did not catch up";
  // The store remembered how far the symbols topic was applied: nothing ingested again.
  EXPECT_EQ(metric(port_second, "uploads_ingested_total"), std::optional<uint64_t>(0));
  status = second->terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describeWaitStatus(*status);

  const auto seen = countIds(readTopic(bootstrap(), topics_.symbolicated));
  EXPECT_EQ(seen.size(), static_cast<size_t>(total));
  int repeated = 0;
  for (const auto& [id, count] : seen) {
    if (count != 1 && ++repeated <= 10) ADD_FAILURE() << id << " was published " << count << " times";
  }
  EXPECT_EQ(repeated, 0) << "a graceful stop commits everything it published";
  EXPECT_EQ(missingIds(seen, "s", total), "") << "lost events";
}

TEST_F(WorkerOnKafka, SigkillInASteadyStreamLosesNothingAndRepeatsNothingExactlyOnce) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const auto builds = uploadShopBuilds(library);

  constexpr uint32_t kBatch = 5;
  auto store = TempDir::create("restack-kafkaint-store-");
  ASSERT_TRUE(store);
  const int port_first = freeLoopbackPort();
  auto first = worker("first", {.store = store->path(), .http_port = port_first, .batch_size = kBatch});
  ASSERT_TRUE(first->start());
  ASSERT_TRUE(waitForAssigned(*first, port_first, [](uint64_t n) { return n == kEventPartitions; }));

  // The stream outpaces the worker, so it is always busy (consume, restore, produce, wait for
  // acks, commit) and the kill lands inside a batch rather than between two.
  const int total = 600;
  EventStream stream(bootstrap(), topics_.events, events("k", 0, total, library, "shop", builds), 30, 30ms);
  ASSERT_TRUE(waitUntil([&] { return metric(port_first, "events_published_total").value_or(0) >= 150; }, 60s, 20ms));
  first->signal(SIGKILL);
  auto status = first->waitForExit(10s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) << describeWaitStatus(*status);
  const size_t before_restart = readTopic(bootstrap(), topics_.symbolicated, 300ms).size();
  EXPECT_LT(before_restart, static_cast<size_t>(total)) << "the worker should have been killed in the middle";

  // The restart reuses the store; the group waits for the killed member's session to expire.
  const int port_second = freeLoopbackPort();
  auto second = worker("second", {.store = store->path(), .http_port = port_second, .batch_size = kBatch});
  ASSERT_TRUE(second->start());
  EXPECT_EQ(stream.join(), "");
  EXPECT_TRUE(waitForIds(bootstrap(), topics_.symbolicated, "k", total)) << "the restarted worker did not catch up";
  status = second->terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describeWaitStatus(*status);

  const auto seen = countIds(readTopic(bootstrap(), topics_.symbolicated));
  EXPECT_EQ(missingIds(seen, "k", total), "") << "lost events";
  EXPECT_EQ(seen.size(), static_cast<size_t>(total));
  size_t duplicates = 0;
  for (const auto& [id, count] : seen) duplicates += static_cast<size_t>(count - 1);
  std::fprintf(stderr, "[result] SIGKILL with %zu of %d events restored: %zu duplicate(s)\n", before_restart, total,
               duplicates);
  // exactly_once: the killed worker's open transaction was aborted when its successor (same
  // transactional.id) started, so read_committed consumers see every output once.
  EXPECT_EQ(duplicates, 0u);
  const auto fingerprints = countIds(readTopic(bootstrap(), topics_.fingerprints));
  EXPECT_EQ(fingerprints.size(), static_cast<size_t>(total));
  for (const auto& [id, count] : fingerprints) EXPECT_EQ(count, 1) << "fingerprint record of " << id;
  // The aborted transaction's records are in the log, hidden from read_committed.
  testkafka::ConsumeOptions uncommitted;
  uncommitted.isolation_level = "read_uncommitted";
  uncommitted.idle = 500ms;
  auto everything = testkafka::consumeAll(bootstrap(), topics_.symbolicated, uncommitted);
  ASSERT_TRUE(everything);
  std::fprintf(stderr, "[result] %zu records in the log, %d committed\n", everything->size(), total);
}

TEST_F(WorkerOnKafka, TwoWorkerProcessesShareTheGroupAndTheSurvivorTakesEverything) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const auto builds = buildsCoveringPartitions("shop", kEventPartitions, 2);
  std::vector<KafkaRecord> uploads;
  for (const auto& build : builds) uploads.push_back(uploadRecord(library, "shop", build));
  produce(topics_.symbols, uploads);

  constexpr uint32_t kBatch = 10;
  auto store_a = TempDir::create("restack-kafkaint-a-");
  auto store_b = TempDir::create("restack-kafkaint-b-");
  ASSERT_TRUE(store_a && store_b);
  const int port_a = freeLoopbackPort();
  int port_b = freeLoopbackPort();
  while (port_b == port_a) port_b = freeLoopbackPort();
  auto a = worker("a", {.store = store_a->path(), .http_port = port_a, .batch_size = kBatch});
  auto b = worker("b", {.store = store_b->path(), .http_port = port_b, .batch_size = kBatch});
  ASSERT_TRUE(a->start());
  ASSERT_TRUE(waitForAssigned(*a, port_a, [](uint64_t n) { return n == kEventPartitions; }));

  // B joins while A works through a backlog: A's revocation flushes and commits mid-work.
  produce(topics_.events, events("p", 0, 300, library, "shop", builds));
  ASSERT_TRUE(b->start());
  ASSERT_TRUE(waitUntil(
      [&] {
        auto assigned_a = metric(port_a, "assigned_partitions");
        auto assigned_b = metric(port_b, "assigned_partitions");
        return assigned_a && assigned_b && *assigned_a > 0 && *assigned_b > 0 &&
               *assigned_a + *assigned_b == kEventPartitions;
      },
      60s))
      << "a: " << metric(port_a, "assigned_partitions").value_or(99)
      << ", b: " << metric(port_b, "assigned_partitions").value_or(99);
  EXPECT_TRUE(waitForIds(bootstrap(), topics_.symbolicated, "p", 300));
  // B replayed the uploads of the partitions it took over into its own store.
  EXPECT_GT(metric(port_b, "uploads_ingested_total").value_or(0), 0u);
  EXPECT_LT(metric(port_b, "uploads_ingested_total").value_or(0), builds.size());

  // A steady stream that both restore (each owns partitions that receive events); A stops in
  // the middle of it and B takes every partition over.
  const uint64_t a_before = metric(port_a, "events_consumed_total").value_or(0);
  const uint64_t b_before = metric(port_b, "events_consumed_total").value_or(0);
  EventStream stream(bootstrap(), topics_.events, events("p", 300, 300, library, "shop", builds), 10, 60ms);
  ASSERT_TRUE(waitUntil(
      [&] {
        return metric(port_a, "events_consumed_total").value_or(0) > a_before &&
               metric(port_b, "events_consumed_total").value_or(0) > b_before;
      },
      30s))
      << "a consumed " << metric(port_a, "events_consumed_total").value_or(0) - a_before << ", b consumed "
      << metric(port_b, "events_consumed_total").value_or(0) - b_before << " of the stream";
  auto status = a->terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describeWaitStatus(*status);
  EXPECT_LT(stream.produced(), stream.total()) << "a should have stopped in the middle of the stream";
  ASSERT_TRUE(waitForAssigned(*b, port_b, [](uint64_t n) { return n == kEventPartitions; }))
      << "b did not take every partition after a stopped";
  EXPECT_EQ(stream.join(), "");
  EXPECT_TRUE(waitForIds(bootstrap(), topics_.symbolicated, "p", 600));
  EXPECT_EQ(metric(port_b, "uploads_ingested_total"), std::optional<uint64_t>(builds.size()))
      << "b should hold every build's upload, each ingested once";
  status = b->terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describeWaitStatus(*status);

  const auto restored = readTopic(bootstrap(), topics_.symbolicated);
  std::map<std::string, int> seen;
  for (const auto& record : restored) {
    Json json;
    ASSERT_TRUE(json.parse(record.value));
    ++seen[stringAt(json.root["event_id"])];
    EXPECT_EQ(stringAt(json.root["symbolication"]["status"]), "complete") << *record.value;
  }
  EXPECT_EQ(missingIds(seen, "p", 600), "") << "lost events";
  EXPECT_EQ(seen.size(), 600u);
  size_t duplicates = 0;
  for (const auto& [id, count] : seen) duplicates += static_cast<size_t>(count - 1);
  std::fprintf(stderr, "[result] rebalance: %zu duplicate(s), bound %u\n", duplicates, kBatch * kEventPartitions);
  // At-least-once across the two hand-overs: at most one batch per partition that moved.
  EXPECT_LE(duplicates, static_cast<size_t>(kBatch * kEventPartitions));
}

TEST_F(WorkerOnKafka, AbortedTransactionsShowNothingTwiceAndLoseNothing) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const auto builds = uploadShopBuilds(library);
  const int total = 200;
  produce(topics_.events, events("t", 0, total, library, "shop", builds));

  auto store = TempDir::create("restack-kafkaint-store-");
  ASSERT_TRUE(store);
  config::Config config = testConfig(bootstrap(), store->path(), group_);
  config.kafka.topics = topics_;
  config.kafka.delivery = "exactly_once";
  config.kafka.transactional_id = group_ + "-inproc";
  config.worker.batch_size = 10;
  // Every third transaction that has work is aborted just before its commit.
  std::atomic<int> asked{0}, aborted{0};
  worker::Worker::Hooks hooks;
  hooks.abort_transaction = [&] {
    if (++asked % 3 != 0) return false;
    ++aborted;
    return true;
  };
  auto running = RunningWorker::start(config, hooks);
  ASSERT_TRUE(running);
  EXPECT_TRUE(waitForIds(bootstrap(), topics_.symbolicated, "t", total)) << "not every event was published";
  ASSERT_TRUE(running->stop());
  EXPECT_GE(aborted.load(), 3);

  const auto seen = countIds(readTopic(bootstrap(), topics_.symbolicated));
  EXPECT_EQ(missingIds(seen, "t", total), "") << "lost events";
  EXPECT_EQ(seen.size(), static_cast<size_t>(total));
  for (const auto& [id, count] : seen) EXPECT_EQ(count, 1) << id << " visible " << count << " times";
  const auto fingerprints = countIds(readTopic(bootstrap(), topics_.fingerprints));
  for (const auto& [id, count] : fingerprints) EXPECT_EQ(count, 1) << "fingerprint record of " << id;
  // The aborted outputs were written and are hidden: read_uncommitted sees more.
  testkafka::ConsumeOptions uncommitted;
  uncommitted.isolation_level = "read_uncommitted";
  uncommitted.idle = 500ms;
  auto everything = testkafka::consumeAll(bootstrap(), topics_.symbolicated, uncommitted);
  ASSERT_TRUE(everything);
  EXPECT_GT(everything->size(), static_cast<size_t>(total)) << "no aborted record reached the log";
}

// Fingerprint records of the event ids starting with `prefix`: event id -> "replaces" values
// ("" for a record that replaces nothing).
std::map<std::string, std::vector<std::string>> fingerprintRecords(const std::vector<KafkaRecord>& records,
                                                                   const std::string& prefix) {
  std::map<std::string, std::vector<std::string>> out;
  for (const KafkaRecord& record : records) {
    Json json;
    if (!json.parse(record.value)) continue;
    const std::string id = stringAt(json.root["event_id"]);
    simdjson::dom::element replaces;  // absent from a record that replaces nothing
    const bool replacing = json.root["replaces"].get(replaces) == simdjson::SUCCESS;
    if (id.starts_with(prefix)) out[id].push_back(replacing ? stringAt(replaces) : std::string());
  }
  return out;
}

TEST_F(WorkerOnKafka, PendingEventsMoveWithTheirPartitionAndTheNewOwnerRestoresThem) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const auto builds = buildsCoveringPartitions("late", kEventPartitions, 1);
  int port_a = 0, port_b = 0;
  auto a = workerWithOwnStore("a", &port_a);
  auto b = workerWithOwnStore("b", &port_b);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->start());
  ASSERT_TRUE(waitForAssigned(*a, port_a, [](uint64_t n) { return n == kEventPartitions; }));

  // Events of every partition whose symbols were never uploaded: published provisional, kept.
  const int total = 40;
  produce(topics_.events, events("m", 0, total, library, "late", builds));
  ASSERT_TRUE(waitUntil([&] { return metric(port_a, "pending_events").value_or(0) == total; }, 60s))
      << "a kept " << metric(port_a, "pending_events").value_or(0) << " pending events";

  // b takes some partitions (replaying their pending state from the topic), then a stops and b
  // takes the rest.
  ASSERT_TRUE(b->start());
  ASSERT_TRUE(waitUntil(
      [&] {
        auto assigned_b = metric(port_b, "assigned_partitions");
        return assigned_b && *assigned_b > 0 && *assigned_b < kEventPartitions;
      },
      60s));
  EXPECT_GT(metric(port_b, "pending_events").value_or(0), 0u);
  auto status = a->terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describeWaitStatus(*status);
  ASSERT_TRUE(waitForAssigned(*b, port_b, [](uint64_t n) { return n == kEventPartitions; }));
  EXPECT_EQ(metric(port_b, "pending_events"), std::optional<uint64_t>(total));

  // The symbols arrive: b restores every event and publishes the final fingerprint records.
  std::vector<KafkaRecord> uploads;
  for (const auto& build : builds) uploads.push_back(uploadRecord(library, "late", build));
  produce(topics_.symbols, uploads);
  ASSERT_TRUE(waitUntil([&] { return metric(port_b, "events_restored_later_total").value_or(0) == total; }, 60s))
      << "b restored " << metric(port_b, "events_restored_later_total").value_or(0) << " later";
  EXPECT_EQ(metric(port_b, "pending_events"), std::optional<uint64_t>(0));
  status = b->terminate();
  ASSERT_TRUE(status);

  const auto records = fingerprintRecords(readTopic(bootstrap(), topics_.fingerprints), "m");
  EXPECT_EQ(records.size(), static_cast<size_t>(total));
  for (auto [id, replaces] : records) {
    ASSERT_EQ(replaces.size(), 2u) << id;
    std::sort(replaces.begin(), replaces.end());  // the two may lie on different partitions
    EXPECT_TRUE(replaces[0].empty()) << id;
    EXPECT_FALSE(replaces[1].empty()) << id << ": the final record names the provisional one";
  }
  // Every pending record was closed with a tombstone.
  const auto state = readTopic(bootstrap(), topics_.pending);
  std::map<std::string, bool> live;
  for (const KafkaRecord& record : state) live[record.key.value_or("")] = record.value.has_value();
  EXPECT_EQ(live.size(), static_cast<size_t>(total));
  for (const auto& [key, alive] : live) EXPECT_FALSE(alive) << "pending record left open";
}

// A worker stopped in the middle of a commit (SIGSTOP, a long GC pause) holds a transaction open
// whose offsets already passed the group's check, with the pending tombstones of the events it
// restored later. The next owner of the partitions must see those tombstones: it waits for that
// transaction before replaying the pending state, and restores nothing the open transaction
// already restored. Replayed first, it restored every such event again (the fault test's
// duplicates, docs/operations.md section 10).
TEST_F(WorkerOnKafka, ANewOwnerReplaysPendingStateOnlyOnceThePreviousOwnersOpenCommitIsDone) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const auto builds = buildsCoveringPartitions("late", kEventPartitions, 1);
  int port_a = 0;
  auto a = workerWithOwnStore("a", &port_a);
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->start());
  ASSERT_TRUE(waitForAssigned(*a, port_a, [](uint64_t n) { return n == kEventPartitions; }));
  const int total = 20;
  produce(topics_.events, events("z", 0, total, library, "late", builds));
  ASSERT_TRUE(waitUntil([&] { return metric(port_a, "pending_events").value_or(0) == total; }, 60s));
  auto status = a->terminate();
  ASSERT_TRUE(status);

  // The stopped previous owner: a member of the group that closed every pending record in a
  // transaction, sent the group's committed offsets with it, and did not commit yet.
  std::map<std::string, int32_t> live;
  for (const KafkaRecord& record : readTopic(bootstrap(), topics_.pending)) {
    if (record.value)
      live[record.key.value_or("")] = record.partition;
    else
      live.erase(record.key.value_or(""));
  }
  ASSERT_EQ(live.size(), static_cast<size_t>(total));
  using testkafka::KafkaError;
  using testkafka::TopicPartitionList;
  auto member = testkafka::makeClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap()},
                                                          {"group.id", group_},
                                                          {"enable.auto.commit", "false"},
                                                          {"isolation.level", "read_committed"}});
  ASSERT_TRUE(member) << member.error().message();
  TopicPartitionList topics(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(topics.get(), topics_.events.c_str(), RD_KAFKA_PARTITION_UA);
  ASSERT_EQ(rd_kafka_subscribe(member->get(), topics.get()), RD_KAFKA_RESP_ERR_NO_ERROR);
  TopicPartitionList assigned;
  ASSERT_TRUE(waitUntil(
      [&] {
        testkafka::Message message(rd_kafka_consumer_poll(member->get(), 100));
        rd_kafka_topic_partition_list_t* now = nullptr;
        rd_kafka_assignment(member->get(), &now);
        assigned.reset(now);
        return assigned && assigned->cnt == kEventPartitions;
      },
      60s));
  ASSERT_EQ(rd_kafka_committed(member->get(), assigned.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  auto zombie = testkafka::makeClient(RD_KAFKA_PRODUCER,
                                      {{"bootstrap.servers", bootstrap()}, {"transactional.id", group_ + "-zombie"}});
  ASSERT_TRUE(zombie) << zombie.error().message();
  auto ok = [](rd_kafka_error_t* error) { return KafkaError(error) ? std::string(rd_kafka_error_string(error)) : ""; };
  ASSERT_EQ(ok(rd_kafka_init_transactions(zombie->get(), 30000)), "");
  ASSERT_EQ(ok(rd_kafka_begin_transaction(zombie->get())), "");
  for (const auto& [key, partition] : live) {
    ASSERT_EQ(
        rd_kafka_producev(zombie->get(), RD_KAFKA_V_TOPIC(topics_.pending.c_str()), RD_KAFKA_V_PARTITION(partition),
                          RD_KAFKA_V_KEY(key.data(), key.size()), RD_KAFKA_V_VALUE(nullptr, 0), RD_KAFKA_V_END),
        RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  rd_kafka_consumer_group_metadata_t* group = rd_kafka_consumer_group_metadata(member->get());
  const std::string sent = ok(rd_kafka_send_offsets_to_transaction(zombie->get(), assigned.get(), group, 30000));
  rd_kafka_consumer_group_metadata_destroy(group);
  ASSERT_EQ(sent, "");
  rd_kafka_flush(zombie->get(), 10000);
  // The assignment's copy still refers to the consumer's partitions, and destroying a client
  // waits for every such reference: it goes first. Closing the consumer leaves the group, so the
  // next owner is assigned every partition.
  assigned.reset();
  member->reset();

  // The next owner starts and the events' symbols arrive while that commit is still open.
  int port_b = 0;
  auto b = workerWithOwnStore("b", &port_b);
  ASSERT_TRUE(b && b->start());
  std::vector<KafkaRecord> uploads;
  for (const auto& build : builds) uploads.push_back(uploadRecord(library, "late", build));
  produce(topics_.symbols, uploads);
  std::this_thread::sleep_for(5s);
  EXPECT_EQ(metric(port_b, "events_restored_later_total").value_or(0), 0u);
  ASSERT_EQ(ok(rd_kafka_commit_transaction(zombie->get(), 30000)), "");
  zombie->reset();

  ASSERT_TRUE(waitForAssigned(*b, port_b, [](uint64_t n) { return n == kEventPartitions; }));
  // Time for the uploads and any re-check to be applied: nothing is pending any more, so
  // nothing is restored again.
  ASSERT_TRUE(waitUntil([&] { return metric(port_b, "uploads_ingested_total").value_or(0) >= uploads.size(); }, 60s));
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(metric(port_b, "pending_events"), std::optional<uint64_t>(0));
  EXPECT_EQ(metric(port_b, "events_restored_later_total").value_or(0), 0u);
  status = b->terminate();
  ASSERT_TRUE(status);
  for (const auto& [id, replaces] : fingerprintRecords(readTopic(bootstrap(), topics_.fingerprints), "z")) {
    EXPECT_EQ(replaces.size(), 1u) << id << ": restored again by the next owner";
  }
}

// Events that trickle in (one at a time, a producer each): by default each is restored as it
// arrives and the transactions follow the stream; with worker.min_commit_interval_ms they wait
// for the interval and commit together, at most one transaction per interval. Either way every
// event is published once. The trickle lasts several seconds and the interval is 3 s, so that the
// default run commits more often even when a loaded machine makes each commit take hundreds of
// milliseconds (with 10 ms pauses and a 1 s interval, a full ctest run once gave it 3
// transactions in 2.3 s against 4 in 4.6 s).
TEST_F(WorkerOnKafka, AMinimumCommitIntervalGathersATrickleIntoFewerTransactions) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const auto builds = uploadShopBuilds(library);
  constexpr int kTrickle = 60;
  constexpr uint32_t kIntervalMs = 3000;
  struct Run {
    uint64_t transactions = 0;
    double seconds = 0;
  };
  auto trickle = [&](const std::string& prefix, uint32_t interval_ms) {
    Run run;
    auto store = TempDir::create("restack-kafkaint-store-");
    EXPECT_TRUE(store);
    if (!store) return run;
    const int port = freeLoopbackPort();
    auto process = worker(
        prefix, {.store = store->path(), .http_port = port, .batch_size = 500, .min_commit_interval_ms = interval_ms});
    EXPECT_TRUE(process->start());
    EXPECT_TRUE(waitForAssigned(*process, port, [](uint64_t n) { return n == kEventPartitions; }));
    const uint64_t before = metric(port, "batches_committed_total").value_or(0);
    const auto start = Clock::now();
    EventStream stream(bootstrap(), topics_.events, events(prefix, 0, kTrickle, library, "shop", builds), 1, 40ms);
    EXPECT_EQ(stream.join(), "");
    EXPECT_TRUE(waitForIds(bootstrap(), topics_.symbolicated, prefix, kTrickle)) << prefix;
    run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    run.transactions = metric(port, "batches_committed_total").value_or(0) - before;
    auto status = process->terminate();
    EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    return run;
  };
  const Run gathered = trickle("g", kIntervalMs);
  const Run at_once = trickle("o", 0);
  std::fprintf(stderr, "with %u ms: %llu transactions in %.1f s; without: %llu in %.1f s\n", kIntervalMs,
               static_cast<unsigned long long>(gathered.transactions), gathered.seconds,
               static_cast<unsigned long long>(at_once.transactions), at_once.seconds);
  EXPECT_GE(gathered.transactions, 1u);
  EXPECT_LE(gathered.transactions, static_cast<uint64_t>(gathered.seconds * 1000 / kIntervalMs) + 2);
  EXPECT_GT(at_once.transactions, gathered.transactions);
  const auto seen = countIds(readTopic(bootstrap(), topics_.symbolicated));
  EXPECT_EQ(seen.size(), static_cast<size_t>(2 * kTrickle));
  for (const auto& [id, count] : seen) EXPECT_EQ(count, 1) << id;
}

TEST_F(WorkerOnKafka, MoreThanAThousandPendingEventsOfOneAppAreAllRestoredLater) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const std::vector<std::string> builds = {"7.0"};
  const int total = 1200;
  produce(topics_.events, events("w", 0, total, library, "wide", builds));
  auto store = TempDir::create("restack-kafkaint-store-");
  ASSERT_TRUE(store);
  const int port = freeLoopbackPort();
  auto process = worker("worker", {.store = store->path(), .http_port = port, .batch_size = 500});
  ASSERT_TRUE(process->start());
  ASSERT_TRUE(waitUntil([&] { return metric(port, "pending_events").value_or(0) == total; }, 90s))
      << metric(port, "pending_events").value_or(0) << " pending";
  produce(topics_.symbols, {uploadRecord(library, "wide", builds[0])});
  ASSERT_TRUE(waitUntil([&] { return metric(port, "events_restored_later_total").value_or(0) == total; }, 120s))
      << metric(port, "events_restored_later_total").value_or(0) << " of " << total << " restored later";
  EXPECT_EQ(metric(port, "pending_events"), std::optional<uint64_t>(0));
  auto status = process->terminate();
  ASSERT_TRUE(status);
  const auto seen = countIds(readTopic(bootstrap(), topics_.symbolicated));
  EXPECT_EQ(seen.size(), static_cast<size_t>(total));
  for (const auto& [id, count] : seen) EXPECT_EQ(count, 2) << id << ": provisional and final";
}

TEST_F(WorkerOnKafka, ACorruptStoreFileAtStartIsMovedAsideAndRebuilt) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const auto builds = uploadShopBuilds(library);
  produce(topics_.events, events("c", 0, 8, library, "shop", builds));
  auto parent = TempDir::create("restack-kafkaint-corrupt-");
  ASSERT_TRUE(parent);
  const std::string store_path = parent->path() + "/store";
  const int port = freeLoopbackPort();
  auto first = worker("first", {.store = store_path, .http_port = port});
  ASSERT_TRUE(first->start());
  ASSERT_TRUE(waitForIds(bootstrap(), topics_.symbolicated, "c", 8));
  ASSERT_TRUE(first->terminate());

  // Flush everything into table files, then damage a data block of each.
  {
    StoreOptions options;
    options.path = store_path;
    auto store = SymbolStore::open(options);
    ASSERT_TRUE(store) << store.error().message();
    for (rocksdb::ColumnFamilyHandle* family : (*store)->families()) {
      ASSERT_TRUE((*store)->db().Flush(rocksdb::FlushOptions(), family).ok());
    }
  }
  int damaged = 0;
  for (const auto& entry : std::filesystem::directory_iterator(store_path)) {
    if (entry.path().extension() != ".sst" || entry.file_size() < 200) continue;
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(20);
    const std::string junk(32, '\xab');
    file.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    ++damaged;
  }
  ASSERT_GT(damaged, 0) << "no table file to damage";

  auto second = worker("second", {.store = store_path, .http_port = port});
  ASSERT_TRUE(second->start());
  produce(topics_.events, events("c", 8, 8, library, "shop", builds));
  EXPECT_TRUE(waitForIds(bootstrap(), topics_.symbolicated, "c", 16)) << "the rebuilt worker did not serve";
  // The symbols topics were replayed from their start into the new store.
  EXPECT_EQ(metric(port, "uploads_ingested_total"), std::optional<uint64_t>(builds.size()));
  auto status = second->terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describeWaitStatus(*status);
  EXPECT_NE(second->log().find("the symbol store was corrupt"), std::string::npos);
  int moved = 0;
  for (const auto& entry : std::filesystem::directory_iterator(parent->path())) {
    moved += entry.path().filename().string().starts_with("store.corrupt-") ? 1 : 0;
  }
  EXPECT_EQ(moved, 1);
  for (const auto& record : readTopic(bootstrap(), topics_.symbolicated)) {
    Json json;
    ASSERT_TRUE(json.parse(record.value));
    EXPECT_EQ(stringAt(json.root["symbolication"]["status"]), "complete") << *record.value;
  }
}

TEST_F(WorkerOnKafka, HealthReadinessAndMetricsEndpoints) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  const auto builds = buildsCoveringPartitions("shop", kEventPartitions, 1);
  auto store = TempDir::create("restack-kafkaint-store-");
  ASSERT_TRUE(store);
  const int port = freeLoopbackPort();
  auto process = worker("worker", {.store = store->path(), .http_port = port});
  ASSERT_TRUE(process->start());

  ASSERT_TRUE(waitUntil([&] { return httpGet(port, "/readyz").status == 200; }, 60s))
      << "/readyz never answered 200: " << httpGet(port, "/readyz").status;
  EXPECT_EQ(httpGet(port, "/readyz").body, "ready\n");
  ASSERT_TRUE(waitUntil([&] { return httpGet(port, "/healthz").status == 200; }, 10s))
      << "/healthz: " << httpGet(port, "/healthz").status << " " << httpGet(port, "/healthz").body;
  EXPECT_EQ(httpGet(port, "/nothing-here").status, 404);

  HttpReply metrics = httpGet(port, "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.headers.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << metrics.headers;
  EXPECT_NE(metrics.body.find("# TYPE restack_events_consumed_total counter\n"), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("\nrestack_events_consumed_total "), std::string::npos) << metrics.body;

  // The counters count what happened.
  std::vector<KafkaRecord> uploads;
  for (const auto& build : builds) uploads.push_back(uploadRecord(library, "shop", build));
  produce(topics_.symbols, uploads);
  produce(topics_.events, events("h", 0, 12, library, "shop", builds));
  ASSERT_TRUE(waitUntil([&] { return metric(port, "events_published_total").value_or(0) >= 12; }, 60s))
      << httpGet(port, "/metrics").body;
  EXPECT_EQ(metric(port, "events_consumed_total"), std::optional<uint64_t>(12));
  EXPECT_EQ(metric(port, "uploads_ingested_total"), std::optional<uint64_t>(builds.size()));
  EXPECT_EQ(metric(port, "assigned_partitions"), std::optional<uint64_t>(kEventPartitions));
  EXPECT_EQ(httpGet(port, "/healthz").status, 200);
  // What the dashboard (helm/restack/dashboards/restack.json) plots.
  uint64_t by_platform = 0;
  for (const char* platform : worker::kPlatforms) {
    by_platform += metric(port, std::string("events_by_platform_total{platform=\"") + platform + "\"}").value_or(0);
  }
  EXPECT_EQ(by_platform, 12u);
  EXPECT_EQ(metric(port, "restore_seconds_count"), std::optional<uint64_t>(12));
  const auto native_restored = metric(port, "frames_by_kind_total{kind=\"native\",status=\"symbolicated\"}");
  EXPECT_GT(native_restored.value_or(0), 0u);
  EXPECT_EQ(native_restored, metric(port, "frames_symbolicated_total"));
  EXPECT_EQ(metric(port, "restore_seconds_bucket{le=\"+Inf\"}"), std::optional<uint64_t>(12));
  EXPECT_EQ(metric(port, "end_to_end_latency_seconds_count"), std::optional<uint64_t>(12));
  // The gauges are refreshed every 5 s from the loop.
  EXPECT_TRUE(waitUntil([&] { return metric(port, "store_bytes").value_or(0) > 0; }, 20s))
      << httpGet(port, "/metrics").body;
  EXPECT_TRUE(waitUntil([&] { return metric(port, "consumer_lag") == std::optional<uint64_t>(0); }, 20s));
  EXPECT_TRUE(waitUntil([&] { return metric(port, "symbols_lag") == std::optional<uint64_t>(0); }, 20s));

  auto status = process->terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << describeWaitStatus(*status);
  EXPECT_EQ(httpGet(port, "/healthz").status, 0) << "the status port should be closed with the process";
}

}  // namespace
}  // namespace restack::worker_test
