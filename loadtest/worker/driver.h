// Drives a load-test run: a real Apache Kafka broker on loopback (tests/support/kafka_broker.h),
// the corpus's uploads on the symbols topic, K `restack run` processes in one group, events
// produced flat out or at a steady rate, and every output read back (read_committed) and checked.
#pragma once

#include <string>
#include <vector>

#include "loadtest/worker/events.h"
#include "loadtest/worker/report.h"

namespace restack::loadtest {

struct RunOptions {
  std::string corpus_dir;
  size_t builds = 50;
  size_t events = 200000;
  uint32_t rate = 0;  // events/s; 0 = produce everything first, then start the workers (flat out)
  int workers = 1;
  int partitions = 4;
  uint32_t threads = 2;             // worker.threads
  uint32_t batch = 1000;            // worker.batch_size
  uint32_t linger_ms = 50;          // worker.batch_linger_ms
  uint32_t commit_interval_ms = 0;  // worker.min_commit_interval_ms
  std::string delivery = "at_least_once";
  double warmup_s = 3;     // rate runs: events produced in the first seconds are not counted
  uint32_t cache_mb = 64;  // cache.*_mb and store.block_cache_mb of each worker
  // Non-empty: the workers' kafka.properties."compression.type" (lz4, zstd, snappy, gzip, none);
  // empty keeps the worker's default (lz4).
  std::string compression;
  // More of the workers' kafka.properties ("fetch.min.bytes=65536"), after compression: librdkafka
  // tuning tried without a new build. Each NAME=VALUE; the worker refuses what it must set itself.
  std::vector<std::string> kafka_properties;
  bool verbose_mismatches = false;
  // Non-empty: `perf record -e cpu-clock -g` on the first worker for the whole run, into this file
  // (hardware counters are not available on the shared machine; the software clock is).
  std::string profile;
  // How the symbols reach the workers: "topic" (the symbols topic, as the real pipeline sends
  // them; each worker applies its partitions' uploads) or "direct" (every build ingested into
  // each worker's store folder before it starts, as `restack ingest --store` does).
  std::string ingest = "topic";
  // > 0: once this share of the events came out, worker 0 is stopped (SIGTERM, as a rolling
  // update does), its last outputs are drained for a second, and it is started again on the same
  // store folder and group: the restart's cold start (RunFigures::restart_*). 0 = no restart.
  double restart_at = 0;
  // Non-empty (rate runs): a symbol file published halfway through producing, by location
  // (file://, its folder allowed by uploads.file_roots) for a build no event names, as a large
  // upload arriving while the workers run: the latency of the events produced from then on is
  // reported on its own (RunFigures::during_upload_us).
  std::string upload_during;
  // Non-empty: the CPUs each worker process is confined to (its threads inherit them). With the
  // tool and the broker on the other CPUs (--tool-cpus) a worker gets cores of its own, as in
  // production, where the brokers and the producers run elsewhere. Empty: no pinning.
  std::vector<int> worker_cpus;
  // The workers' observability.log_level; "debug" shows librdkafka's debug lines too (with, say,
  // --kafka-property debug=eos for its transactions).
  std::string worker_log_level = "warn";
  // Non-empty: each worker's log is copied to <folder>/<worker name>.log when the run ends (the
  // run's own folder is removed).
  std::string worker_logs_dir;
  // The broker's JVM heap, fixed at this size (-Xms = -Xmx), as production brokers run
  // (kafka-server-start.sh fixes 1 GiB). The tests' broker starts at 64 MiB and grows, and while
  // it grows its old generation fills within seconds at the scenarios' rates: a full collection
  // then stops it for 100-300 ms in the middle of a latency run. Empty: the tests' default.
  std::string broker_heap = "512m";
  EventOptions events_options;
};

// Runs one scenario run; fills `figures`. Returns 0 when every event's output arrived and checked
// out, 1 otherwise (the mismatches are printed).
int runLoad(const RunOptions& options, const std::string& title, RunFigures& figures);

}  // namespace restack::loadtest
