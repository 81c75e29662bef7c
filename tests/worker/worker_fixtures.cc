#include "tests/worker/worker_fixtures.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <mutex>
#include <sstream>

namespace restack::worker_test {
namespace {

constexpr const char* kLibrarySource = R"C(
__attribute__((noinline)) int crash_here(volatile int* p) { return *p + 1; }
__attribute__((noinline)) int entry(int n) {
  volatile int* p = (volatile int*)0;
  int r = crash_here(p);
  return r + n;
}
)C";

uint64_t symbolAddress(const std::string& nm_output, const std::string& name) {
  std::istringstream lines(nm_output);
  std::string address, type, symbol;
  while (lines >> address >> type >> symbol) {
    if (symbol == name) return std::stoull(address, nullptr, 16);
  }
  return 0;
}

// The first "bl" inside entry(): its return address is the next instruction.
uint64_t returnAddressAfterCall(const std::string& disassembly) {
  std::istringstream lines(disassembly);
  std::string line;
  bool in_entry = false;
  while (std::getline(lines, line)) {
    if (line.find("<entry>:") != std::string::npos) in_entry = true;
    if (in_entry && line.find("\tbl\t") != std::string::npos) {
      return std::stoull(line.substr(0, line.find(':')), nullptr, 16) + 4;
    }
  }
  return 0;
}

std::unique_ptr<NativeLibrary> build() {
  auto library = std::make_unique<NativeLibrary>();
  for (const char* tool : {"clang-19", "llvm-nm-19", "llvm-readelf-19", "llvm-objdump-19", "llvm-symbolizer-19"}) {
    if (!native_test::requireTool(tool)) return nullptr;
  }
  const std::string source = library->dir.file("crash.c");
  native_test::writeFile(source, kLibrarySource);
  library->path = library->dir.file("libcrash.so");
  if (!native_test::runOrFail("clang-19 --target=aarch64-linux-android24 -g -O1 -fPIC -ffreestanding -nostdlibinc -c " +
                              source + " -o " + library->dir.file("crash.o")) ||
      !native_test::runOrFail("clang-19 --target=aarch64-linux-android24 -shared -nostdlib -fuse-ld=lld "
                              "-Wl,--build-id " +
                              library->dir.file("crash.o") + " -o " + library->path)) {
    return nullptr;
  }
  auto notes = native_test::runCommand("llvm-readelf-19 -n " + library->path);
  size_t at = notes.output.find("Build ID: ");
  EXPECT_NE(at, std::string::npos) << notes.output;
  if (at == std::string::npos) return nullptr;
  std::istringstream(notes.output.substr(at + 10)) >> library->build_id;
  auto nm = native_test::runCommand("llvm-nm-19 " + library->path);
  library->crash_address = symbolAddress(nm.output, "crash_here") + 4;
  auto disassembly = native_test::runCommand("llvm-objdump-19 -d --no-show-raw-insn " + library->path);
  library->caller_return = returnAddressAfterCall(disassembly.output);
  EXPECT_NE(library->caller_return, 0u) << disassembly.output;
  auto oracle = native_test::symbolizeWithLlvm(library->path, {library->crash_address, library->caller_return - 1});
  if (oracle.size() != 2 || oracle[0].empty() || oracle[1].empty()) {
    ADD_FAILURE() << "llvm-symbolizer-19 gave no answer for libcrash.so";
    return nullptr;
  }
  library->expected_crash_function = oracle[0].front().function;
  library->expected_caller_function = oracle[1].back().function;
  return library;
}

}  // namespace

std::string hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

const NativeLibrary& nativeLibrary() {
  static std::once_flag once;
  static std::unique_ptr<NativeLibrary> library;
  std::call_once(once, [] { library = build(); });
  if (!library) {
    ADD_FAILURE() << "could not build the test library";
    static NativeLibrary empty;
    return empty;
  }
  return *library;
}

std::string nativeCrashEvent(const std::string& event_id, const std::string& app, const std::string& build,
                             const NativeLibrary& library) {
  const std::string id = "[arm64-v8a::" + library.build_id + "]";
  return R"({"event_id":")" + event_id + R"(","kind":"crash","platform":"android","app":")" + app +
         R"(","build_id":")" + build +
         R"(","timestamp_ms":1700000000000,"exception":{"type":"SIGSEGV","message":"null pointer"},)"
         R"("threads":[{"name":"main","crashed":true,"stack":"pc )" +
         hex(library.crash_address) + " libcrash.so " + id + "\\npc " + hex(library.caller_return) + " libcrash.so " +
         id + R"("}],"sdk":{"name":"apm","version":[1,2.50,null]}})";
}

