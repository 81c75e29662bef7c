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
#include <optional>
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
  // Events waiting for symbols (compacted, co-partitioned with events; docs/operations.md).
  std::string pending = "restack.pending";
  // The symbol-demand feed: one record per app, build and missing symbol file (compacted,
  // co-partitioned with events; worker/kafka/symbol_demand.h, docs/design.md §13). When the topic
  // does not exist the worker runs without the feed and says so in its log.
  std::string symbols_missing = "restack.symbols.missing";
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
  // "exactly_once" (default): each batch's outputs, pending-state records and input offsets
  // commit in one Kafka transaction; consumers reading with isolation.level=read_committed see
  // every event once. "at_least_once": outputs are acknowledged, then offsets committed; a crash
  // in between publishes that batch again. Every Kafka Restack supports has transactions; only
  // librdkafka's mock cluster (the demo, unit tests) lacks them and needs at_least_once.
  std::string delivery = "exactly_once";
  // transactional.id of the exactly_once producer. Default empty = "<group_id>-<hostname>": a
  // StatefulSet pod keeps its name across restarts, so a restarted pod fences its predecessor.
  // Must be unique per running worker.
  std::string transactional_id;
};

struct Store {
  std::string path = "/var/lib/restack/store";
  uint64_t block_cache_mb = 256;
};

struct Cache {
  uint64_t native_mb = 512;
  uint64_t proguard_mb = 256;
  uint64_t sourcemap_mb = 256;

  // The knob of the resolver named `resolver` (symbolstore/resolvers.cc): `cache.<name>_mb`;
  // nullopt for a resolver without one (it keeps its own default).
  std::optional<uint64_t> megabytesFor(std::string_view resolver) const;
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
  uint32_t threads = 2;  // threads restoring events of a batch in parallel
  // Most events per batch (outputs flushed, then offsets committed). Under load a batch fills to it
  // while the previous one commits; a batch is one commit round trip, which the restore threads
  // wait out when the batch is restored first, so larger batches keep them busier (measured on 2
  // cores, exactly_once flat out: 8,800 events/s at 500, 11,900 at 1,000; docs/benchmarks.md).
  // Memory in flight is up to two batches of events and their outputs (Limits above bound each).
  uint32_t batch_size = 1000;
  uint32_t batch_linger_ms = 50;  // while the previous batch commits, how long the next may wait to fill
  // With nothing in flight, how long after the previous publication began the next batch may wait
  // to fill, ms (a full batch does not wait). 0 = what arrived is restored at once. Each batch is
  // one commit (a transaction under exactly_once), so at moderate rates this trades up to that
  // much latency for fewer, larger commits: less CPU on the brokers and in the worker per event.
  uint32_t min_commit_interval_ms = 0;
};

// Which upload locations (the restack.location header of a symbol upload) the worker may read.
// Whoever can write the symbols topics controls that header, so everything is refused unless
// allowed here. Lists are comma-separated strings; docs/operations.md, "Upload locations".
struct Uploads {
  // Folders that file:// locations may name files under (after resolving symbolic links);
  // absolute paths. Default "": every file:// location is refused.
  std::string file_roots;
  // Hosts that http(s):// locations (and every redirect) may name: exact names, or
  // "*.example.com" for any name below example.com. Default "": every http(s) location is refused.
  std::string http_hosts;
  // Plain http:// (not https://) only when true. Default false.
  bool allow_plain_http = false;
  // CIDRs ("10.1.0.0/16", "fd00::/8"; a bare address is one host) that may be contacted although
  // they are loopback, private, link-local, metadata or otherwise not global. Default "": none.
  std::string allowed_networks;
  uint32_t max_redirects = 3;              // each target passes the same checks; more = refused
  uint32_t connect_timeout_ms = 10000;     // per connection attempt
  uint32_t total_timeout_ms = 600000;      // the whole download, redirects included (10 min)
  uint64_t low_speed_bytes_per_s = 10240;  // slower than this for low_speed_time_s = aborted
  uint32_t low_speed_time_s = 30;
  // Downloads run on threads of their own beside the worker loop (worker/kafka/fetch_pool.h), so
  // that a slow server holds back no event. Default 2.
  uint32_t fetch_threads = 2;
  // How long events that wait for symbols may wait for an upload read meanwhile to be downloaded
  // and ingested (both run beside the events): until this long after the upload was read, the
  // batch waits for it; after that the events are published as pending and restored again once it
  // is ingested. A slow or hostile location, or an upload slow to parse, therefore holds a worker's
  // events for at most this long. Default 5000 ms.
  uint32_t fetch_wait_ms = 5000;

