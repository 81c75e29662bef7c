// Restack's configuration: one YAML file plus environment overrides.
//
// Every knob, its default and its meaning is listed in config/restack.example.yaml. Environment
// variables override the file: RESTACK_<SECTION>__<KEY>, upper case, e.g.
//   RESTACK_KAFKA__BROKERS=broker-1:9092       -> kafka.brokers
//   RESTACK_KAFKA__PROPERTIES__SASL_USERNAME=u  -> kafka.properties."sasl.username"
// (under kafka.properties a single "_" in the key becomes "."). Validation happens at load time;
// every error names the key and the problem.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/common/status.h"

namespace restack::config {

struct Topics {
  std::string events = "restack.events.raw";
  std::string symbols = "restack.symbols";
  std::string symbols_shared = "restack.symbols.shared";
  std::string symbolicated = "restack.events.symbolicated";
  std::string fingerprints = "restack.fingerprints";
  std::string dlq = "restack.events.dlq";
};

struct Kafka {
  std::string brokers;  // required: "host:9092,host2:9092"
  std::string group_id = "restack";
  Topics topics;
  // librdkafka properties passed through to every client (TLS, SASL, timeouts …).
  std::map<std::string, std::string> properties;
  // Partition assignment: "cooperative-sticky" (default: partitions move one at a time) or
  // "range"/"roundrobin" (eager: every rebalance revokes everything).
  std::string assignment_strategy = "cooperative-sticky";
  int session_timeout_ms = 10000;
};

struct Store {
  std::string path = "/var/lib/restack/store";
  uint64_t block_cache_mb = 256;
};

struct Cache {
  uint64_t native_mb = 512;
  uint64_t proguard_mb = 256;
  uint64_t sourcemap_mb = 256;
};

struct Limits {
  uint64_t max_event_bytes = 1 << 20;      // larger events go to the DLQ
  uint32_t max_threads = 256;              // threads restored per event; the rest pass through
  uint32_t max_frames_per_thread = 512;    // frames restored per thread; the rest are kept raw
  uint64_t max_upload_bytes = 8ull << 30;  // decompressed symbol upload
  // gzip, zstd and zip uploads (each zip entry, and a zip as a whole) and compressed debug
  // sections may inflate to at most this many times their compressed size; more is refused as
  // a decompression bomb. Real symbol files compress 3-15x. Outputs up to 1 MiB are never
  // refused for their ratio. Default 200.
  uint64_t max_decompression_ratio = 200;
  // Largest source map accepted, checked before parsing: the JSON parser holds the whole
  // document, about 3x its size in memory. Default 256 MiB.
  uint64_t max_sourcemap_bytes = 256ull << 20;
};

struct Worker {
  uint32_t threads = 2;           // threads restoring events of a batch in parallel
  uint32_t batch_size = 500;      // events per batch (outputs flushed, then offsets committed)
  uint32_t batch_linger_ms = 50;  // how long to wait to fill a batch
  // Where uploads referenced by "file://" may be read from; empty = any path. Default empty.
  std::string upload_root;
};

struct Observability {
  int http_port = 8080;             // /healthz, /readyz, /metrics; 0 disables
  std::string log_level = "info";   // trace | debug | info | warn | error
  std::string log_format = "text";  // text | json
};

struct Config {
  Kafka kafka;
  Store store;
  Cache cache;
  Limits limits;
  Worker worker;
  Observability observability;
  std::string grouping_rules;  // folder of per-app grouping rule files <app>.yaml; empty = none
};

// Loads `path`, applies environment overrides from `environ`-style "KEY=VALUE" entries, validates.
Expected<Config> loadConfig(const std::string& path, const std::vector<std::string>& environment);
// Same from YAML text (tests, the demo).
Expected<Config> parseConfig(const std::string& yaml_text, const std::string& source_name,
                             const std::vector<std::string>& environment);
// The process environment as "KEY=VALUE" entries.
std::vector<std::string> processEnvironment();

}  // namespace restack::config
