// restack_loadtest: how many events per second the worker restores, end to end through Kafka.
//
// Scenarios (loadtest/worker/driver.h): a real Apache Kafka broker on loopback, `restack run`
// processes, a symbol corpus of N builds of every stack kind (corpus.h) and generated events whose
// every output is checked (events.h):
//   build/loadtest/worker/restack_loadtest --scenario standard|latency|memory|scaling|coldstart [--restart-at F]
//   (scripts/loadtest.sh standard builds what is needed and runs it)
//   build/loadtest/worker/restack_loadtest --write-events events.jsonl --builds 1 --events 2000
//     writes the scenarios' generated events as JSON Lines and prints each build's symbol files (app,
//     build id, name, path; tab-separated), for `restack symbolicate --json` and callgrind without Kafka
//   build/loadtest/worker/restack_loadtest --check-outputs restored.jsonl --builds 1 --events 2000
//     checks those restored events as the scenarios' reader does and prints this tool's CPU per event
//     (making events, checking outputs), without a broker
//
// Without --scenario, the demo's real sample symbols and events (every stack kind), first through
// the pipeline alone, then through librdkafka's mock cluster or --brokers:
//   build/loadtest/worker/restack_loadtest --events 20000 --threads 2
//   build/loadtest/worker/restack_loadtest --brokers host:9092 --events 100000   (a real cluster;
//                                            the topics must exist and be empty)
//   build/loadtest/worker/restack_loadtest --brokers host:9092 --rate 2000 --events 30000
//     latency: events produced at a steady rate while the worker runs; for each event, the time
//     from its produce call to its restored output (or DLQ record) read back with read_committed
#include <librdkafka/rdkafkacpp.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <thread>

#include <sched.h>
#include <time.h>

#include "formats/common/temp_dir.h"
#include "loadtest/worker/driver.h"
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
  uint32_t batch = 1000;
  std::string brokers;
  std::string delivery;  // "" = exactly_once on a real cluster, at_least_once on the mock cluster
  uint32_t rate = 0;     // events/s for the latency run; 0 = the throughput run
  double warmup_s = 3;   // latency run: events produced in the first seconds are not counted
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
  // librdkafka 2.0.2's mock cluster has no transactions.
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

// The index i of an output whose event id is "lt<i>-…" (makeEvents), or npos.
size_t eventIndex(std::string_view value) {
  const std::string_view marker = "\"event_id\":\"lt";
  size_t at = value.find(marker);
  if (at == std::string_view::npos) return std::string_view::npos;
  size_t index = 0, i = at + marker.size();
  bool digits = false;
  for (; i < value.size() && value[i] >= '0' && value[i] <= '9'; ++i, digits = true) {
    index = index * 10 + static_cast<size_t>(value[i] - '0');
  }
  return digits ? index : std::string_view::npos;
}

