// restack_loadtest: how many events per second one worker restores, end to end through Kafka
// and through the pipeline alone, on the demo's real sample symbols and events (every stack kind).
//
//   build/loadtest/worker/restack_loadtest --events 20000 --threads 2
//   build/loadtest/worker/restack_loadtest --brokers host:9092 --events 100000   (a real cluster;
//                                            the topics must exist and be empty)
#include <librdkafka/rdkafkacpp.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <iostream>
#include <thread>

#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbolizer.h"
#include "worker/demo/demo_cluster.h"
#include "worker/kafka/clients.h"
#include "worker/kafka/worker.h"
#include "worker/pipeline/event_processor.h"

namespace restack::loadtest {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  size_t events = 20000;
  int partitions = 3;
  uint32_t threads = 2;
  uint32_t batch = 500;
  std::string brokers;
  std::string delivery;  // "" = exactly_once on a real cluster, at_least_once on the mock cluster
};

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// The sample events, repeated with fresh event ids until `count` (the unreadable sample included:
// dead-lettering is part of the load).
std::vector<std::string> makeEvents(size_t count) {
  std::vector<std::string> samples = demo::sampleEvents();
  std::vector<std::string> events;
  events.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    std::string event = samples[i % samples.size()];
    const std::string marker = "\"event_id\":\"";
    size_t at = event.find(marker);
    if (at != std::string::npos) event.insert(at + marker.size(), "lt" + std::to_string(i) + "-");
    events.push_back(std::move(event));
  }
  return events;
}

// The pipeline alone: parse, restore and write every event, `threads` at a time, warm.
int pipelineOnly(const Options& options, const std::vector<std::string>& events) {
  auto dir = TempDir::create("restack-loadtest-");
  StoreOptions store_options;
  store_options.path = dir->path();
  auto store = SymbolStore::open(store_options);
  if (!store) return std::fprintf(stderr, "%s\n", store.error().message().c_str()), 1;
  auto uploads = demo::sampleUploads();
  if (!uploads) return std::fprintf(stderr, "%s\n", uploads.error().message().c_str()), 1;
  for (const auto& upload : *uploads) {
    UploadContent content;
    content.bytes = upload.bytes;
    content.display_name = upload.message.file_name;
    auto report = ingestUpload(**store, upload.message.meta, content, IngestOptions{});
    if (!report) return std::fprintf(stderr, "%s: %s\n", upload.file.c_str(), report.error().message().c_str()), 1;
  }
  Symbolizer symbolizer(**store, SymbolizerOptions{});
  pipeline::EventProcessor processor(symbolizer, pipeline::ProcessorOptions{});
  auto run = [&](size_t first, size_t step, std::atomic<size_t>& frames) {
    size_t local = 0;
    for (size_t i = first; i < events.size(); i += step) {
      auto result = processor.process("k", events[i]);
      if (result) local += result->frames_total;
    }
    frames += local;
  };
  std::atomic<size_t> warm_frames{0};
  run(0, 1, warm_frames);  // warm the caches once
  for (uint32_t threads : {1u, options.threads}) {
    std::atomic<size_t> frames{0};
    auto start = Clock::now();
    std::vector<std::future<void>> workers;
    for (uint32_t t = 0; t < threads; ++t) {
      workers.push_back(std::async(std::launch::async, run, t, threads, std::ref(frames)));
    }
    for (auto& w : workers) w.get();
    double elapsed = seconds(Clock::now() - start);
    std::printf("pipeline only, %u thread(s): %zu events in %.2f s = %.0f events/s, %.0f raw frames/s\n", threads,
                events.size(), elapsed, events.size() / elapsed, frames / elapsed);
    if (threads == options.threads) break;
  }
  return 0;
}

// Counts records on the output topics until `expected` arrived.
size_t waitForOutputs(const config::Config& config, size_t expected, Clock::time_point deadline,
                      Clock::time_point* first_output) {
  auto properties = worker::commonProperties(config, "restack-loadtest-reader");
  properties["group.id"] = "restack-loadtest-reader";
  properties["auto.offset.reset"] = "earliest";
  // What Restack's consumers must use: exactly_once outputs count once committed.
  properties["isolation.level"] = "read_committed";
  auto conf = worker::makeConf(properties);
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> reader(RdKafka::KafkaConsumer::create(conf->get(), error));
  reader->subscribe({config.kafka.topics.symbolicated, config.kafka.topics.dlq});
  size_t seen = 0;
  while (seen < expected && Clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> message(reader->consume(200));
    if (message->err() != RdKafka::ERR_NO_ERROR) continue;
    if (seen++ == 0) *first_output = Clock::now();
  }
  reader->close();
  return seen;
}

