// Fixtures shared by the pipeline and worker tests: a real aarch64 .so compiled at test time,
// the raw events that reference it, and a running in-process worker.
#pragma once

#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "config/config.h"
#include "symbolstore/ingest.h"
#include "tests/native/native_test_support.h"
#include "worker/kafka/metrics.h"
#include "worker/kafka/worker.h"

namespace restack::worker_test {

// libcrash.so built with clang-19 for aarch64 Android, with its GNU build id, the address of
// crash_here() and what llvm-symbolizer-19 says is there.
struct NativeLibrary {
  native_test::TempDir dir;
  std::string path;
  std::string build_id;                  // lowercase hex
  uint64_t crash_address = 0;            // inside crash_here()
  uint64_t caller_return = 0;            // a return address inside entry(), after the call
  std::string expected_crash_function;   // llvm-symbolizer's answer at crash_address
  std::string expected_caller_function;  // llvm-symbolizer's answer at caller_return - 1
};
// Builds the library once per process (cached); fails the test when the tools are missing.
const NativeLibrary& nativeLibrary();

// "0x" and 16 hex digits, as Android prints a pc.
std::string hex(uint64_t value);

// An Android native crash event for `app`/`build` whose crashed thread is crash_here <- entry.
std::string nativeCrashEvent(const std::string& event_id, const std::string& app, const std::string& build,
                             const NativeLibrary& library);

// One parsed output record: `Json json; if (json.parse(record.value)) stringAt(json.root["app"])`.
struct Json {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  bool parse(const std::optional<std::string>& text) {
    return text && parser.parse(*text).get(root) == simdjson::SUCCESS;
  }
};
// The string at `element`, "" when it is not a string.
std::string stringAt(simdjson::dom::element element);

// An ingest (worker::SymbolFeed::IngestFunction) that takes `delay` for the uploads of `build`
// (every upload when `build` is empty) before ingesting them with ingestUpload, the others at once. It ends early with
// ingestStoppedError() when the feed stops, counting that in `stopped` (when given).
worker::SymbolFeed::IngestFunction slowIngestOf(const std::string& build, std::chrono::milliseconds delay,
                                                std::atomic<int>* stopped = nullptr);

// librdkafka's mock cluster (one broker) for tests of the worker and its parts without a JVM.
class MockCluster {
 public:
  MockCluster();
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;
  // Every topic of `topics`: events, symbols, outputs and pending with `partitions` partitions,
  // the shared symbols topic and the DLQ with one.
  void createTopics(const config::Topics& topics, int partitions);
  // The two symbols topics with one partition each, so uploads apply in the order produced.
  void createSymbolTopics(const config::Topics& topics);
  void createTopic(const std::string& topic);
  // Metadata of `topic` answers `error` (0: normal again).
  void setTopicError(const std::string& topic, int error);
  void brokerDown();
  // The next `count` requests of Kafka API `api_key` (9: OffsetFetch) answer `error`.
  void failRequests(int api_key, size_t count, int error);
  // Every answer of the broker comes `ms` milliseconds late (0: at once again).
  void setRoundTrip(int ms);
  const std::string& bootstrap() const { return bootstrap_; }

 private:
  struct Handles;
  std::unique_ptr<Handles> handles_;
  std::string bootstrap_;
};

// Worker configuration for tests: fast group timings, a private store, no HTTP port.
config::Config testConfig(const std::string& brokers, const std::string& store_path, const std::string& group);

// A worker running on its own thread until stop() or destruction.
class RunningWorker {
 public:
  static std::unique_ptr<RunningWorker> start(const config::Config& config, worker::Worker::Hooks hooks = {});
  ~RunningWorker();
  Status stop();
  worker::Metrics& metrics() { return metrics_; }

 private:
  worker::Metrics metrics_;
  std::unique_ptr<worker::Worker> worker_;
  std::atomic<bool> stop_{false};
  Status result_;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace restack::worker_test