// Latency at a steady rate: the worker runs first; events are produced `options.rate` a second;
// each output read back (read_committed) is matched to its event's produce time.
int latencyRun(const Options& options, const std::vector<std::string>& events) {
  config::Config config;
  config.kafka.group_id = "restack-loadtest-latency";
  config.kafka.session_timeout_ms = 6000;
  config.kafka.brokers = options.brokers;
  config.kafka.delivery = options.delivery.empty() ? "exactly_once" : options.delivery;
  config.observability.http_port = 0;
  config.worker.threads = options.threads;
  config.worker.batch_size = options.batch;
  auto producer = worker::makeProducer(config, "restack-loadtest-producer", nullptr);
  if (!producer) return std::fprintf(stderr, "%s\n", producer.error().message().c_str()), 1;
  Status published = demo::publishSampleSymbols(**producer, config.kafka.topics, {});
  if (!published) return std::fprintf(stderr, "%s\n", published.error().message().c_str()), 1;
  (*producer)->flush(60000);

  auto dir = TempDir::create("restack-loadtest-store-");
  config.store.path = dir->path();
  worker::Metrics metrics;
  auto worker = worker::Worker::create(config, metrics);
  if (!worker) return std::fprintf(stderr, "%s\n", worker.error().message().c_str()), 1;
  std::atomic<bool> stop{false};
  Status worker_status;
  std::thread worker_thread([&] { worker_status = (*worker)->run(stop); });
  // Wait until the worker owns its partitions, then give it a moment to apply the symbols: the
  // run measures steady state, not the group join (the throughput run reports that).
  const auto ready_deadline = Clock::now() + std::chrono::minutes(2);
  while (metrics.assigned_partitions == 0 && Clock::now() < ready_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));

  auto properties = worker::commonProperties(config, "restack-loadtest-reader");
  properties["group.id"] = "restack-loadtest-latency-reader";
  properties["auto.offset.reset"] = "earliest";
  properties["isolation.level"] = "read_committed";
  properties["fetch.wait.max.ms"] = "5";
  auto conf = worker::makeConf(properties);
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> reader(RdKafka::KafkaConsumer::create(conf->get(), error));
  reader->subscribe({config.kafka.topics.symbolicated, config.kafka.topics.dlq});

  std::vector<std::atomic<int64_t>> produced_at(events.size());
  const auto origin = Clock::now();
  auto micros = [&] { return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - origin).count(); };
  std::thread produce_thread([&] {
    const auto interval = std::chrono::nanoseconds(1'000'000'000LL / std::max<uint32_t>(options.rate, 1));
    auto next = Clock::now();
    for (size_t i = 0; i < events.size(); ++i) {
      std::this_thread::sleep_until(next);
      next += interval;
      produced_at[i] = micros();
      (void)demo::produceRecord(**producer, config.kafka.topics.events, demo::eventKey(events[i]), events[i], {});
      (*producer)->poll(0);
    }
    (*producer)->flush(60000);
  });
  // The first seconds measure the reader's and the worker's fetch sessions starting, not the
  // steady state: those events must arrive but do not enter the percentiles.
  const int64_t warmup_us = static_cast<int64_t>(options.warmup_s * 1e6);
  std::vector<int64_t> latencies;
  latencies.reserve(events.size());
  size_t arrived = 0;
  std::vector<bool> seen(events.size(), false);
  const auto deadline = Clock::now() + std::chrono::seconds(events.size() / std::max<uint32_t>(options.rate, 1) + 120);
  while (arrived < events.size() && Clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> message(reader->consume(100));
    if (message->err() != RdKafka::ERR_NO_ERROR) continue;
    const int64_t now = micros();
    size_t index = eventIndex(std::string_view(static_cast<const char*>(message->payload()), message->len()));
    if (index >= events.size() || seen[index]) continue;
    seen[index] = true;
    ++arrived;
    if (produced_at[index] >= warmup_us) latencies.push_back(now - produced_at[index]);
  }
  produce_thread.join();
  reader->close();
  stop = true;
  worker_thread.join();
  std::sort(latencies.begin(), latencies.end());
  auto percentile = [&](double p) {
    if (latencies.empty()) return 0.0;
    size_t at = std::min(latencies.size() - 1, static_cast<size_t>(p * static_cast<double>(latencies.size())));
    return static_cast<double>(latencies[at]) / 1000.0;
  };
  std::printf(
      "latency through Kafka (%s, %s, worker.threads=%u, batch %u) at %u events/s: %zu of %zu events out\n"
      "  produce to output read back, %zu events after the first %.0f s: p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, "
      "max %.1f ms\n",
      options.brokers.c_str(), config.kafka.delivery.c_str(), options.threads, options.batch, options.rate, arrived,
      events.size(), latencies.size(), options.warmup_s, percentile(0.5), percentile(0.99), percentile(0.999),
      percentile(1.0));
  if (!worker_status) return std::fprintf(stderr, "worker: %s\n", worker_status.error().message().c_str()), 1;
  return arrived == events.size() ? 0 : 1;
}

}  // namespace
}  // namespace restack::loadtest

