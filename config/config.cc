#include "config/config.h"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <functional>
#include <sstream>

extern char** environ;

namespace restack::config {
namespace {

constexpr std::string_view kPropertiesPrefix = "kafka.properties.";
constexpr std::string_view kEnvPrefix = "RESTACK_";

// A scalar value and where it came from, for error messages.
struct Setting {
  std::string value;
  std::string origin;  // "restack.yaml:12" or "environment RESTACK_KAFKA__BROKERS"
};
using Settings = std::map<std::string, Setting>;

Status flatten(const YAML::Node& node, const std::string& prefix, const std::string& source, Settings& out) {
  if (node.IsMap()) {
    for (const auto& entry : node) {
      std::string key = entry.first.as<std::string>();
      std::string path = prefix.empty() ? key : prefix + "." + key;
      RESTACK_RETURN_IF_ERROR(flatten(entry.second, path, source, out));
    }
    return Status::ok();
  }
  if (node.IsNull()) return Status::ok();
  std::string origin = source + ":" + std::to_string(node.Mark().line + 1);
  if (!node.IsScalar()) return invalidArgument(origin + ": " + prefix + " must be a single value, not a list");
  out[prefix] = Setting{node.Scalar(), origin};
  return Status::ok();
}

void applyEnvironment(const std::vector<std::string>& environment, Settings& out) {
  for (const std::string& entry : environment) {
    if (!entry.starts_with(kEnvPrefix)) continue;
    size_t equals = entry.find('=');
    if (equals == std::string::npos) continue;
    std::string name = entry.substr(0, equals);
    std::string rest = name.substr(kEnvPrefix.size());
    std::string key;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest.compare(i, 2, "__") == 0) {
        key.push_back('.');
        ++i;
      } else {
        key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(rest[i]))));
      }
    }
    if (key.find('.') == std::string::npos) continue;  // RESTACK_CONFIG and the like
    if (key.starts_with(kPropertiesPrefix)) {
      std::string property = key.substr(kPropertiesPrefix.size());
      std::replace(property.begin(), property.end(), '_', '.');
      key = std::string(kPropertiesPrefix) + property;
    }
    out[key] = Setting{entry.substr(equals + 1), "environment " + name};
  }
}

Expected<uint64_t> toUnsigned(const std::string& key, const Setting& setting, uint64_t min, uint64_t max) {
  const std::string& text = setting.value;
  uint64_t value = 0;
  bool ok = !text.empty() && text.size() <= 19 && std::all_of(text.begin(), text.end(), ::isdigit);
  if (ok) value = std::stoull(text);
  if (!ok || value < min || value > max) {
    return invalidArgument(setting.origin + ": " + key + " must be a whole number from " + std::to_string(min) +
                           " to " + std::to_string(max) + ", got '" + text + "'");
  }
  return value;
}

using Apply = std::function<Status(const std::string& key, const Setting&, Config&)>;

template <typename Field>
Apply unsignedField(Field Config::* section, uint64_t Field::* member, uint64_t min, uint64_t max) {
  return [=](const std::string& key, const Setting& s, Config& c) -> Status {
    auto v = toUnsigned(key, s, min, max);
    if (!v) return v.error();
    c.*section.*member = *v;
    return Status::ok();
  };
}
template <typename Field, typename Int>
Apply intField(Field Config::* section, Int Field::* member, uint64_t min, uint64_t max) {
  return [=](const std::string& key, const Setting& s, Config& c) -> Status {
    auto v = toUnsigned(key, s, min, max);
    if (!v) return v.error();
    c.*section.*member = static_cast<Int>(*v);
    return Status::ok();
  };
}
template <typename Field>
Apply stringField(Field Config::* section, std::string Field::* member, std::vector<std::string> allowed = {}) {
  return [=](const std::string& key, const Setting& s, Config& c) -> Status {
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s.value) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return invalidArgument(s.origin + ": " + key + " must be one of " + list + ", got '" + s.value + "'");
    }
    c.*section.*member = s.value;
    return Status::ok();
  };
}
template <typename Field>
Apply boolField(Field Config::* section, bool Field::* member) {
  return [=](const std::string& key, const Setting& s, Config& c) -> Status {
    if (s.value != "true" && s.value != "false") {
      return invalidArgument(s.origin + ": " + key + " must be true or false, got '" + s.value + "'");
    }
    c.*section.*member = s.value == "true";
    return Status::ok();
  };
}
// A comma-separated list whose every entry passes `check` (which returns what is wrong, or "").
Apply listField(std::string Uploads::* member, std::function<std::string(const std::string&)> check) {
  return [=](const std::string& key, const Setting& s, Config& c) -> Status {
    for (const std::string& entry : splitList(s.value)) {
      std::string problem = check(entry);
      if (!problem.empty()) return invalidArgument(s.origin + ": " + key + ": '" + entry + "' " + problem);
    }
    c.uploads.*member = s.value;
    return Status::ok();
  };
}

