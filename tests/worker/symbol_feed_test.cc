// Every symbol upload ends applied, refused (its DLQ copy acknowledged before its offset is
// recorded) or deferred for retry: the symbol feed on librdkafka's mock cluster, with the fetch of
// upload locations replaced by a scripted one (passing failures, then success; exceptions).
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>

#include "formats/common/mapped_file.h"
#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "symbolstore/store.h"
#include "tests/support/kafka_records.h"
#include "tests/worker/worker_fixtures.h"
#include "worker/kafka/deferred_uploads.h"
#include "worker/kafka/symbol_feed.h"

namespace restack::worker_test {
namespace {

using testkafka::KafkaRecord;
using worker::SymbolFeed;

constexpr const char* kThrows = "https://symbols.invalid/throws";

// A fetch that fails with the queued errors first, then hands out the test library.
struct ScriptedFetch {
  std::map<std::string, std::deque<Error>> failures;
  std::set<std::string> always_unavailable;
  std::map<std::string, int> calls;
  std::string path;
  std::chrono::milliseconds delay{0};

  SymbolFeed::FetchFunction function() {
    return [this](const std::string& location) -> Expected<worker::FetchedUpload> {
      ++calls[location];
      if (delay.count() > 0) std::this_thread::sleep_for(delay);
      if (location == kThrows) throw std::runtime_error("secret-upload-content");
      if (always_unavailable.count(location)) return Error(ErrorCode::kUnavailable, "HTTP 503 from symbols.invalid");
      auto& queue = failures[location];
      if (!queue.empty()) {
        Error error = queue.front();
        queue.pop_front();
        return error;
      }
      worker::FetchedUpload fetched;
      fetched.path = path;
      return fetched;
    };
  }
};

KafkaRecord locationUpload(const std::string& build, const std::string& location) {
  KafkaRecord record;
  record.key = "shop:" + build;
  record.value = std::string();
  record.headers = {{"restack.kind", std::string("elf")},
                    {"restack.file_name", std::string("libcrash.so")},
                    {"restack.location", location}};
  return record;
}

KafkaRecord inlineUpload(const NativeLibrary& library, const std::string& build) {
  auto file = readFile(library.path);
  EXPECT_TRUE(file);
  KafkaRecord record;
  record.key = "shop:" + build;
  record.value = file ? *file : std::string();
  record.headers = {{"restack.kind", std::string("elf")}, {"restack.file_name", std::string("libcrash.so")}};
  return record;
}

// A store, a feed over it and what the feed reported.
class Feed {
 public:
  Feed(const config::Config& config, SymbolFeed::FetchFunction fetch, SymbolFeed::IngestFunction ingest = {}) {
    StoreOptions options;
    options.path = config.store.path;
    options.block_cache_bytes = 8 << 20;
    auto store = SymbolStore::open(options);
    EXPECT_TRUE(store) << store.error().message();
    if (!store) return;
    store_ = std::move(*store);
    auto feed = SymbolFeed::create(
        config, *store_, metrics_,
        [this](const UploadMeta& meta, const IngestReport&) { ingested_.push_back(meta.build_id); }, fetch, ingest);
    EXPECT_TRUE(feed) << feed.error().message();
    if (feed) feed_ = std::move(*feed);
  }
  SymbolFeed& feed() { return *feed_; }
  worker::Metrics& metrics() { return metrics_; }
  const std::vector<std::string>& ingested() const { return ingested_; }
  std::optional<int64_t> applied(const std::string& topic) {
    auto applied = store_->appliedOffset(topic, 0);
    EXPECT_TRUE(applied);
    return applied ? *applied : std::nullopt;
  }
  // Calls applyFetched() as the worker loop does until `done()` (or 20 s).
  template <typename Done>
  bool runUntil(Done&& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      Status status = feed_->applyFetched();
      EXPECT_TRUE(status) << status.error().message();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }

 private:
  worker::Metrics metrics_;
  std::unique_ptr<SymbolStore> store_;
  std::unique_ptr<SymbolFeed> feed_;
  std::vector<std::string> ingested_;
};

std::vector<KafkaRecord> readTopic(const std::string& bootstrap, const std::string& topic) {
  testkafka::ConsumeOptions options;
  options.idle = std::chrono::milliseconds(300);
  auto records = testkafka::consumeAll(bootstrap, topic, options);
  EXPECT_TRUE(records) << records.error().message();
  return records ? *records : std::vector<KafkaRecord>();
}

void produce(const std::string& bootstrap, const std::string& topic, const std::vector<KafkaRecord>& records) {
  auto sent = testkafka::produceAll(bootstrap, topic, records);
  ASSERT_TRUE(sent) << sent.error().message();
}

config::Config feedConfig(const MockCluster& kafka, const std::string& store, const std::string& group) {
  config::Config config = testConfig(kafka.bootstrap(), store, group);
  config.uploads.retry_initial_backoff_ms = 20;
  config.uploads.retry_max_backoff_ms = 100;
  config.uploads.retry_deadline_s = 60;
  return config;
}

TEST(SymbolFeed, AnUploadThatFailsForAPassingReasonIsRetriedWhileThePartitionMovesOn) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-retry");
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  const std::string location = "https://symbols.invalid/shop-1.0.so?X-Amz-Signature=s";
  produce(kafka.bootstrap(), topics.symbols, {locationUpload("1.0", location), inlineUpload(library, "2.0")});

  ScriptedFetch fetch;
  fetch.path = library.path;
  fetch.failures[location] = {Error(ErrorCode::kUnavailable, "HTTP 503"), Error(ErrorCode::kUnavailable, "timeout")};
  Feed feed(config, fetch.function());
  ASSERT_TRUE(feed.feed().addPartitions({0}));

  // The partition moved past the failed upload: the later upload was applied, the failed one
  // lives in the store now.
  EXPECT_EQ(feed.applied(topics.symbols), std::optional<int64_t>(2));
  EXPECT_EQ(feed.ingested(), std::vector<std::string>{"2.0"});
  EXPECT_EQ(fetch.calls[location], 1);
  EXPECT_EQ(feed.metrics().uploads_deferred, 1u);
  EXPECT_GT(feed.metrics().uploads_deferred_oldest_ms, 0);

  ASSERT_TRUE(feed.runUntil([&] { return feed.ingested().size() == 2; }));
  EXPECT_EQ(feed.ingested(), (std::vector<std::string>{"2.0", "1.0"}));
  EXPECT_EQ(fetch.calls[location], 3);
  EXPECT_EQ(feed.metrics().upload_retries, 2u);
  EXPECT_EQ(feed.metrics().uploads_deferred, 0u);
  EXPECT_EQ(feed.metrics().uploads_deferred_oldest_ms, 0);
  EXPECT_EQ(feed.metrics().uploads_rejected, 0u);
  EXPECT_EQ(feed.applied(topics.symbols), std::optional<int64_t>(2));
  EXPECT_TRUE(readTopic(kafka.bootstrap(), topics.dlq).empty());
  const std::string text = feed.metrics().prometheusText();
  EXPECT_NE(text.find("restack_upload_retries_total 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("restack_uploads_deferred 0\n"), std::string::npos) << text;
}

TEST(SymbolFeed, AnUploadThatKeepsFailingGoesToTheDlqAfterTheDeadlineWithItsAttempts) {
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-deadline");
  config.uploads.retry_initial_backoff_ms = 100;
  config.uploads.retry_max_backoff_ms = 200;
  config.uploads.retry_deadline_s = 1;
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  const std::string location = "https://symbols.invalid/gone.so";
  produce(kafka.bootstrap(), topics.symbols, {locationUpload("1.0", location)});

  ScriptedFetch fetch;
  fetch.always_unavailable.insert(location);
  Feed feed(config, fetch.function());
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(feed.feed().addPartitions({0}));
  EXPECT_EQ(feed.metrics().uploads_deferred, 1u);
  ASSERT_TRUE(feed.runUntil([&] { return feed.metrics().uploads_given_up == 1; }));
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));

