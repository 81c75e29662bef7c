#include "loadtest/worker/driver.h"

#include <librdkafka/rdkafkacpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <unistd.h>

#include "config/config.h"
#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "tests/support/kafka_broker.h"
#include "tests/worker/worker_process.h"
#include "worker/demo/demo_cluster.h"
#include "worker/kafka/clients.h"

namespace restack::loadtest {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

config::Topics runTopics(const std::string& base) {
  config::Topics topics;
  topics.events = base + ".events.raw";
  topics.symbols = base + ".symbols";
  topics.symbols_shared = base + ".symbols.shared";
  topics.symbolicated = base + ".events.symbolicated";
  topics.fingerprints = base + ".fingerprints";
  topics.dlq = base + ".events.dlq";
  topics.pending = base + ".pending";
  return topics;
}

std::string workerConfig(const RunOptions& o, const std::string& brokers, const config::Topics& topics,
                         const std::string& group, const std::string& store, int http_port) {
  std::string y;
  y += "kafka:\n  brokers: \"" + brokers + "\"\n  group_id: \"" + group + "\"\n  session_timeout_ms: 6000\n";
  y += "  delivery: " + o.delivery + "\n  transactional_id: \"" + group + "-" + std::to_string(http_port) + "\"\n";
  y += "  topics:\n    events: \"" + topics.events + "\"\n    symbols: \"" + topics.symbols + "\"\n";
  y += "    symbols_shared: \"" + topics.symbols_shared + "\"\n    symbolicated: \"" + topics.symbolicated + "\"\n";
  y += "    fingerprints: \"" + topics.fingerprints + "\"\n    dlq: \"" + topics.dlq + "\"\n";
  y += "    pending: \"" + topics.pending + "\"\n";
  if (!o.compression.empty() || !o.kafka_properties.empty()) y += "  properties:\n";
  if (!o.compression.empty()) y += "    \"compression.type\": \"" + o.compression + "\"\n";
  for (const std::string& property : o.kafka_properties) {
    const size_t equals = property.find('=');  // checked by the command line: NAME=VALUE
    y += "    \"" + property.substr(0, equals) + "\": \"" + property.substr(equals + 1) + "\"\n";
  }
  if (!o.upload_during.empty()) {
    y += "uploads:\n  file_roots: \"" + std::filesystem::absolute(o.upload_during).parent_path().string() + "\"\n";
  }
  const std::string mb = std::to_string(o.cache_mb);
  y += "store:\n  path: \"" + store + "\"\n  block_cache_mb: " + mb + "\n";
  y += "cache:\n  native_mb: " + mb + "\n  proguard_mb: " + mb + "\n  sourcemap_mb: " + mb + "\n";
  y += "worker:\n  threads: " + std::to_string(o.threads) + "\n  batch_size: " + std::to_string(o.batch) + "\n";
  y += "  batch_linger_ms: " + std::to_string(o.linger_ms) + "\n";
  // Written only when set, so that the tool also drives builds from before the setting existed.
  if (o.commit_interval_ms != 0) y += "  min_commit_interval_ms: " + std::to_string(o.commit_interval_ms) + "\n";
  y += "observability:\n  http_port: " + std::to_string(http_port) + "\n  bind_address: \"127.0.0.1\"\n";
  y += "  log_level: " + o.worker_log_level + "\n";
  return y;
}

Status produce(RdKafka::Producer& producer, const std::string& topic, const std::string& key, std::string_view value,
               const worker::Headers& headers) {
  for (;;) {
    Status sent = demo::produceRecord(producer, topic, key, value, headers);
    if (sent || sent.error().message().find("full") == std::string::npos) return sent;
    producer.poll(10);  // local queue full: let deliveries drain
  }
}

}  // namespace