std::string checkFileRoot(const std::string& root) {
  return root.starts_with("/") ? "" : "is not an absolute path";
}
// Host names as they appear in URLs: letters, digits, '-', '.', '_'; or "*." and such a name.
std::string checkHostPattern(const std::string& pattern) {
  std::string_view name = pattern;
  if (name.starts_with("*.")) name.remove_prefix(2);
  bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.' || ch == '_' || ch == ':';
  });
  return ok ? "" : "is not a host name or \"*.domain\" pattern";
}
// "address/prefix" or a bare address, IPv4 or IPv6.
std::string checkNetwork(const std::string& network) {
  size_t slash = network.find('/');
  std::string address = network.substr(0, slash);
  unsigned char bytes[16];
  int bits = 0;
  if (inet_pton(AF_INET, address.c_str(), bytes) == 1) {
    bits = 32;
  } else if (inet_pton(AF_INET6, address.c_str(), bytes) == 1) {
    bits = 128;
  } else {
    return "is not an IPv4 or IPv6 network (e.g. 10.1.0.0/16, fd00::/8)";
  }
  if (slash == std::string::npos) return "";
  std::string prefix = network.substr(slash + 1);
  int length = -1;
  auto [end, error] = std::from_chars(prefix.data(), prefix.data() + prefix.size(), length);
  bool ok = error == std::errc() && end == prefix.data() + prefix.size() && length >= 0 && length <= bits;
  return ok ? "" : "has a prefix length outside 0-" + std::to_string(bits);
}

Apply topicField(std::string Topics::* member) {
  return [=](const std::string& key, const Setting& s, Config& c) -> Status {
    if (s.value.empty()) return invalidArgument(s.origin + ": " + key + " must not be empty");
    c.kafka.topics.*member = s.value;
    return Status::ok();
  };
}