  auto dead = readTopic(kafka.bootstrap(), topics.dlq);
  ASSERT_EQ(dead.size(), 1u);
  const KafkaRecord& record = dead[0];
  EXPECT_EQ(record.key, std::optional<std::string>("shop:1.0"));
  EXPECT_EQ(record.header("restack.error.code"), std::optional<std::string>("unavailable"));
  EXPECT_EQ(record.header("restack.attempts"), std::optional<std::string>(std::to_string(fetch.calls[location])));
  EXPECT_GE(fetch.calls[location], 3);
  ASSERT_TRUE(record.header("restack.error"));
  EXPECT_NE(record.header("restack.error")->find("gave up after " + std::to_string(fetch.calls[location])),
            std::string::npos)
      << *record.header("restack.error");
  // The copy can be replayed: it carries the upload's own headers.
  EXPECT_EQ(record.header("restack.location"), std::optional<std::string>(location));
  EXPECT_EQ(record.header("restack.source.offset"), std::optional<std::string>("0"));
  EXPECT_EQ(feed.metrics().uploads_deferred, 0u);
  EXPECT_EQ(feed.metrics().uploads_refused_by_code[static_cast<size_t>(ErrorCode::kUnavailable)], 1u);
  // Given up for good: no further attempt.
  const int calls = fetch.calls[location];
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(feed.feed().applyFetched());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(fetch.calls[location], calls);
}

TEST(SymbolFeed, ARefusedUploadsOffsetIsRecordedOnlyAfterItsDlqCopyWasAcknowledged) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-dlq");
  // The DLQ topic may not be written to (its metadata answers "not authorized"); the producer
  // learns quickly when that changes.
  config.kafka.properties["message.timeout.ms"] = "1500";
  config.kafka.properties["topic.metadata.refresh.interval.ms"] = "200";
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  kafka.setTopicError(topics.dlq, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  KafkaRecord bad;
  bad.key = "shop:1.0";
  bad.value = "this is not a symbol file";
  produce(kafka.bootstrap(), topics.symbols, {bad, inlineUpload(library, "2.0")});

  ScriptedFetch fetch;
  Feed feed(config, fetch.function());
  Status caught_up = feed.feed().addPartitions({0});
  ASSERT_FALSE(caught_up);
  EXPECT_NE(caught_up.error().message().find("DLQ"), std::string::npos) << caught_up.error().message();
  EXPECT_EQ(feed.applied(topics.symbols), std::nullopt);
  EXPECT_TRUE(feed.ingested().empty());
  EXPECT_GE(feed.metrics().upload_dlq_write_failures, 1u);
  EXPECT_EQ(feed.metrics().uploads_rejected, 0u);
  // Still not recorded when tried again while the DLQ is missing.
  for (int i = 0; i < 3; ++i) {
    (void)feed.feed().applyFetched();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(feed.applied(topics.symbols), std::nullopt);
  EXPECT_TRUE(feed.ingested().empty());

  // The DLQ may be written again: the same upload is refused again, this time for good, and the
  // partition moves on.
  kafka.setTopicError(topics.dlq, RD_KAFKA_RESP_ERR_NO_ERROR);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (feed.applied(topics.symbols) != std::optional<int64_t>(2) && std::chrono::steady_clock::now() < deadline) {
    (void)feed.feed().applyFetched();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(feed.applied(topics.symbols), std::optional<int64_t>(2));
  EXPECT_EQ(feed.ingested(), std::vector<std::string>{"2.0"});
  auto dead = readTopic(kafka.bootstrap(), topics.dlq);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].value, bad.value);
  EXPECT_EQ(dead[0].header("restack.source.offset"), std::optional<std::string>("0"));
  EXPECT_EQ(feed.metrics().uploads_rejected, 1u);
}

TEST(SymbolFeed, AnUploadWhoseProcessingThrowsIsRefusedAndTheFeedGoesOn) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-throw");
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  produce(kafka.bootstrap(), topics.symbols, {locationUpload("1.0", kThrows), inlineUpload(library, "2.0")});

  ScriptedFetch fetch;
  Feed feed(config, fetch.function());
  ASSERT_TRUE(feed.feed().addPartitions({0}));
  EXPECT_EQ(feed.applied(topics.symbols), std::optional<int64_t>(2));
  EXPECT_EQ(feed.ingested(), std::vector<std::string>{"2.0"});
  auto dead = readTopic(kafka.bootstrap(), topics.dlq);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].header("restack.error.code"), std::optional<std::string>("internal"));
  ASSERT_TRUE(dead[0].header("restack.error"));
  EXPECT_EQ(dead[0].header("restack.error")->find("secret-upload-content"), std::string::npos);
  EXPECT_EQ(feed.metrics().uploads_refused_by_code[static_cast<size_t>(ErrorCode::kInternal)], 1u);
  EXPECT_EQ(feed.metrics().uploads_deferred, 0u);
}