int endToEnd(const Options& options, const std::vector<std::string>& events) {
  config::Config config;
  config.kafka.group_id = "restack-loadtest";
  config.kafka.session_timeout_ms = 6000;
  config.observability.http_port = 0;
  config.worker.threads = options.threads;
  config.worker.batch_size = options.batch;
  std::unique_ptr<demo::MockKafka> mock;
  if (options.brokers.empty()) {
    auto started = demo::MockKafka::start(config.kafka.topics, options.partitions);
    if (!started) return std::fprintf(stderr, "%s\n", started.error().message().c_str()), 1;
    mock = std::move(*started);
    config.kafka.brokers = mock->bootstrap();
  } else {
    config.kafka.brokers = options.brokers;
  }
  // The mock cluster has no transactions (TOOLCHAIN.md).
  config.kafka.delivery =
      !options.delivery.empty() ? options.delivery : (options.brokers.empty() ? "at_least_once" : "exactly_once");
  auto producer = worker::makeProducer(config, "restack-loadtest-producer", nullptr);
  if (!producer) return std::fprintf(stderr, "%s\n", producer.error().message().c_str()), 1;
  Status published = demo::publishSampleSymbols(**producer, config.kafka.topics, {});
  if (!published) return std::fprintf(stderr, "%s\n", published.error().message().c_str()), 1;
  auto produce_start = Clock::now();
  for (const std::string& event : events) {
    Status sent = demo::produceRecord(**producer, config.kafka.topics.events, demo::eventKey(event), event, {});
    if (!sent) return std::fprintf(stderr, "%s\n", sent.error().message().c_str()), 1;
  }
  (*producer)->flush(60000);
  std::printf("produced %zu events in %.2f s\n", events.size(), seconds(Clock::now() - produce_start));

  auto dir = TempDir::create("restack-loadtest-store-");
  config.store.path = dir->path();
  worker::Metrics metrics;
  auto start = Clock::now();
  auto worker = worker::Worker::create(config, metrics);
  if (!worker) return std::fprintf(stderr, "%s\n", worker.error().message().c_str()), 1;
  std::atomic<bool> stop{false};
  Status worker_status;
  std::thread thread([&] { worker_status = (*worker)->run(stop); });
  Clock::time_point first_output = start;
  size_t seen = waitForOutputs(config, events.size(), Clock::now() + std::chrono::minutes(10), &first_output);
  auto done = Clock::now();
  stop = true;
  thread.join();
  double steady = seconds(done - first_output);
  std::printf(
      "end to end through Kafka (%s, %s, %d partitions, worker.threads=%u, batch %u): %zu of %zu events out\n"
      "  first output %.2f s after start (group join + symbol ingest), then %.0f events/s, %.0f raw frames/s\n",
      options.brokers.empty() ? "mock cluster" : options.brokers.c_str(), config.kafka.delivery.c_str(),
      options.partitions, options.threads, options.batch, seen, events.size(), seconds(first_output - start),
      seen / steady, metrics.frames_total / steady);
  if (!worker_status) return std::fprintf(stderr, "worker: %s\n", worker_status.error().message().c_str()), 1;
  return seen == events.size() ? 0 : 1;
}

}  // namespace
}  // namespace restack::loadtest

int main(int argc, char** argv) {
  restack::loadtest::Options options;
  CLI::App app{"Restack load test: the worker end to end through Kafka, and the pipeline alone, on the demo samples"};
  app.add_option("--events", options.events, "Events to restore")->default_val(20000);
  app.add_option("--partitions", options.partitions, "Partitions of the events topic (mock cluster)")->default_val(3);
  app.add_option("--threads", options.threads, "worker.threads")->default_val(2);
  app.add_option("--batch", options.batch, "worker.batch_size")->default_val(500);
  app.add_option("--brokers", options.brokers, "Use this Kafka cluster instead of the mock cluster");
  app.add_option("--delivery", options.delivery,
                 "kafka.delivery: exactly_once (default with --brokers) or at_least_once (default on the mock cluster)")
      ->check(CLI::IsMember({"exactly_once", "at_least_once"}));
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);
  auto events = restack::loadtest::makeEvents(options.events);
  int status = restack::loadtest::pipelineOnly(options, events);
  if (status != 0) return status;
  return restack::loadtest::endToEnd(options, events);
}