const std::map<std::string, Apply>& knownKeys() {
  static const std::map<std::string, Apply> keys = {
      {"kafka.brokers", stringField(&Config::kafka, &Kafka::brokers)},
      {"kafka.group_id", stringField(&Config::kafka, &Kafka::group_id)},
      {"kafka.assignment_strategy",
       stringField(&Config::kafka, &Kafka::assignment_strategy, {"cooperative-sticky", "range", "roundrobin"})},
      {"kafka.session_timeout_ms", intField(&Config::kafka, &Kafka::session_timeout_ms, 1000, 3600000)},
      {"kafka.delivery", stringField(&Config::kafka, &Kafka::delivery, {"exactly_once", "at_least_once"})},
      {"kafka.transactional_id", stringField(&Config::kafka, &Kafka::transactional_id)},
      {"kafka.topics.events", topicField(&Topics::events)},
      {"kafka.topics.symbols", topicField(&Topics::symbols)},
      {"kafka.topics.symbols_shared", topicField(&Topics::symbols_shared)},
      {"kafka.topics.symbolicated", topicField(&Topics::symbolicated)},
      {"kafka.topics.fingerprints", topicField(&Topics::fingerprints)},
      {"kafka.topics.dlq", topicField(&Topics::dlq)},
      {"kafka.topics.pending", topicField(&Topics::pending)},
      {"kafka.topics.symbols_missing", topicField(&Topics::symbols_missing)},
      {"store.path", stringField(&Config::store, &Store::path)},
      {"store.block_cache_mb", unsignedField(&Config::store, &Store::block_cache_mb, 8, 1 << 20)},
      {"cache.native_mb", unsignedField(&Config::cache, &Cache::native_mb, 1, 1 << 20)},
      {"cache.proguard_mb", unsignedField(&Config::cache, &Cache::proguard_mb, 1, 1 << 20)},
      {"cache.sourcemap_mb", unsignedField(&Config::cache, &Cache::sourcemap_mb, 1, 1 << 20)},
      {"limits.max_event_bytes", unsignedField(&Config::limits, &Limits::max_event_bytes, 1024, 1ull << 30)},
      {"limits.max_output_bytes", unsignedField(&Config::limits, &Limits::max_output_bytes, 65536, 1000000000)},
      {"limits.max_threads", intField(&Config::limits, &Limits::max_threads, 1, 100000)},
      {"limits.max_frames_per_thread", intField(&Config::limits, &Limits::max_frames_per_thread, 1, 1000000)},
      {"limits.max_upload_bytes", unsignedField(&Config::limits, &Limits::max_upload_bytes, 1024, 1ull << 40)},
      {"limits.max_decompression_ratio", unsignedField(&Config::limits, &Limits::max_decompression_ratio, 2, 100000)},
      {"limits.max_sourcemap_bytes", unsignedField(&Config::limits, &Limits::max_sourcemap_bytes, 1024, 1ull << 32)},
      {"worker.threads", intField(&Config::worker, &Worker::threads, 1, 256)},
      {"worker.batch_size", intField(&Config::worker, &Worker::batch_size, 1, 100000)},
      {"worker.batch_linger_ms", intField(&Config::worker, &Worker::batch_linger_ms, 0, 60000)},
      {"worker.min_commit_interval_ms", intField(&Config::worker, &Worker::min_commit_interval_ms, 0, 60000)},
      // Upload retries (config.h, Uploads).
      {"uploads.retry_initial_backoff_ms",
       unsignedField(&Config::uploads, &Uploads::retry_initial_backoff_ms, 1, 3600000)},
      {"uploads.retry_max_backoff_ms", unsignedField(&Config::uploads, &Uploads::retry_max_backoff_ms, 1, 86400000)},
      {"uploads.retry_deadline_s", unsignedField(&Config::uploads, &Uploads::retry_deadline_s, 1, 30ull * 86400)},
      {"uploads.catch_up_stall_s", unsignedField(&Config::uploads, &Uploads::catch_up_stall_s, 1, 86400)},
      // End of upload retries.
      {"uploads.file_roots", listField(&Uploads::file_roots, checkFileRoot)},
      {"uploads.http_hosts", listField(&Uploads::http_hosts, checkHostPattern)},
      {"uploads.allow_plain_http", boolField(&Config::uploads, &Uploads::allow_plain_http)},
      {"uploads.allowed_networks", listField(&Uploads::allowed_networks, checkNetwork)},
      {"uploads.max_redirects", intField(&Config::uploads, &Uploads::max_redirects, 0, 20)},
      {"uploads.connect_timeout_ms", intField(&Config::uploads, &Uploads::connect_timeout_ms, 100, 600000)},
      {"uploads.total_timeout_ms", intField(&Config::uploads, &Uploads::total_timeout_ms, 1000, 86400000)},
      {"uploads.low_speed_bytes_per_s",
       unsignedField(&Config::uploads, &Uploads::low_speed_bytes_per_s, 1, 1ull << 30)},
      {"uploads.low_speed_time_s", intField(&Config::uploads, &Uploads::low_speed_time_s, 1, 3600)},
      {"uploads.fetch_threads", intField(&Config::uploads, &Uploads::fetch_threads, 1, 64)},
      {"uploads.fetch_wait_ms", intField(&Config::uploads, &Uploads::fetch_wait_ms, 0, 600000)},
      {"pending.max_events", unsignedField(&Config::pending, &Pending::max_events, 0, 100000000)},
      {"pending.max_bytes", unsignedField(&Config::pending, &Pending::max_bytes, 0, 1ull << 40)},
      {"pending.max_age_s", unsignedField(&Config::pending, &Pending::max_age_s, 60, 365ull * 24 * 3600)},
      {"pending.replay_stall_s", unsignedField(&Config::pending, &Pending::replay_stall_s, 1, 86400)},
      {"pending.await_system_symbols", boolField(&Config::pending, &Pending::await_system_symbols)},
      {"symbols_missing.flush_interval_ms",
       unsignedField(&Config::symbols_missing, &SymbolsMissing::flush_interval_ms, 10, 3600000)},
      {"symbols_missing.max_keys", unsignedField(&Config::symbols_missing, &SymbolsMissing::max_keys, 1, 100000000)},
      {"observability.http_port", intField(&Config::observability, &Observability::http_port, 0, 65535)},
      {"observability.bind_address",
       [](const std::string& key, const Setting& s, Config& c) -> Status {
         in_addr v4{};
         in6_addr v6{};
         if (::inet_pton(AF_INET, s.value.c_str(), &v4) != 1 && ::inet_pton(AF_INET6, s.value.c_str(), &v6) != 1) {
           return invalidArgument(s.origin + ": " + key +
                                  " must be an IPv4 or IPv6 address such as 0.0.0.0 (every interface) or 127.0.0.1 "
                                  "(local only), got '" +
                                  s.value + "'");
         }
         c.observability.bind_address = s.value;
         return Status::ok();
       }},
      {"observability.log_level",
       stringField(&Config::observability, &Observability::log_level, {"trace", "debug", "info", "warn", "error"})},
      {"observability.log_format", stringField(&Config::observability, &Observability::log_format, {"text", "json"})},
      {"grouping.rules",
       [](const std::string&, const Setting& s, Config& c) -> Status {
         c.grouping_rules = s.value;
         return Status::ok();
       }},
  };
  return keys;
}