TEST(SymbolFeed, DeferredUploadsSurviveARestart) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-restart");
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  const std::string location = "https://symbols.invalid/shop-1.0.so";
  produce(kafka.bootstrap(), topics.symbols, {locationUpload("1.0", location)});

  {
    ScriptedFetch down;
    down.always_unavailable.insert(location);
    Feed first(config, down.function());
    ASSERT_TRUE(first.feed().addPartitions({0}));
    EXPECT_EQ(first.applied(topics.symbols), std::optional<int64_t>(1));
    EXPECT_EQ(first.metrics().uploads_deferred, 1u);
  }

  ScriptedFetch up;
  up.path = library.path;
  Feed second(config, up.function());
  EXPECT_EQ(second.metrics().uploads_deferred, 1u);
  ASSERT_TRUE(second.feed().addPartitions({0}));
  // The partition is not read again from the deferred upload on: it comes from the store.
  EXPECT_EQ(up.calls[location], 0);
  ASSERT_TRUE(second.runUntil([&] { return !second.ingested().empty(); }));
  EXPECT_EQ(second.ingested(), std::vector<std::string>{"1.0"});  // its key and headers survived
  EXPECT_EQ(up.calls[location], 1);
  EXPECT_EQ(second.metrics().uploads_deferred, 0u);
  EXPECT_TRUE(readTopic(kafka.bootstrap(), topics.dlq).empty());
}

TEST(SymbolFeed, ACatchUpGivesUpOnlyWithoutProgress) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-stall");
  // Twice the time one upload takes between two steps of progress, and more than the margin a
  // loaded machine (CI runs two tests at once on two cores) adds to the 600 ms of each: with 1 s,
  // a step slowed by 400 ms read as a stall and failed the test.
  config.uploads.catch_up_stall_s = 2;
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  std::vector<KafkaRecord> uploads;
  for (int i = 0; i < 5; ++i) {
    uploads.push_back(locationUpload("b" + std::to_string(i), "https://symbols.invalid/" + std::to_string(i)));
  }
  produce(kafka.bootstrap(), topics.symbols, uploads);

  // Each upload takes 600 ms, one after the other, and the catch-up waits for all of them: it takes
  // longer than the stall limit, but progresses.
  config.uploads.fetch_threads = 1;
  config.uploads.fetch_wait_ms = 10000;
  ScriptedFetch slow;
  slow.path = library.path;
  slow.delay = std::chrono::milliseconds(600);
  {
    Feed feed(config, slow.function());
    const auto started = std::chrono::steady_clock::now();
    Status status = feed.feed().addPartitions({0});
    ASSERT_TRUE(status) << status.error().message();
    EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::seconds(3));
    EXPECT_EQ(feed.ingested().size(), 5u);
  }

  // No broker: no progress at all, so it gives up after about the stall limit.
  kafka.brokerDown();
  auto other = TempDir::create("symbol-feed-");
  ASSERT_TRUE(other);
  config.store.path = other->path();
  Feed feed(config, slow.function());
  const auto started = std::chrono::steady_clock::now();
  Status status = feed.feed().addPartitions({0});
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("no progress"), std::string::npos) << status.error().message();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(15));
}