namespace restack::loadtest {
namespace {

// The events a scenario would produce, written to `path` (one per line), and on stdout one line
// per symbol file of every build: app, build id, name (source maps; else empty) and path, with tabs.
int writeEvents(const RunOptions& run, const std::string& path) {
  auto corpus = prepareCorpus(run.corpus_dir, run.builds);
  if (!corpus) return std::fprintf(stderr, "%s\n", corpus.error().message().c_str()), 1;
  EventGenerator generator(*corpus, run.events_options);
  std::ofstream out(path, std::ios::binary);
  for (size_t i = 0; i < run.events && out; ++i) out << generator.make(i).json << '\n';
  if (!out) return std::fprintf(stderr, "cannot write %s\n", path.c_str()), 1;
  for (const CorpusBuild& build : corpus->builds) {
    for (const CorpusUpload& upload : build.uploads) {
      std::printf("%s\t%s\t%s\t%s\n", corpus->app.c_str(), build.build_id.c_str(), upload.name.c_str(),
                  upload.path.c_str());
    }
  }
  return 0;
}

// This process's CPU time to the nanosecond (/proc's figures count 10 ms ticks).
double processCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// The reader's work without Kafka, timed: every line of `path` (restored events, one per line, e.g.
// `restack symbolicate --json` of --write-events' events made with the same options) checked as
// the scenarios check each output, against its event regenerated from the index in its id. Also
// the producer's side: making --events events. Prints CPU per event of each, for comparing builds
// of this tool without a broker, or under callgrind.
int checkOutputs(const RunOptions& run, const std::string& path) {
  auto corpus = prepareCorpus(run.corpus_dir, run.builds);
  if (!corpus) return std::fprintf(stderr, "%s\n", corpus.error().message().c_str()), 1;
  EventGenerator generator(*corpus, run.events_options);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::fprintf(stderr, "cannot read %s\n", path.c_str()), 1;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  size_t bytes = 0;
  const double make_start = processCpuSeconds();
  for (size_t i = 0; i < run.events; ++i) bytes += generator.make(i).json.size();
  const double make_s = processCpuSeconds() - make_start;
  size_t mismatches = 0, checked = 0;
  const double check_start = processCpuSeconds();
  for (const std::string& line : lines) {
    const size_t index = eventIndex(line);
    if (index == std::string_view::npos) continue;
    GeneratedEvent expected = generator.expect(index);
    const std::string problem = expected.malformed ? "an unreadable event was restored" : checkRestored(line, expected);
    ++checked;
    if (!problem.empty() && mismatches++ < 20)
      std::fprintf(stderr, "mismatch, event %zu: %s\n", index, problem.c_str());
  }
  const double check_s = processCpuSeconds() - check_start;
  std::printf("made %zu events (%.1f MiB) in %.3f CPU s: %.1f us per event\n", run.events,
              static_cast<double>(bytes) / (1 << 20), make_s, run.events ? 1e6 * make_s / run.events : 0);
  std::printf("checked %zu outputs in %.3f CPU s: %.1f us per output, %zu mismatches\n", checked, check_s,
              checked ? 1e6 * check_s / checked : 0, mismatches);
  return mismatches == 0 && checked > 0 ? 0 : 1;
}

// The scenarios of the load generator brief, each a set of defaults any flag overrides.
int runScenario(const std::string& scenario, RunOptions run, const CLI::App& app) {
  auto unless = [&](const char* flag, auto& field, auto value) {
    if (app.count(flag) == 0) field = value;
  };
  std::vector<int> worker_counts = {run.workers};
  if (scenario == "standard" || scenario == "coldstart") {
    unless("--events", run.events, size_t{200000});
    // coldstart: a fresh store's start, then a restart of the worker on its store half-way.
    if (scenario == "coldstart" && app.count("--restart-at") == 0) run.restart_at = 0.5;
  } else if (scenario == "latency") {
    unless("--rate", run.rate, uint32_t{10000});
    unless("--events", run.events, static_cast<size_t>(run.rate) * 30);
  } else if (scenario == "memory") {
    unless("--builds", run.builds, size_t{1000});
    unless("--events", run.events, size_t{100000});
  } else if (scenario == "scaling") {
    unless("--events", run.events, size_t{200000});
    if (app.count("--workers") == 0) worker_counts = {1, 2, 4};
  }
  int status = 0;
  std::string summary;
  for (int workers : worker_counts) {
    run.workers = workers;
    run.events_options.run_id = scenario + std::to_string(workers);
    char title[512];
    std::snprintf(title, sizeof title,
                  "scenario %s: %zu builds, %zu events, %s, %d worker(s), %d partitions, worker.threads=%u, batch %u, "
                  "linger %u ms, commit interval %u ms, %s",
                  scenario.c_str(), run.builds, run.events,
                  run.rate ? ("at " + std::to_string(run.rate) + " events/s").c_str() : "flat out", workers,
                  run.partitions, run.threads, run.batch, run.linger_ms, run.commit_interval_ms, run.delivery.c_str());
    std::string heading = title;
    if (!run.worker_cpus.empty()) {
      heading += ", workers on CPU";
      for (size_t i = 0; i < run.worker_cpus.size(); ++i)
        heading += (i ? "," : " ") + std::to_string(run.worker_cpus[i]);
    }
    RunFigures figures;
    status |= runLoad(run, heading, figures);
    summary += formatReport(figures);
    std::printf("%s", formatReport(figures).c_str());
    std::fflush(stdout);
  }
  if (worker_counts.size() > 1) std::printf("\n%s", summary.c_str());
  return status;
}

// CPUs given by --worker-cpus or --tool-cpus must be ones this process may use: a worker confined
// to a CPU the machine lacks would exit before it logs a word.
bool cpusAvailable(const std::vector<int>& cpus, const char* flag) {
  cpu_set_t available;
  CPU_ZERO(&available);
  if (::sched_getaffinity(0, sizeof available, &available) != 0) return true;  // the kernel will say
  for (int cpu : cpus) {
    if (CPU_ISSET(cpu, &available)) continue;
    std::string list;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &available)) list += (list.empty() ? "" : ",") + std::to_string(c);
    }
    std::fprintf(stderr, "%s: CPU %d is not available here (available: %s)\n", flag, cpu, list.c_str());
    return false;
  }
  return true;
}