// Checks one kafka.properties entry. Messages name the property and never print its value
// unless the property is a plain number Restack checks (max.in.flight).
Status checkProperty(const std::string& property, const Setting& setting) {
  const std::string quoted = "kafka.properties.\"" + property + "\"";
  std::string reason = protectedPropertyReason(property);
  if (!reason.empty()) return invalidArgument(setting.origin + ": " + quoted + " cannot be set: " + reason);
  if (property == "max.in.flight" || property == "max.in.flight.requests.per.connection") {
    uint64_t value = 0;
    const char* end = setting.value.data() + setting.value.size();
    auto [ptr, ec] = std::from_chars(setting.value.data(), end, value);
    if (ec != std::errc() || ptr != end || value < 1 || value > 5) {
      return invalidArgument(setting.origin + ": " + quoted +
                             " must be from 1 to 5: the idempotent producer keeps outputs in order only up to 5 "
                             "requests in flight, got '" +
                             setting.value + "'");
    }
  }
  return Status::ok();
}

// The producer refuses a record larger than its message.max.bytes; every output must fit.
Status checkOutputFits(const Config& config, const Settings& settings) {
  uint64_t message_max = kDefaultMessageMaxBytes;
  std::string source = "librdkafka's default";
  auto set = config.kafka.properties.find("message.max.bytes");
  if (set != config.kafka.properties.end()) {
    const std::string& text = set->second;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, message_max);
    if (ec != std::errc() || ptr != end) {
      const Setting& setting = settings.at(std::string(kPropertiesPrefix) + "message.max.bytes");
      return invalidArgument(setting.origin + ": kafka.properties.\"message.max.bytes\" must be a whole number, got '" +
                             text + "'");
    }
    source = "kafka.properties.\"message.max.bytes\"";
  }
  const uint64_t needed = config.limits.max_output_bytes + kOutputRecordMargin;
  if (needed > message_max) {
    return invalidArgument("limits.max_output_bytes (" + std::to_string(config.limits.max_output_bytes) + ") plus " +
                           std::to_string(kOutputRecordMargin) + " bytes for keys and headers is " +
                           std::to_string(needed) + ", more than the producer's message.max.bytes (" +
                           std::to_string(message_max) + ", " + source +
                           "): lower limits.max_output_bytes or raise kafka.properties.\"message.max.bytes\" "
                           "(and max.message.bytes on the output topics, see docs/operations.md \"Message sizes\")");
  }
  return Status::ok();
}