// A download runs beside the loop: a catch-up waits for it only until uploads.fetch_wait_ms after
// the upload was read, the uploads after it in its partition are applied meanwhile, and the loop
// (applyFetched) ingests it once it arrives, without ever waiting for it.
TEST(SymbolFeed, ASlowDownloadHoldsNeitherTheCatchUpNorTheLoop) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-slow");
  config.uploads.fetch_wait_ms = 300;
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  const std::string location = "https://symbols.invalid/slow.so";
  produce(kafka.bootstrap(), topics.symbols, {locationUpload("1.0", location), inlineUpload(library, "2.0")});

  ScriptedFetch slow;
  slow.path = library.path;
  slow.delay = std::chrono::milliseconds(3000);
  Feed feed(config, slow.function());
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(feed.feed().addPartitions({0}));
  const auto caught_up = std::chrono::steady_clock::now() - started;
  EXPECT_GE(caught_up, std::chrono::milliseconds(250));  // it did wait, for fetch_wait_ms
  EXPECT_LT(caught_up, std::chrono::milliseconds(2500));
  EXPECT_EQ(feed.applied(topics.symbols), std::optional<int64_t>(2));
  EXPECT_EQ(feed.ingested(), std::vector<std::string>{"2.0"});
  EXPECT_EQ(feed.metrics().uploads_fetching, 1u);
  EXPECT_EQ(feed.metrics().uploads_deferred, 0u);  // nothing failed

  // The loop's calls return at once while the download runs.
  for (int i = 0; i < 5; ++i) {
    const auto call = std::chrono::steady_clock::now();
    ASSERT_TRUE(feed.feed().applyFetched());
    EXPECT_LT(std::chrono::steady_clock::now() - call, std::chrono::milliseconds(200));
  }
  // Events that wait for symbols no longer wait for it either: fetch_wait_ms has passed.
  const auto call = std::chrono::steady_clock::now();
  ASSERT_TRUE(feed.feed().catchUpToHighWatermarks({0}));
  EXPECT_LT(std::chrono::steady_clock::now() - call, std::chrono::milliseconds(200));

  ASSERT_TRUE(feed.runUntil([&] { return feed.ingested().size() == 2; }));
  EXPECT_EQ(feed.ingested(), (std::vector<std::string>{"2.0", "1.0"}));
  EXPECT_EQ(slow.calls[location], 1);
  EXPECT_EQ(feed.metrics().uploads_fetching, 0u);
  EXPECT_EQ(feed.metrics().upload_retries, 0u);
  EXPECT_TRUE(readTopic(kafka.bootstrap(), topics.dlq).empty());
}

// A download under way when the worker stops is not lost: the upload is in the store from the
// moment it was read, and the next start fetches it again.
TEST(SymbolFeed, ADownloadUnderWayWhenTheFeedStopsIsFetchedAfterTheRestart) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-stop");
  config.uploads.fetch_wait_ms = 0;
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  const std::string location = "https://symbols.invalid/stopped.so";
  produce(kafka.bootstrap(), topics.symbols, {locationUpload("1.0", location)});
  {
    ScriptedFetch slow;
    slow.path = library.path;
    slow.delay = std::chrono::milliseconds(1500);
    Feed first(config, slow.function());
    ASSERT_TRUE(first.feed().addPartitions({0}));
    EXPECT_EQ(first.applied(topics.symbols), std::optional<int64_t>(1));
    EXPECT_TRUE(first.ingested().empty());
  }  // stopped while the download runs: its result is dropped

  ScriptedFetch fast;
  fast.path = library.path;
  Feed second(config, fast.function());
  ASSERT_TRUE(second.feed().addPartitions({0}));
  ASSERT_TRUE(second.runUntil([&] { return !second.ingested().empty(); }));
  EXPECT_EQ(second.ingested(), std::vector<std::string>{"1.0"});
  EXPECT_EQ(fast.calls[location], 1);
  EXPECT_EQ(second.metrics().uploads_deferred, 0u);
}