  // --- retries of uploads whose fetch or ingest failed for a passing reason
  // (ErrorCode::kUnavailable: network, HTTP 5xx, timeout, expired presigned URL): kept in the
  // store, retried with exponential backoff, then sent to the DLQ with the number of attempts
  // (worker/kafka/deferred_uploads.h; docs/operations.md, "Upload outcomes and retries") ---
  uint64_t retry_initial_backoff_ms = 5000;  // first retry after this long; doubles per attempt
  uint64_t retry_max_backoff_ms = 300000;    // the backoff never exceeds this (5 min)
  uint64_t retry_deadline_s = 86400;         // after this long since the first failure: DLQ (24 h)
  // A symbols catch-up (start, new partitions, events waiting for symbols) gives up only after
  // this long without progress (no upload read, no high watermark advance). Default 60 s.
  uint64_t catch_up_stall_s = 60;
  // --- end of upload retries ---
};

// Events published while their symbols were missing, kept to be restored later (their state
// lives in kafka.topics.pending). Past a bound, new pending events are published but not kept.
struct Pending {
  uint64_t max_events = 100000;     // pending events kept per worker
  uint64_t max_bytes = 1ull << 30;  // their raw bytes, 1 GiB
  uint64_t max_age_s = 72 * 3600;   // older ones are dropped (their symbols are not coming), 72 h
  // Replaying a pending partition into the store (on assignment, before its events are consumed)
  // gives up, and the worker stops, only after this long without progress (no record read, no
  // partition end reached). Default 60 s.
  uint64_t replay_stall_s = 60;
  // Whether an event waits (is kept pending, and its missing files count as symbol demand) for
  // the symbols of an operating-system image: libc.so, libart.so, UIKitCore
  // (formats/common/system_images.h). They differ per device build and only shared uploads
  // (kafka.topics.symbols_shared) bring them, so by default an event does not wait for them: its
  // frames there are reason system_image and the event is partial. Set true when a pipeline
  // uploads the devices' system symbols as shared images and events should be restored again
  // when they arrive. Default false.
  bool await_system_symbols = false;
};

// The symbol-demand feed (kafka.topics.symbols_missing): counts per missing symbol file are kept
// in memory by the owner of the events partition and published as cumulative records.
struct SymbolsMissing {
  // How often changed records are published (in the worker's transaction). Default 10 s.
  uint64_t flush_interval_ms = 10000;
  // Records tracked per worker; past it new missing files are not tracked (counted in
  // restack_symbol_demand_untracked_total and logged). Default 100000.
  uint64_t max_keys = 100000;
};

struct Observability {
  int http_port = 8080;  // /healthz, /readyz, /metrics; 0 disables
  // Address the HTTP port listens on: an IPv4 or IPv6 literal. "0.0.0.0" (default) answers on
  // the pod IP, where Kubernetes probes and Prometheus connect; "127.0.0.1" is local only.
  std::string bind_address = "0.0.0.0";
  // Lines below this level are not written, librdkafka's included. Default "info".
  std::string log_level = "info";  // trace | debug | info | warn | error
  // "text" (default) for a terminal; "json": one JSON object per line with time, level, logger,
  // message, and event_id/topic/partition/offset when the line is about one event
  // (worker/logging/log.h, docs/operations.md §11).
  std::string log_format = "text";  // text | json
};

struct Config {
  Kafka kafka;
  Store store;
  Cache cache;
  Limits limits;
  Worker worker;
  Uploads uploads;
  Pending pending;
  SymbolsMissing symbols_missing;
  Observability observability;
  std::string grouping_rules;  // folder of per-app grouping rule files <app>.yaml; empty = none
};

// Loads `path`, applies environment overrides from `environ`-style "KEY=VALUE" entries, validates.
Expected<Config> loadConfig(const std::string& path, const std::vector<std::string>& environment);
// Same from YAML text (tests, the demo).
Expected<Config> parseConfig(const std::string& yaml_text, const std::string& source_name,
                             const std::vector<std::string>& environment);
// Splits a comma-separated list, trimming blanks around each entry and dropping empty ones.
std::vector<std::string> splitList(const std::string& list);
// The process environment as "KEY=VALUE" entries.
std::vector<std::string> processEnvironment();

// Why kafka.properties may not set `name` (its own key, or a guarantee that depends on
// Restack's value), or empty when it may. The list is in config/restack.example.yaml.
std::string protectedPropertyReason(std::string_view name);

// True for property names whose values are credentials (*password*, *secret*, *token*, ssl.key*,
// sasl.jaas.config, sasl.oauthbearer.* …): their values never reach a log line or an error.
bool isSecretProperty(std::string_view name);

}  // namespace restack::config