// Keys that no longer exist, with what replaced them.
const std::map<std::string, std::string>& removedKeys() {
  static const std::map<std::string, std::string> keys = {
      {"worker.upload_root",
       "was removed: use uploads.file_roots (comma-separated folders that file:// upload locations may name "
       "files under; empty refuses every file:// location)"},
  };
  return keys;
}

Expected<Config> build(const Settings& settings) {
  Config config;
  for (const auto& [key, setting] : settings) {
    if (auto removed = removedKeys().find(key); removed != removedKeys().end()) {
      return invalidArgument(setting.origin + ": " + key + " " + removed->second);
    }
    if (key.starts_with(kPropertiesPrefix)) {
      std::string property = key.substr(kPropertiesPrefix.size());
      RESTACK_RETURN_IF_ERROR(checkProperty(property, setting));
      config.kafka.properties[property] = setting.value;
      continue;
    }
    auto known = knownKeys().find(key);
    if (known == knownKeys().end()) {
      return invalidArgument(setting.origin + ": unknown key '" + key +
                             "' (see config/restack.example.yaml for every key)");
    }
    RESTACK_RETURN_IF_ERROR(known->second(key, setting, config));
  }
  if (config.kafka.brokers.empty()) {
    return invalidArgument("kafka.brokers is required (set it in the file or RESTACK_KAFKA__BROKERS)");
  }
  if (config.store.path.empty()) return invalidArgument("store.path must not be empty");
  if (config.uploads.retry_max_backoff_ms < config.uploads.retry_initial_backoff_ms) {
    return invalidArgument("uploads.retry_max_backoff_ms (" + std::to_string(config.uploads.retry_max_backoff_ms) +
                           ") must not be below uploads.retry_initial_backoff_ms (" +
                           std::to_string(config.uploads.retry_initial_backoff_ms) + ")");
  }
  const Topics& t = config.kafka.topics;
  if (t.pending == t.events || t.pending == t.symbolicated || t.pending == t.fingerprints || t.pending == t.dlq ||
      t.pending == t.symbols || t.pending == t.symbols_shared) {
    return invalidArgument("kafka.topics.pending must be a topic of its own ('" + t.pending + "')");
  }
  for (const std::string* other :
       {&t.events, &t.symbols, &t.symbols_shared, &t.symbolicated, &t.fingerprints, &t.dlq, &t.pending}) {
    if (t.symbols_missing == *other) {
      return invalidArgument("kafka.topics.symbols_missing must be a topic of its own ('" + t.symbols_missing + "')");
    }
  }
  if (t.events == t.symbolicated || t.events == t.dlq || t.events == t.fingerprints) {
    return invalidArgument("kafka.topics: the events topic must differ from the output topics ('" + t.events + "')");
  }
  RESTACK_RETURN_IF_ERROR(checkOutputFits(config, settings));
  return config;
}

struct ProtectedProperty {
  std::string_view name;
  std::string_view reason;
};