// An upload carried in its message is ingested beside the loop: a catch-up waits for it only until
// uploads.fetch_wait_ms after it was read, the loop's calls return at once meanwhile, the partition's
// offset moves past it only once it is applied, and the upload after it is read and applied after
// it, in order.
TEST(SymbolFeed, ALongIngestHoldsNeitherTheCatchUpNorTheLoop) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-long-ingest");
  config.uploads.fetch_wait_ms = 300;
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  produce(kafka.bootstrap(), topics.symbols, {inlineUpload(library, "1.0"), inlineUpload(library, "2.0")});

  ScriptedFetch unused;
  Feed feed(config, unused.function(), slowIngestOf("1.0", std::chrono::milliseconds(3000)));
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(feed.feed().addPartitions({0}));
  const auto caught_up = std::chrono::steady_clock::now() - started;
  EXPECT_GE(caught_up, std::chrono::milliseconds(250));  // it did wait, for fetch_wait_ms
  EXPECT_LT(caught_up, std::chrono::milliseconds(2500));
  EXPECT_TRUE(feed.ingested().empty());
  EXPECT_EQ(feed.applied(topics.symbols), std::nullopt);  // not past the upload being ingested
  EXPECT_EQ(feed.metrics().uploads_ingesting, 1u);

  for (int i = 0; i < 5; ++i) {
    const auto call = std::chrono::steady_clock::now();
    ASSERT_TRUE(feed.feed().applyFetched());
    EXPECT_LT(std::chrono::steady_clock::now() - call, std::chrono::milliseconds(200));
  }
  const auto call = std::chrono::steady_clock::now();
  ASSERT_TRUE(feed.feed().catchUpToHighWatermarks({0}));
  EXPECT_LT(std::chrono::steady_clock::now() - call, std::chrono::milliseconds(200));

  ASSERT_TRUE(feed.runUntil([&] { return feed.ingested().size() == 2; }));
  EXPECT_EQ(feed.ingested(), (std::vector<std::string>{"1.0", "2.0"}));
  EXPECT_EQ(feed.applied(topics.symbols), std::optional<int64_t>(2));
  EXPECT_EQ(feed.metrics().uploads_ingesting, 0u);
  EXPECT_EQ(feed.metrics().uploads_ingested, 2u);
  EXPECT_TRUE(readTopic(kafka.bootstrap(), topics.dlq).empty());
}

// A backlog (a store rebuilt from the topic) is waited for one upload after the other: each ingest
// gets uploads.fetch_wait_ms from its start, so a catch-up returns with all of them applied, however
// long they take together.
TEST(SymbolFeed, ACatchUpWaitsForABacklogOfIngestsOneAfterTheOther) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-backlog");
  config.uploads.fetch_wait_ms = 1000;
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  // Locations first: they are all read at once, and their downloads arrive long before the ingests
  // ahead of them end.
  std::vector<KafkaRecord> uploads;
  for (int i = 0; i < 4; ++i) {
    uploads.push_back(locationUpload("l" + std::to_string(i), "https://symbols.invalid/" + std::to_string(i)));
  }
  for (int i = 0; i < 2; ++i) uploads.push_back(inlineUpload(library, "m" + std::to_string(i)));
  produce(kafka.bootstrap(), topics.symbols, uploads);

  ScriptedFetch fetch;
  fetch.path = library.path;
  Feed feed(config, fetch.function(), slowIngestOf("", std::chrono::milliseconds(400)));
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(feed.feed().addPartitions({0}));
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(2300));
  std::vector<std::string> ingested = feed.ingested();
  std::sort(ingested.begin(), ingested.end());
  EXPECT_EQ(ingested, (std::vector<std::string>{"l0", "l1", "l2", "l3", "m0", "m1"}));
  EXPECT_EQ(feed.applied(topics.symbols), std::optional<int64_t>(6));
  EXPECT_EQ(feed.metrics().uploads_ingesting, 0u);
}

// An ingest under way when the feed stops ends at once, and its upload is not lost: its offset was
// not recorded, so the next start reads and ingests it again, once.
TEST(SymbolFeed, AnIngestUnderWayWhenTheFeedStopsIsAppliedAfterTheRestart) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  MockCluster kafka;
  auto dir = TempDir::create("symbol-feed-");
  ASSERT_TRUE(dir);
  config::Config config = feedConfig(kafka, dir->path(), "feed-stop-ingest");
  config.uploads.fetch_wait_ms = 0;
  const auto& topics = config.kafka.topics;
  kafka.createSymbolTopics(topics);
  kafka.createTopic(topics.dlq);
  produce(kafka.bootstrap(), topics.symbols, {inlineUpload(library, "1.0")});
  ScriptedFetch unused;
  {
    std::atomic<int> stopped{0};
    auto first =
        std::make_unique<Feed>(config, unused.function(), slowIngestOf("1.0", std::chrono::minutes(10), &stopped));
    ASSERT_TRUE(first->feed().addPartitions({0}));
    EXPECT_EQ(first->metrics().uploads_ingesting, 1u);
    EXPECT_TRUE(first->ingested().empty());
    const auto stopping = std::chrono::steady_clock::now();
    first.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(10));
    EXPECT_EQ(stopped, 1);
  }
  Feed second(config, unused.function());
  ASSERT_TRUE(second.feed().addPartitions({0}));
  ASSERT_TRUE(second.runUntil([&] { return !second.ingested().empty(); }));
  EXPECT_EQ(second.ingested(), std::vector<std::string>{"1.0"});
  EXPECT_EQ(second.applied(topics.symbols), std::optional<int64_t>(1));
  EXPECT_TRUE(readTopic(kafka.bootstrap(), topics.dlq).empty());
}

