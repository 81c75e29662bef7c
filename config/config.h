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
#include <string_view>
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
  // librdkafka properties passed through to every client (TLS, SASL, timeouts …). Properties
  // Restack's guarantees depend on are refused at load time (protectedPropertyReason).
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

// Bytes every output record may spend on its key, headers and Kafka's per-record framing on top
// of its value (limits.max_output_bytes). The pipeline keeps keys and headers inside it.
inline constexpr uint64_t kOutputRecordMargin = 16384;
// librdkafka's default producer message.max.bytes.
inline constexpr uint64_t kDefaultMessageMaxBytes = 1000000;

struct Limits {
  uint64_t max_event_bytes = 1 << 20;  // larger events go to the DLQ
  // Largest value of an output record (restored event, fingerprint record, DLQ copy). A restored
  // event above it is cut down (restored text dropped, then frames), a DLQ copy is cut to it; see
  // worker/pipeline/event_processor.h. max_output_bytes + kOutputRecordMargin must not exceed the
  // producer's message.max.bytes (kafka.properties."message.max.bytes", default 1000000).
  uint64_t max_output_bytes = 900000;
  uint32_t max_threads = 256;              // threads restored per event; the rest pass through
  uint32_t max_frames_per_thread = 512;    // frames restored per thread; the rest are kept raw
  uint64_t max_upload_bytes = 8ull << 30;  // decompressed symbol upload
};

struct Worker {
  uint32_t threads = 2;           // threads restoring events of a batch in parallel
  uint32_t batch_size = 500;      // events per batch (outputs flushed, then offsets committed)
  uint32_t batch_linger_ms = 50;  // how long to wait to fill a batch
  // Where uploads referenced by "file://" may be read from; empty = any path. Default empty.
  std::string upload_root;
};

struct Observability {
  int http_port = 8080;  // /healthz, /readyz, /metrics; 0 disables
  // Address the HTTP port listens on: an IPv4 or IPv6 literal. "0.0.0.0" (default) answers on
  // the pod IP, where Kubernetes probes and Prometheus connect; "127.0.0.1" is local only.
  std::string bind_address = "0.0.0.0";
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

// Why kafka.properties may not set `name` (its own key, or a guarantee that depends on
// Restack's value), or empty when it may. The list is in config/restack.example.yaml.
std::string protectedPropertyReason(std::string_view name);

// True for property names whose values are credentials (*password*, *secret*, *token*, ssl.key*,
// sasl.jaas.config, sasl.oauthbearer.* …): their values never reach a log line or an error.
bool isSecretProperty(std::string_view name);

}  // namespace restack::config