// Properties Restack sets itself because its guarantees (docs/design.md §2: nothing lost, keys where
// the Java client puts them, offsets committed after the outputs) depend on their values.
constexpr ProtectedProperty kProtectedProperties[] = {
    {"bootstrap.servers", "set kafka.brokers instead"},
    {"metadata.broker.list", "set kafka.brokers instead"},
    {"group.id", "set kafka.group_id instead"},
    {"partition.assignment.strategy", "set kafka.assignment_strategy instead"},
    {"session.timeout.ms", "set kafka.session_timeout_ms instead"},
    {"heartbeat.interval.ms", "Restack derives it from kafka.session_timeout_ms (a tenth of it)"},
    {"enable.auto.commit", "Restack commits an input offset only after every output it produced was acknowledged"},
    {"auto.commit.enable", "Restack commits an input offset only after every output it produced was acknowledged"},
    {"enable.auto.offset.store",
     "Restack commits an input offset only after every output it produced was acknowledged"},
    {"offset.store.method", "Restack commits offsets to the group on the brokers itself"},
    {"auto.offset.reset", "a new consumer group starts at the earliest offset so that no event is skipped"},
    {"enable.partition.eof", "the symbols consumer relies on end-of-partition events and sets it itself"},
    {"isolation.level",
     "Restack reads committed records only (read_committed): aborted transactions must not be restored"},
    {"enable.idempotence", "the producer is idempotent so that a retry never duplicates or reorders an output"},
    {"acks", "outputs are acknowledged by every in-sync replica (acks=all) before offsets are committed"},
    {"request.required.acks",
     "outputs are acknowledged by every in-sync replica (acks=all) before offsets are committed"},
    {"transactional.id", "set kafka.transactional_id instead (used with kafka.delivery=exactly_once)"},
    {"partitioner", "keys must land on the partitions the Java client picks (murmur2_random)"},
    {"queuing.strategy", "outputs must be sent in order (fifo)"},
};

}  // namespace

std::string protectedPropertyReason(std::string_view name) {
  for (const ProtectedProperty& property : kProtectedProperties) {
    if (property.name == name) return std::string(property.reason);
  }
  return {};
}

bool isSecretProperty(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view part : {"password", "secret", "token", "jaas", "credential", "private", "oauthbearer"}) {
    if (lower.find(part) != std::string::npos) return true;
  }
  return lower.starts_with("ssl.key") || lower.starts_with("ssl_key");
}

Expected<Config> parseConfig(const std::string& yaml_text, const std::string& source_name,
                             const std::vector<std::string>& environment) {
  Settings settings;
  try {
    YAML::Node root = YAML::Load(yaml_text);
    if (!root.IsNull() && !root.IsMap()) {
      return invalidArgument(source_name + ": the configuration must be a YAML mapping of sections");
    }
    RESTACK_RETURN_IF_ERROR(flatten(root, "", source_name, settings));
  } catch (const YAML::Exception& error) {
    return invalidArgument(source_name + ":" + std::to_string(error.mark.line + 1) + ": invalid YAML: " + error.msg);
  }
  applyEnvironment(environment, settings);
  return build(settings);
}

Expected<Config> loadConfig(const std::string& path, const std::vector<std::string>& environment) {
  std::ifstream in(path);
  if (!in) return invalidArgument("cannot read the configuration file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parseConfig(text.str(), path, environment);
}

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> entries;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    size_t first = list.find_first_not_of(" \t", start);
    if (first != std::string::npos && first < end) {
      size_t last = list.find_last_not_of(" \t", end - 1);
      entries.push_back(list.substr(first, last - first + 1));
    }
    start = end + 1;
  }
  return entries;
}

std::vector<std::string> processEnvironment() {
  std::vector<std::string> out;
  for (char** entry = environ; entry && *entry; ++entry) out.emplace_back(*entry);
  return out;
}

std::optional<uint64_t> Cache::megabytesFor(std::string_view resolver) const {
  if (resolver == "native") return native_mb;
  if (resolver == "proguard") return proguard_mb;
  if (resolver == "sourcemap") return sourcemap_mb;
  return std::nullopt;
}

}  // namespace restack::config