TEST(DeferredUploads, RecordsRoundTripAndDamagedOnesAreRefused) {
  worker::DeferredUpload upload;
  upload.topic = "restack.symbols";
  upload.partition = 3;
  upload.offset = 17;
  upload.key = "shop:1.0";
  upload.headers = {{"restack.location", "https://x/y"}, {"restack.kind", "elf"}};
  upload.first_failed_ms = 1700000000000;
  upload.next_attempt_ms = 1700000005000;
  upload.attempts = 2;
  upload.last_error = "HTTP 503";
  auto dir = TempDir::create("deferred-");
  ASSERT_TRUE(dir);
  StoreOptions options;
  options.path = dir->path();
  auto store = SymbolStore::open(options);
  ASSERT_TRUE(store);
  {
    auto deferred = worker::DeferredUploads::open(**store);
    ASSERT_TRUE(deferred);
    rocksdb::WriteBatch batch;
    (*deferred)->put(batch, upload);
    ASSERT_TRUE((*store)->write(batch));
    (*deferred)->scheduled(upload);
  }
  auto reopened = worker::DeferredUploads::open(**store);
  ASSERT_TRUE(reopened);
  EXPECT_EQ((*reopened)->count(), 1u);
  EXPECT_EQ((*reopened)->oldestFirstFailedMs(), upload.first_failed_ms);
  auto early = (*reopened)->nextDue(upload.next_attempt_ms - 1);
  ASSERT_TRUE(early);
  EXPECT_FALSE(early->has_value());
  auto due = (*reopened)->nextDue(upload.next_attempt_ms);
  ASSERT_TRUE(due);
  ASSERT_TRUE(due->has_value());
  const worker::DeferredUpload& read = **due;
  EXPECT_EQ(read.topic, upload.topic);
  EXPECT_EQ(read.partition, 3);
  EXPECT_EQ(read.offset, 17);
  EXPECT_EQ(read.key, upload.key);
  EXPECT_EQ(read.headers, upload.headers);
  EXPECT_EQ(read.value, "");
  EXPECT_EQ(read.attempts, 2u);
  EXPECT_EQ(read.last_code, ErrorCode::kUnavailable);
  EXPECT_EQ(read.last_error, "HTTP 503");
  ASSERT_TRUE((*reopened)->remove(read));
  EXPECT_EQ((*reopened)->count(), 0u);

  const std::string key = std::string("deferred\0restack.symbols\0", 25) + std::string(12, '\0');
  std::string value = worker::encodeDeferredUpload(upload);
  EXPECT_TRUE(worker::decodeDeferredUpload(key, value));
  EXPECT_FALSE(worker::decodeDeferredUpload(key, value.substr(0, value.size() - 1)));
  EXPECT_FALSE(worker::decodeDeferredUpload(key, value + "x"));
  value[0] = 2;
  auto newer = worker::decodeDeferredUpload(key, value);
  ASSERT_FALSE(newer);
  EXPECT_NE(newer.error().message().find("format version 2"), std::string::npos);

  worker::RetrySchedule schedule{100, 1000, 60000};
  worker::DeferredUpload timing;
  timing.first_failed_ms = 0;
  timing.attempts = 1;
  EXPECT_EQ(schedule.nextAttemptMs(timing, 0), 100);
  timing.attempts = 3;
  EXPECT_EQ(schedule.nextAttemptMs(timing, 500), 900);
  timing.attempts = 10;
  EXPECT_EQ(schedule.nextAttemptMs(timing, 500), 1500);
  EXPECT_EQ(schedule.nextAttemptMs(timing, 59500), 60000);  // the last attempt at the deadline
  EXPECT_FALSE(schedule.pastDeadline(timing, 59999));
  EXPECT_TRUE(schedule.pastDeadline(timing, 60000));
}

}  // namespace
}  // namespace restack::worker_test