int runLoad(const RunOptions& o, const std::string& title, RunFigures& figures) {
  figures = RunFigures{};
  figures.title = title;
  figures.events = o.events;
  auto corpus = prepareCorpus(o.corpus_dir, o.builds);
  if (!corpus) return std::fprintf(stderr, "%s\n", corpus.error().message().c_str()), 1;
  EventGenerator generator(*corpus, o.events_options);

  testkafka::KafkaBrokerOptions broker_options;
  if (!o.broker_heap.empty()) broker_options.heap_opts = "-Xms" + o.broker_heap + " -Xmx" + o.broker_heap;
  auto broker = testkafka::KafkaBroker::start(broker_options);
  if (!broker) return std::fprintf(stderr, "broker: %s\n", broker.error().message().c_str()), 1;
  const config::Topics topics = runTopics("lt");
  const int p = o.partitions;
  Status created = (*broker)->createTopics({{topics.events, p},
                                            {topics.symbols, p},
                                            {topics.symbols_shared, 1},
                                            {topics.symbolicated, p},
                                            {topics.fingerprints, p},
                                            {topics.dlq, 1},
                                            {topics.pending, p, {{"cleanup.policy", "compact"}}}});
  if (!created) return std::fprintf(stderr, "topics: %s\n", created.error().message().c_str()), 1;

  config::Config config;
  config.kafka.brokers = (*broker)->bootstrap();
  config.kafka.delivery = "at_least_once";
  config.kafka.topics = topics;
  auto producer = worker::makeProducer(config, "restack-loadtest-producer", nullptr);
  if (!producer) return std::fprintf(stderr, "%s\n", producer.error().message().c_str()), 1;

  // The symbol files go through the symbols topic, as the real pipeline sends them.
  size_t upload_bytes = 0, uploads = 0;
  auto upload_start = Clock::now();
  for (const CorpusBuild& build : corpus->builds) {
    for (const CorpusUpload& upload : build.uploads) {
      if (o.ingest != "topic") break;
      const std::string bytes = readFile(upload.path);
      worker::Headers headers = {
          {"restack.kind", upload.kind}, {"restack.app", corpus->app}, {"restack.build_id", build.build_id}};
      if (!upload.name.empty()) headers.emplace_back("restack.name", upload.name);
      Status sent = produce(**producer, topics.symbols, corpus->app + ":" + build.build_id, bytes, headers);
      if (!sent) return std::fprintf(stderr, "%s: %s\n", upload.path.c_str(), sent.error().message().c_str()), 1;
      upload_bytes += bytes.size();
      ++uploads;
    }
  }
  (*producer)->flush(120000);
  if (o.ingest == "topic") {
    std::printf("uploaded %zu symbol files (%zu builds, %.1f MiB) in %.2f s\n", uploads, corpus->builds.size(),
                static_cast<double>(upload_bytes) / (1 << 20), seconds(Clock::now() - upload_start));
  }

  if (o.rate == 0) {
    auto start = Clock::now();
    const double cpu_start = cpuSeconds(::getpid());
    for (size_t i = 0; i < o.events; ++i) {
      GeneratedEvent event = generator.make(i);
      Status sent = produce(**producer, topics.events, event.key, event.json, {});
      if (!sent) return std::fprintf(stderr, "%s\n", sent.error().message().c_str()), 1;
      (*producer)->poll(0);
    }
    (*producer)->flush(120000);
    figures.produce_tool_s = cpuSeconds(::getpid()) - cpu_start;
    std::printf("produced %zu events in %.2f s, before the workers start\n", o.events, seconds(Clock::now() - start));
  }

  auto dir = TempDir::create("restack-loadtest-");
  if (!dir) return std::fprintf(stderr, "%s\n", dir.error().message().c_str()), 1;
  std::vector<std::unique_ptr<worker_test::WorkerProcess>> workers;
  std::vector<int> ports;
  for (int w = 0; w < o.workers; ++w) {
    const std::string name = "worker" + std::to_string(w);
    const int port = worker_test::freeLoopbackPort();
    const std::string config_path = dir->path() + "/" + name + ".yaml";
    std::ofstream(config_path) << workerConfig(o, (*broker)->bootstrap(), topics, "lt-group",
                                               dir->path() + "/" + name + "-store", port);
    workers.push_back(
        std::make_unique<worker_test::WorkerProcess>(name, config_path, dir->path() + "/" + name + ".log"));
    workers.back()->pinTo(o.worker_cpus);
    ports.push_back(port);
  }
  if (o.ingest == "direct") {
    auto ingest_start = Clock::now();
    for (int w = 0; w < o.workers; ++w) {
      StoreOptions store_options;
      store_options.path = dir->path() + "/worker" + std::to_string(w) + "-store";
      auto store = SymbolStore::open(store_options);
      if (!store) return std::fprintf(stderr, "%s\n", store.error().message().c_str()), 1;
      for (const CorpusBuild& build : corpus->builds) {
        for (const CorpusUpload& upload : build.uploads) {
          UploadMeta meta;
          meta.app = corpus->app;
          meta.build_id = build.build_id;
          meta.name = upload.name;
          UploadContent content;
          content.path = upload.path;
          content.display_name = upload.path.substr(upload.path.rfind('/') + 1);
          auto report = ingestUpload(**store, meta, content, IngestOptions{});
          if (!report)
            return std::fprintf(stderr, "%s: %s\n", upload.path.c_str(), report.error().message().c_str()), 1;
        }
      }
    }
    std::printf("ingested %zu builds into %d store folder(s) in %.2f s\n", corpus->builds.size(), o.workers,
                seconds(Clock::now() - ingest_start));
  }
  const auto workers_start = Clock::now();
  for (auto& w : workers) {
    if (!w->start()) return std::fprintf(stderr, "could not start %s\n", w->name().c_str()), 1;
  }
  if (!o.profile.empty()) {
    // perf stops by itself when the worker it follows exits.
    const std::string command = "perf record -e cpu-clock -F 499 -g -p " + std::to_string(workers[0]->pid()) + " -o '" +
                                o.profile + "' >/dev/null 2>&1 &";
    if (std::system(command.c_str()) != 0) std::fprintf(stderr, "could not start perf: %s\n", command.c_str());
  }

  // The reader: every output, read_committed, checked against its regenerated event.
  auto properties = worker::commonProperties(config, "restack-loadtest-reader");
  properties["group.id"] = "restack-loadtest-reader";
  properties["auto.offset.reset"] = "earliest";
  properties["isolation.level"] = "read_committed";
  properties["fetch.wait.max.ms"] = "5";
  auto conf = worker::makeConf(properties);
  if (!conf) return std::fprintf(stderr, "%s\n", conf.error().message().c_str()), 1;
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> reader(RdKafka::KafkaConsumer::create(conf->get(), error));
  if (!reader) return std::fprintf(stderr, "reader: %s\n", error.c_str()), 1;
  reader->subscribe({topics.symbolicated, topics.dlq});

  std::vector<std::atomic<int64_t>> produced_at(o.rate > 0 ? o.events : 0);
  std::atomic<size_t> produced{o.rate > 0 ? 0 : o.events};
  std::thread produce_thread;
  const auto origin = Clock::now();
  auto micros = [&] { return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - origin).count(); };
  int64_t produce_origin_us = 0;
  std::atomic<int64_t> upload_at_us{-1};  // when the --upload-during file was produced
  if (o.rate > 0) {
    // Steady state, not the group join: wait until the workers own every partition and caught up
    // with the symbols (ready), then produce at the rate.
    worker_test::waitUntil(
        [&] {
          uint64_t assigned = 0;
          for (int port : ports) assigned += worker_test::metric(port, "assigned_partitions").value_or(0);
          bool ready = true;
          for (int port : ports) ready = ready && worker_test::httpGet(port, "/readyz").status == 200;
          return assigned >= static_cast<uint64_t>(o.partitions) && ready;
        },
        std::chrono::minutes(5));
    std::this_thread::sleep_for(std::chrono::seconds(2));
    produce_origin_us = micros();
    produce_thread = std::thread([&] {
      const auto interval = std::chrono::nanoseconds(1'000'000'000LL / o.rate);
      // The thread sleeps at most once a millisecond and then produces every event due by then:
      // a wake-up per event (up to 10,000 a second) cost it more than making the event. Each
      // event's latency still starts at its own produce call (produced_at).
      constexpr auto kWakeEvery = std::chrono::milliseconds(1);
      auto next = Clock::now();
      for (size_t i = 0; i < o.events; ++i) {
        if (!o.upload_during.empty() && i == o.events / 2) {
          const std::filesystem::path file = std::filesystem::absolute(o.upload_during);
          worker::Headers headers = {{"restack.app", corpus->app},
                                     {"restack.build_id", "upload-during"},
                                     {"restack.file_name", file.filename().string()},
                                     {"restack.location", "file://" + file.string()}};
          upload_at_us = micros();
          (void)produce(**producer, topics.symbols, corpus->app + ":upload-during", "", headers);
          (*producer)->poll(0);
        }
        GeneratedEvent event = generator.make(i);
        if (Clock::now() < next) std::this_thread::sleep_until(next + kWakeEvery);
        next += interval;
        produced_at[i] = micros();
        (void)produce(**producer, topics.events, event.key, event.json, {});
        (*producer)->poll(0);
        produced = i + 1;
      }
      (*producer)->flush(60000);
    });
  }

  // Events produced in the first warmup_s seconds of producing enter no percentile.
  const int64_t warmup_us = produce_origin_us + static_cast<int64_t>(o.warmup_s * 1e6);
  std::vector<bool> seen(o.events, false);
  std::vector<double> per_second;  // outputs per second since the first output
  size_t arrived = 0, last_second_count = 0;
  Clock::time_point first_output{}, last_output{}, last_progress = Clock::now(), last_arrival = Clock::now();
  std::vector<WorkerFigures> worker_figures(workers.size());
  auto sampleWorkers = [&] {
    for (size_t w = 0; w < workers.size(); ++w) {
      if (!workers[w]->running()) continue;
      worker_figures[w].pid = workers[w]->pid();
      worker_figures[w].cpu_s = std::max(worker_figures[w].cpu_s, cpuSeconds(workers[w]->pid()));
      worker_figures[w].peak_rss = std::max(worker_figures[w].peak_rss, worker_test::peakRssBytes(workers[w]->pid()));
    }
  };
  auto workersCpu = [&] {
    double sum = 0;
    for (const auto& w : worker_figures) sum += w.cpu_s;
    return sum;
  };
  // The machine's, this tool's and the workers' CPU seconds at the first output.
  struct CpuSample {
    MachineCpu machine;
    double tool_s = 0, workers_s = 0, broker_s = 0;
  } window_start;
  // The broker's JVM (scripts/kafka-broker.sh writes its pid).
  const pid_t broker_pid = pidFromFile(((*broker)->dir() / "broker.pid").string());
  auto brokerCpu = [&] { return broker_pid > 0 ? cpuSeconds(broker_pid) : 0.0; };
  size_t printed_mismatches = 0;
  // The restart (o.restart_at): the first life's figures, and when the second one started.
  WorkerFigures first_life;
  Clock::time_point drained_at{}, restarted_at{};
  size_t restart_second = 0;  // index into per_second of the first whole second after the restart
  double rate_before_restart = 0;
  while (arrived < o.events && Clock::now() - last_arrival < std::chrono::seconds(90)) {
    if (o.restart_at > 0 && !figures.restarted && arrived >= static_cast<size_t>(o.restart_at * o.events)) {
      sampleWorkers();
      first_life = worker_figures[0];
      worker_figures[0] = {};
      std::vector<double> sorted = per_second;
      std::sort(sorted.begin(), sorted.end());
      rate_before_restart = sorted.empty() ? 0 : sorted[sorted.size() / 2];
      const auto stop = Clock::now();
      (void)workers[0]->terminate();
      figures.restart_down_s = seconds(Clock::now() - stop);
      figures.restarted = true;
      drained_at = Clock::now() + std::chrono::seconds(1);
      std::fprintf(stderr, "restart: worker0 stopped in %.2f s\n", figures.restart_down_s);
    }
    if (drained_at != Clock::time_point{} && restarted_at == Clock::time_point{} && Clock::now() >= drained_at) {
      if (!workers[0]->start()) return std::fprintf(stderr, "could not restart %s\n", workers[0]->name().c_str()), 1;
      restarted_at = Clock::now();
      restart_second = per_second.size() + 1;
      last_arrival = restarted_at;
      std::fprintf(stderr, "restart: worker0 started again on its store\n");
    }
    std::unique_ptr<RdKafka::Message> message(reader->consume(100));
    const auto now = Clock::now();
    if (now - last_progress >= std::chrono::seconds(1)) {
      sampleWorkers();
      uint64_t rss = 0;
      for (const auto& w : worker_figures) rss += w.peak_rss;
      if (arrived > 0) per_second.push_back(static_cast<double>(arrived - last_second_count));
      std::fprintf(stderr,
                   "[%6.1f s] produced %zu, restored %zu, dlq %zu, %zu/s, mismatches %zu, workers' peak RSS %.0f MiB\n",
                   seconds(now - workers_start), produced.load(), figures.restored, figures.dlq,
                   arrived - last_second_count, figures.mismatches, static_cast<double>(rss) / (1 << 20));
      last_second_count = arrived;
      last_progress = now;
    }
    if (message->err() != RdKafka::ERR_NO_ERROR) continue;
    const std::string_view value(static_cast<const char*>(message->payload()), message->len());
    const size_t index = eventIndex(value);
    if (index >= o.events || seen[index]) continue;  // at-least-once may repeat an output
    seen[index] = true;
    ++arrived;
    last_arrival = now;
    if (first_output == Clock::time_point{}) {
      first_output = now;
      sampleWorkers();
      window_start = {machineCpu(), cpuSeconds(::getpid()), workersCpu(), brokerCpu()};
    }
    if (restarted_at != Clock::time_point{} && figures.restart_first_output_s == 0) {
      figures.restart_first_output_s = seconds(now - restarted_at);
    }
    last_output = now;
    if (o.rate > 0 && produced_at[index] >= warmup_us) figures.latencies_us.push_back(micros() - produced_at[index]);
    if (o.rate > 0 && upload_at_us >= 0 && produced_at[index] >= upload_at_us) {
      figures.during_upload_us.push_back(micros() - produced_at[index]);
    }
    GeneratedEvent expected = generator.expect(index);
    figures.raw_frames += expected.raw_frames;
    std::string problem;
    if (message->topic_name() == topics.dlq) {
      ++figures.dlq;
      if (!expected.malformed) problem = "a readable event went to the DLQ";
    } else {
      ++figures.restored;
      problem = expected.malformed ? "an unreadable event was restored" : checkRestored(value, expected);
    }
    if (!problem.empty()) {
      ++figures.mismatches;
      if (printed_mismatches++ < 20 || o.verbose_mismatches) {
        std::fprintf(stderr, "mismatch, event %zu: %s\n", index, problem.c_str());
      }
    }
  }
  sampleWorkers();
  if (first_output != Clock::time_point{} && !figures.restarted) {
    const MachineCpu machine = machineCpu();
    figures.window_workers_s = workersCpu() - window_start.workers_s;
    figures.window_tool_s = cpuSeconds(::getpid()) - window_start.tool_s;
    figures.window_broker_s = std::max(0.0, brokerCpu() - window_start.broker_s);
    figures.window_rest_s = std::max(0.0, machine.busy_s - window_start.machine.busy_s - figures.window_workers_s -
                                              figures.window_tool_s - figures.window_broker_s);
    figures.window_idle_s = machine.idle_s - window_start.machine.idle_s;
    figures.window_outputs = arrived - 1;
  }
  if (produce_thread.joinable()) produce_thread.join();
  if (!o.upload_during.empty()) {
    // The upload's ingest, not only its produce, is what the latency after it measures.
    uint64_t ingested = 0;
    for (int port : ports) ingested += worker_test::metric(port, "uploads_ingested_total").value_or(0);
    figures.uploads_ingested = ingested;
  }
  reader->close();
  for (auto& w : workers) {
    auto status = w->terminate();
    if (!status || *status != 0) {
      std::fprintf(stderr, "%s %s; log tail:\n%s\n", w->name().c_str(),
                   status ? worker_test::describeWaitStatus(*status).c_str() : "did not stop",
                   worker_test::lastLines(w->log(), 20).c_str());
    }
  }
  if (!o.worker_logs_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(o.worker_logs_dir, error);
    for (auto& w : workers) {
      const std::string path = o.worker_logs_dir + "/" + w->name() + ".log";
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << w->log();
      if (!out) std::fprintf(stderr, "could not write %s\n", path.c_str());
    }
    std::printf("worker logs in %s\n", o.worker_logs_dir.c_str());
  }
  if (figures.restarted) {
    worker_figures[0].cpu_s += first_life.cpu_s;
    worker_figures[0].peak_rss = std::max(worker_figures[0].peak_rss, first_life.peak_rss);
    for (size_t s = restart_second; s < per_second.size(); ++s) {
      if (per_second[s] >= 0.9 * rate_before_restart) {
        // per_second[restart_second] is the first whole second after the restart.
        figures.restart_full_rate_s = static_cast<double>(s + 2 - restart_second);
        break;
      }
    }
  }
  figures.workers = worker_figures;
  figures.first_output_s = first_output == Clock::time_point{} ? 0 : seconds(first_output - workers_start);
  figures.steady_s = seconds(last_output - first_output);
  // Full rate: the first whole second at 90 % of the median of the per-second counts.
  if (!per_second.empty()) {
    std::vector<double> sorted = per_second;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    for (size_t s = 0; s < per_second.size(); ++s) {
      if (per_second[s] >= 0.9 * median) {
        figures.full_rate_s = figures.first_output_s + static_cast<double>(s + 1);
        break;
      }
    }
  }
  std::sort(figures.latencies_us.begin(), figures.latencies_us.end());
  std::sort(figures.during_upload_us.begin(), figures.during_upload_us.end());
  if (upload_at_us >= 0) figures.upload_at_s = static_cast<double>(upload_at_us - produce_origin_us) / 1e6;
  figures.load_average = loadAverage();
  const bool all = figures.restored + figures.dlq == o.events;
  if (!all) std::fprintf(stderr, "only %zu of %zu events came out\n", figures.restored + figures.dlq, o.events);
  return all && figures.mismatches == 0 ? 0 : 1;
}

}  // namespace restack::loadtest