worker::SymbolFeed::IngestFunction slowIngestOf(const std::string& build, std::chrono::milliseconds delay,
                                                std::atomic<int>* stopped) {
  return [build, delay, stopped](SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                 const IngestOptions& options) -> Expected<IngestReport> {
    if (build.empty() || meta.build_id == build) {
      const auto until = std::chrono::steady_clock::now() + delay;
      while (std::chrono::steady_clock::now() < until) {
        if (ingestStopped(options)) {
          if (stopped) ++*stopped;
          return ingestStoppedError();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    return ingestUpload(store, meta, content, options);
  };
}

struct MockCluster::Handles {
  rd_kafka_t* owner = nullptr;
  rd_kafka_mock_cluster_t* cluster = nullptr;
};

MockCluster::MockCluster() : handles_(std::make_unique<Handles>()) {
  char error[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", error, sizeof error);
  handles_->owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  handles_->cluster = rd_kafka_mock_cluster_new(handles_->owner, 1);
  bootstrap_ = rd_kafka_mock_cluster_bootstraps(handles_->cluster);
}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(handles_->cluster);
  rd_kafka_destroy(handles_->owner);
}

void MockCluster::createTopics(const config::Topics& topics, int partitions) {
  for (const std::string& topic : {topics.events, topics.symbols, topics.symbolicated, topics.fingerprints}) {
    rd_kafka_mock_topic_create(handles_->cluster, topic.c_str(), partitions, 1);
  }
  rd_kafka_mock_topic_create(handles_->cluster, topics.symbols_shared.c_str(), 1, 1);
  rd_kafka_mock_topic_create(handles_->cluster, topics.dlq.c_str(), 1, 1);
  rd_kafka_mock_topic_create(handles_->cluster, topics.pending.c_str(), partitions, 1);
}

void MockCluster::createSymbolTopics(const config::Topics& topics) {
  createTopic(topics.symbols);
  createTopic(topics.symbols_shared);
}

void MockCluster::createTopic(const std::string& topic) {
  rd_kafka_mock_topic_create(handles_->cluster, topic.c_str(), 1, 1);
}

void MockCluster::setTopicError(const std::string& topic, int error) {
  rd_kafka_mock_topic_set_error(handles_->cluster, topic.c_str(), static_cast<rd_kafka_resp_err_t>(error));
}

void MockCluster::brokerDown() {
  rd_kafka_mock_broker_set_down(handles_->cluster, 1);
}

void MockCluster::failRequests(int api_key, size_t count, int error) {
  std::vector<rd_kafka_resp_err_t> errors(count, static_cast<rd_kafka_resp_err_t>(error));
  rd_kafka_mock_push_request_errors_array(handles_->cluster, static_cast<int16_t>(api_key), errors.size(),
                                          errors.data());
}

void MockCluster::setRoundTrip(int ms) {
  rd_kafka_mock_broker_set_rtt(handles_->cluster, 1, ms);
}

std::string stringAt(simdjson::dom::element element) {
  std::string_view value;
  return element.get_string().get(value) == simdjson::SUCCESS ? std::string(value) : std::string();
}

config::Config testConfig(const std::string& brokers, const std::string& store_path, const std::string& group) {
  config::Config config;
  config.kafka.brokers = brokers;
  config.kafka.group_id = group;
  config.kafka.session_timeout_ms = 6000;
  config.store.path = store_path;
  config.store.block_cache_mb = 8;
  config.observability.http_port = 0;
  config.worker.batch_linger_ms = 20;
  config.worker.batch_size = 50;
  // librdkafka's mock cluster, where these run, has no transactions (librdkafka 2.0.2).
  config.kafka.delivery = "at_least_once";
  return config;
}

std::unique_ptr<RunningWorker> RunningWorker::start(const config::Config& config, worker::Worker::Hooks hooks) {
  auto running = std::unique_ptr<RunningWorker>(new RunningWorker());
  auto worker = worker::Worker::create(config, running->metrics_, std::move(hooks));
  EXPECT_TRUE(worker) << (worker ? "" : worker.error().message());
  if (!worker) return nullptr;
  running->worker_ = std::move(*worker);
  running->thread_ = std::thread([w = running.get()] { w->result_ = w->worker_->run(w->stop_); });
  return running;
}

Status RunningWorker::stop() {
  if (!stopped_) {
    stop_ = true;
    thread_.join();
    worker_.reset();
    stopped_ = true;
  }
  return result_;
}

RunningWorker::~RunningWorker() {
  (void)stop();
}

}  // namespace restack::worker_test