bool confineToCpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  if (::sched_setaffinity(0, sizeof set, &set) == 0) return true;
  std::fprintf(stderr, "--tool-cpus: sched_setaffinity failed: %s\n", std::strerror(errno));
  return false;
}

}  // namespace
}  // namespace restack::loadtest

int main(int argc, char** argv) {
  restack::loadtest::Options options;
  restack::loadtest::RunOptions run;
  std::string scenario, mix, write_events, check_outputs;
  std::vector<int> tool_cpus;
  CLI::App app{"Restack load test: the worker end to end through Kafka, and the pipeline alone"};
  app.add_option("--scenario", scenario,
                 "standard (flat out, 200k events, 50 builds), latency (10k events/s), memory (1,000 builds), "
                 "scaling (1, 2, 4 workers), coldstart (standard, with a restart of the worker on its store "
                 "half-way); without it, the demo samples")
      ->check(CLI::IsMember({"standard", "latency", "memory", "scaling", "coldstart"}));
  app.add_option("--write-events", write_events,
                 "Write the scenarios' generated events (JSON Lines) to this file, print each build's symbol files "
                 "(app, build id, name, path) and exit");
  app.add_option("--check-outputs", check_outputs,
                 "Check the restored events in this file (one per line, e.g. restack symbolicate --json of "
                 "--write-events' events, same options) as the scenarios check each output; print CPU per event "
                 "of making events and of checking outputs, and exit");
  app.add_option("--builds", run.builds, "Scenarios: builds in the symbol corpus")->default_val(50);
  app.add_option("--corpus", run.corpus_dir, "Scenarios: corpus folder (made once, grown as needed)")
      ->default_val(restack::loadtest::defaultCorpusDir());
  app.add_option("--workers", run.workers, "Scenarios: restack run processes in one group")->default_val(1);
  app.add_option("--mix", mix, "Scenarios: event shapes, e.g. ios=1,native=2,java=2,anr=1,lag=1,web=2,rn=1");
  app.add_option("--min-frames", run.events_options.min_frames, "Scenarios: fewest frames per stack")->default_val(20);
  app.add_option("--max-frames", run.events_options.max_frames,
                 "Scenarios: most frames per stack (median 1/4 of the way)")
      ->default_val(60);
  app.add_option("--anr-threads", run.events_options.anr_threads, "Scenarios: threads per ANR event")->default_val(3);
  app.add_option("--lag-samples", run.events_options.lag_samples, "Scenarios: samples per lag event")->default_val(4);
  app.add_option("--missing-share", run.events_options.missing_share,
                 "Scenarios: share of native frames from an image without symbols")
      ->default_val(0.02);
  app.add_option("--malformed-share", run.events_options.malformed_share, "Scenarios: share of unreadable events")
      ->default_val(0.002);
  app.add_option("--profile", run.profile, "Scenarios: perf record the first worker into this file");
  app.add_option("--ingest", run.ingest,
                 "Scenarios: topic (uploads on the symbols topic) or direct (ingested into each worker's store first)")
      ->check(CLI::IsMember({"topic", "direct"}))
      ->default_val("topic");
  app.add_option("--restart-at", run.restart_at,
                 "Scenarios: once this share of the events came out (0..1), stop worker 0 and start it again on "
                 "its store; 0 = no restart")
      ->check(CLI::Range(0.0, 0.95))
      ->default_val(0);
  app.add_option("--upload-during", run.upload_during,
                 "Rate runs: publish this symbol file (by file:// location) halfway through producing, for a build "
                 "no event names, and report the latency of the events produced after it")
      ->check(CLI::ExistingFile);
  app.add_option("--worker-cpus", run.worker_cpus,
                 "Scenarios: CPUs each worker process is confined to, e.g. 1 (comma-separated); with --tool-cpus the "
                 "worker gets cores of its own, as in production, where brokers and producers run elsewhere")
      ->delimiter(',')
      ->check(CLI::Range(0, CPU_SETSIZE - 1));
  app.add_option("--tool-cpus", tool_cpus,
                 "CPUs this tool and the broker it starts are confined to, e.g. 0 (comma-separated); default: all")
      ->delimiter(',')
      ->check(CLI::Range(0, CPU_SETSIZE - 1));
  app.add_option("--worker-log-level", run.worker_log_level,
                 "Scenarios: the workers' observability.log_level; debug includes librdkafka's debug lines "
                 "(choose them with --kafka-property debug=eos,protocol)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->default_val("warn");
  app.add_option("--worker-logs", run.worker_logs_dir,
                 "Scenarios: copy each worker's log into this folder when the run ends");
  app.add_option("--broker-heap", run.broker_heap,
                 "Scenarios: the broker's JVM heap, fixed (-Xms and -Xmx), as production brokers run; \"\" = the "
                 "tests' broker's (64 MiB growing to 512 MiB, whose full collections stop it for 100-300 ms); "
                 "KAFKA_HEAP_OPTS in the environment wins")
      ->check([](const std::string& value) {
        const size_t digits = value.find_first_not_of("0123456789");
        const bool size = digits > 0 && (digits == std::string::npos ||
                                         (digits + 1 == value.size() && std::strchr("kKmMgG", value[digits])));
        return value.empty() || size ? std::string() : std::string("expected a JVM size such as 512m or 1g");
      })
      ->default_val("512m");
  app.add_option("--cache-mb", run.cache_mb, "Scenarios: each worker's block cache and per-kind caches, MiB")
      ->default_val(64);
  app.add_option("--compression", run.compression,
                 "Scenarios: the workers' output compression (kafka.properties.\"compression.type\"); default: the "
                 "worker's, lz4")
      ->check(CLI::IsMember({"lz4", "zstd", "snappy", "gzip", "none"}));
  app.add_option("--kafka-property", run.kafka_properties,
                 "Scenarios: one more of the workers' kafka.properties, NAME=VALUE (repeatable), e.g. "
                 "fetch.min.bytes=65536")
      ->check([](const std::string& value) {
        const size_t equals = value.find('=');
        const bool plain = value.find_first_of("\"\\\n") == std::string::npos;
        return equals != std::string::npos && equals > 0 && plain ? std::string()
                                                                  : std::string("expected NAME=VALUE without quotes");
      });
  app.add_option("--events", options.events, "Events to restore")->default_val(20000);
  app.add_option("--partitions", options.partitions, "Partitions of the events topic")->default_val(3);
  app.add_option("--threads", options.threads, "worker.threads")->default_val(2);
  app.add_option("--batch", options.batch, "worker.batch_size")->default_val(1000);
  app.add_option("--linger-ms", run.linger_ms, "Scenarios: worker.batch_linger_ms, how long a batch waits to fill")
      ->default_val(50);
  app.add_option("--commit-interval-ms", run.commit_interval_ms,
                 "Scenarios: worker.min_commit_interval_ms, how long after a publication began the next batch may "
                 "wait to fill (0: restore at once)")
      ->default_val(0);
  app.add_option("--brokers", options.brokers, "Demo samples: use this Kafka cluster instead of the mock cluster");
  app.add_option("--delivery", options.delivery,
                 "kafka.delivery: exactly_once (default with --brokers) or at_least_once (default on the mock cluster "
                 "and in scenarios)")
      ->check(CLI::IsMember({"exactly_once", "at_least_once"}));
  app.add_option("--rate", options.rate,
                 "Produce this many events/s while the worker runs and report produce-to-output percentiles (demo "
                 "samples: needs --brokers)");
  app.add_option("--warmup", options.warmup_s,
                 "Latency run: seconds at the start whose events are not counted in the percentiles")
      ->default_val(3);
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);
  if (!restack::loadtest::cpusAvailable(run.worker_cpus, "--worker-cpus") ||
      !restack::loadtest::cpusAvailable(tool_cpus, "--tool-cpus")) {
    return 2;
  }
  // Before any thread or child exists: both inherit the mask (the broker's JVM included).
  if (!tool_cpus.empty() && !restack::loadtest::confineToCpus(tool_cpus)) return 2;
  if (!scenario.empty() || !write_events.empty() || !check_outputs.empty()) {
    run.events = options.events;
    run.partitions = app.count("--partitions") ? options.partitions : 4;
    run.threads = options.threads;
    run.batch = options.batch;
    run.rate = options.rate;
    run.warmup_s = options.warmup_s;
    if (!options.delivery.empty()) run.delivery = options.delivery;
    std::string error;
    if (!mix.empty() && !restack::loadtest::parseMix(mix, run.events_options.mix, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 2;
    }
    if (!write_events.empty()) return restack::loadtest::writeEvents(run, write_events);
    if (!check_outputs.empty()) return restack::loadtest::checkOutputs(run, check_outputs);
    return restack::loadtest::runScenario(scenario, run, app);
  }
  if (options.rate > 0 && options.brokers.empty()) {
    std::fprintf(stderr, "--rate needs --brokers: the mock cluster's acknowledgement delay would be measured\n");
    return 2;
  }
  auto events = restack::loadtest::makeEvents(options.events);
  if (options.rate > 0) return restack::loadtest::latencyRun(options, events);
  int status = restack::loadtest::pipelineOnly(options, events);
  if (status != 0) return status;
  return restack::loadtest::endToEnd(options, events);
}
