// The chart and the worker agree: the restack.yaml that helm/restack renders, together with the
// environment its StatefulSet sets, loads through the worker's own config loader
// (config/config.h) with the values the chart promises, and the chart's defaults are the
// loader's defaults. Needs Helm from scripts/setup.sh (scripts/setup.d/helm.sh).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "config/config.h"

namespace restack {
namespace {

namespace fs = std::filesystem;

const fs::path kHelm = fs::path(RESTACK_DEPS_DIR) / "helm" / "bin" / "helm";
const fs::path kChart = fs::path(RESTACK_SOURCE_DIR) / "helm" / "restack";

struct Rendered {
  std::string restack_yaml;              // the ConfigMap's restack.yaml
  std::vector<std::string> environment;  // the container's env as "NAME=VALUE"
  YAML::Node container;
  std::string error;
};

// Renders the chart and resolves the container's environment as Kubernetes would for pod
// "restack-0": fieldRef metadata.name -> the pod name, secretKeyRef -> "secret:<name>/<key>".
Rendered render(const std::string& helm_args) {
  Rendered rendered;
  if (!fs::exists(kHelm)) {
    rendered.error = kHelm.string() + " is missing; run scripts/setup.sh (scripts/setup.d/helm.sh)";
    return rendered;
  }
  const std::string command =
      "'" + kHelm.string() + "' template restack '" + kChart.string() + "' " + helm_args + " 2>&1";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  size_t n;
  while (pipe && (n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pipe ? pclose(pipe) : -1;
  if (status != 0) {
    rendered.error = "helm template failed:\n" + output;
    return rendered;
  }
  for (const YAML::Node& document : YAML::LoadAll(output)) {
    if (!document.IsMap()) continue;
    const std::string kind = document["kind"].as<std::string>();
    // The worker's ConfigMap; the chart may also render the Grafana dashboard's.
    if (kind == "ConfigMap" && document["data"]["restack.yaml"])
      rendered.restack_yaml = document["data"]["restack.yaml"].as<std::string>();
    if (kind != "StatefulSet") continue;
    rendered.container = document["spec"]["template"]["spec"]["containers"][0];
    for (const YAML::Node& env : rendered.container["env"]) {
      const std::string name = env["name"].as<std::string>();
      if (env["value"]) {
        rendered.environment.push_back(name + "=" + env["value"].as<std::string>());
      } else if (env["valueFrom"]["fieldRef"]) {
        const std::string field = env["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>();
        rendered.environment.push_back(name + "=" + (field == "metadata.name" ? "restack-0" : "crash"));
      } else if (env["valueFrom"]["secretKeyRef"]) {
        const YAML::Node ref = env["valueFrom"]["secretKeyRef"];
        rendered.environment.push_back(name + "=secret:" + ref["name"].as<std::string>() + "/" +
                                       ref["key"].as<std::string>());
      }
    }
  }
  if (rendered.restack_yaml.empty()) rendered.error = "no ConfigMap with restack.yaml rendered";
  return rendered;
}

TEST(HelmChartConfig, EveryOptionLoadsThroughTheWorkersConfigLoader) {
  Rendered rendered = render("-f '" + (kChart / "ci" / "test-values.yaml").string() + "'");
  ASSERT_TRUE(rendered.error.empty()) << rendered.error;
  auto loaded = config::parseConfig(rendered.restack_yaml, "restack.yaml", rendered.environment);
  ASSERT_TRUE(loaded) << loaded.error().message() << "\n" << rendered.restack_yaml;
  const config::Config& config = *loaded;

  EXPECT_EQ(config.kafka.brokers, "kafka-0.kafka:9093,kafka-1.kafka:9093");
  const auto& properties = config.kafka.properties;
  auto property = [&](const std::string& name) {
    auto found = properties.find(name);
    return found == properties.end() ? std::string("<unset>") : found->second;
  };
  EXPECT_EQ(property("security.protocol"), "SASL_SSL");
  EXPECT_EQ(property("sasl.mechanism"), "SCRAM-SHA-512");
  // Credentials come from the Secret through the environment, never from the ConfigMap.
  EXPECT_EQ(property("sasl.username"), "secret:restack-kafka-credentials/username");
  EXPECT_EQ(property("sasl.password"), "secret:restack-kafka-credentials/password");
  EXPECT_EQ(rendered.restack_yaml.find("sasl.password"), std::string::npos);
  // TLS files where the chart mounts the Secrets.
  EXPECT_EQ(property("ssl.ca.location"), "/etc/restack/kafka-ca/ca.crt");
  EXPECT_EQ(property("ssl.certificate.location"), "/etc/restack/kafka-client/tls.crt");
  EXPECT_EQ(property("ssl.key.location"), "/etc/restack/kafka-client/tls.key");
  // Static membership: the pod name is the group instance id.
  EXPECT_EQ(property("group.instance.id"), "restack-0");
  // envOverrides reach the loader as RESTACK_<SECTION>__<KEY>.
  EXPECT_EQ(config.worker.threads, 4u);
  // The upload location allowlists, as comma-separated strings.
  EXPECT_EQ(config.uploads.file_roots, "/mnt/symbols,/srv/uploads");
  EXPECT_EQ(config.uploads.http_hosts, "symbols.example.com,*.storage.example.com");
  EXPECT_TRUE(config.uploads.allow_plain_http);
  EXPECT_EQ(config.uploads.allowed_networks, "10.1.0.0/16,fd00::/8");
  EXPECT_EQ(config.uploads.max_redirects, 1u);

  // The probes and the container port follow observability.http_port; the store is on the PVC.
  EXPECT_EQ(rendered.container["ports"][0]["containerPort"].as<int>(), config.observability.http_port);
  bool store_on_volume = false;
  for (const YAML::Node& mount : rendered.container["volumeMounts"]) {
    if (mount["name"].as<std::string>() == "store") {
      store_on_volume = config.store.path.starts_with(mount["mountPath"].as<std::string>() + "/");
    }
  }
  EXPECT_TRUE(store_on_volume) << config.store.path;
}

TEST(HelmChartConfig, ChartDefaultsAreTheLoadersDefaults) {
  Rendered rendered = render("--set config.kafka.brokers=kafka:9092 --set staticMembership=false");
  ASSERT_TRUE(rendered.error.empty()) << rendered.error;
  auto loaded = config::parseConfig(rendered.restack_yaml, "restack.yaml", rendered.environment);
  ASSERT_TRUE(loaded) << loaded.error().message() << "\n" << rendered.restack_yaml;
  const config::Config& chart = *loaded;
  const config::Config defaults;

  EXPECT_EQ(chart.kafka.group_id, defaults.kafka.group_id);
  EXPECT_EQ(chart.kafka.topics.events, defaults.kafka.topics.events);
  EXPECT_EQ(chart.kafka.topics.symbols, defaults.kafka.topics.symbols);
  EXPECT_EQ(chart.kafka.topics.symbols_shared, defaults.kafka.topics.symbols_shared);
  EXPECT_EQ(chart.kafka.topics.symbolicated, defaults.kafka.topics.symbolicated);
  EXPECT_EQ(chart.kafka.topics.fingerprints, defaults.kafka.topics.fingerprints);
  EXPECT_EQ(chart.kafka.topics.dlq, defaults.kafka.topics.dlq);
  EXPECT_EQ(chart.kafka.topics.pending, defaults.kafka.topics.pending);
  EXPECT_EQ(chart.kafka.topics.symbols_missing, defaults.kafka.topics.symbols_missing);
  EXPECT_EQ(chart.kafka.delivery, defaults.kafka.delivery);
  EXPECT_EQ(chart.kafka.transactional_id, defaults.kafka.transactional_id);
  EXPECT_EQ(chart.kafka.assignment_strategy, defaults.kafka.assignment_strategy);
  EXPECT_EQ(chart.kafka.session_timeout_ms, defaults.kafka.session_timeout_ms);
  EXPECT_TRUE(chart.kafka.properties.empty());
  EXPECT_EQ(chart.store.path, defaults.store.path);
  EXPECT_EQ(chart.store.block_cache_mb, defaults.store.block_cache_mb);
  EXPECT_EQ(chart.cache.native_mb, defaults.cache.native_mb);
  EXPECT_EQ(chart.cache.proguard_mb, defaults.cache.proguard_mb);
  EXPECT_EQ(chart.cache.sourcemap_mb, defaults.cache.sourcemap_mb);
  EXPECT_EQ(chart.limits.max_event_bytes, defaults.limits.max_event_bytes);
  EXPECT_EQ(chart.limits.max_output_bytes, defaults.limits.max_output_bytes);
  EXPECT_EQ(chart.limits.max_threads, defaults.limits.max_threads);
  EXPECT_EQ(chart.limits.max_frames_per_thread, defaults.limits.max_frames_per_thread);
  EXPECT_EQ(chart.limits.max_upload_bytes, defaults.limits.max_upload_bytes);
  EXPECT_EQ(chart.limits.max_decompression_ratio, defaults.limits.max_decompression_ratio);
  EXPECT_EQ(chart.limits.max_sourcemap_bytes, defaults.limits.max_sourcemap_bytes);
  EXPECT_EQ(chart.worker.threads, defaults.worker.threads);
  EXPECT_EQ(chart.worker.batch_size, defaults.worker.batch_size);
  EXPECT_EQ(chart.worker.batch_linger_ms, defaults.worker.batch_linger_ms);
  EXPECT_EQ(chart.worker.min_commit_interval_ms, defaults.worker.min_commit_interval_ms);
  EXPECT_EQ(chart.uploads.file_roots, defaults.uploads.file_roots);
  EXPECT_EQ(chart.uploads.http_hosts, defaults.uploads.http_hosts);
  EXPECT_EQ(chart.uploads.allow_plain_http, defaults.uploads.allow_plain_http);
  EXPECT_EQ(chart.uploads.allowed_networks, defaults.uploads.allowed_networks);
  EXPECT_EQ(chart.uploads.max_redirects, defaults.uploads.max_redirects);
  EXPECT_EQ(chart.uploads.connect_timeout_ms, defaults.uploads.connect_timeout_ms);
  EXPECT_EQ(chart.uploads.total_timeout_ms, defaults.uploads.total_timeout_ms);
  EXPECT_EQ(chart.uploads.low_speed_bytes_per_s, defaults.uploads.low_speed_bytes_per_s);
  EXPECT_EQ(chart.uploads.low_speed_time_s, defaults.uploads.low_speed_time_s);
  EXPECT_EQ(chart.uploads.fetch_threads, defaults.uploads.fetch_threads);
  EXPECT_EQ(chart.uploads.fetch_wait_ms, defaults.uploads.fetch_wait_ms);
  // Upload retries.
  EXPECT_EQ(chart.uploads.retry_initial_backoff_ms, defaults.uploads.retry_initial_backoff_ms);
  EXPECT_EQ(chart.uploads.retry_max_backoff_ms, defaults.uploads.retry_max_backoff_ms);
  EXPECT_EQ(chart.uploads.retry_deadline_s, defaults.uploads.retry_deadline_s);
  EXPECT_EQ(chart.uploads.catch_up_stall_s, defaults.uploads.catch_up_stall_s);
  EXPECT_EQ(chart.pending.max_events, defaults.pending.max_events);
  EXPECT_EQ(chart.pending.max_bytes, defaults.pending.max_bytes);
  EXPECT_EQ(chart.pending.max_age_s, defaults.pending.max_age_s);
  EXPECT_EQ(chart.pending.replay_stall_s, defaults.pending.replay_stall_s);
  EXPECT_EQ(chart.pending.await_system_symbols, defaults.pending.await_system_symbols);
  EXPECT_EQ(chart.symbols_missing.flush_interval_ms, defaults.symbols_missing.flush_interval_ms);
  EXPECT_EQ(chart.symbols_missing.max_keys, defaults.symbols_missing.max_keys);
  EXPECT_EQ(chart.observability.http_port, defaults.observability.http_port);
  EXPECT_EQ(chart.observability.bind_address, defaults.observability.bind_address);
  EXPECT_EQ(chart.observability.log_level, defaults.observability.log_level);
  // The one deliberate difference: in a cluster, logs go to a collector.
  EXPECT_EQ(chart.observability.log_format, "json");
  EXPECT_EQ(chart.grouping_rules, defaults.grouping_rules);
}

}  // namespace
}  // namespace restack
