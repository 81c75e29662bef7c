#include <gtest/gtest.h>

#include <fstream>

#include "config/config.h"

namespace restack::config {
namespace {

TEST(Config, DefaultsAndFileValues) {
  auto config = parseConfig(R"(
kafka:
  brokers: "k1:9092,k2:9092"
  group_id: shop-restack
  topics: {events: raw.events}
  properties:
    security.protocol: SASL_SSL
    sasl.mechanism: PLAIN
store: {path: /data/store, block_cache_mb: 64}
worker: {threads: 4}
)",
                            "restack.yaml", {});
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->kafka.brokers, "k1:9092,k2:9092");
  EXPECT_EQ(config->kafka.group_id, "shop-restack");
  EXPECT_EQ(config->kafka.topics.events, "raw.events");
  EXPECT_EQ(config->kafka.topics.symbols, "restack.symbols");  // default kept
  EXPECT_EQ(config->kafka.properties.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(config->store.block_cache_mb, 64u);
  EXPECT_EQ(config->worker.threads, 4u);
  EXPECT_EQ(config->worker.batch_size, 1000u);
}

TEST(Config, EnvironmentOverridesTheFile) {
  auto config = parseConfig(
      "kafka: {brokers: file:9092}\n", "restack.yaml",
      {"RESTACK_KAFKA__BROKERS=env:9092", "RESTACK_WORKER__BATCH_SIZE=10", "RESTACK_WORKER__MIN_COMMIT_INTERVAL_MS=25",
       "RESTACK_KAFKA__PROPERTIES__SASL_USERNAME=svc", "PATH=/usr/bin", "RESTACK_CONFIG=x"});
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->kafka.brokers, "env:9092");
  EXPECT_EQ(config->worker.batch_size, 10u);
  EXPECT_EQ(config->worker.min_commit_interval_ms, 25u);
  EXPECT_EQ(config->kafka.properties.at("sasl.username"), "svc");
}

TEST(Config, ErrorsNameTheKeyTheLineAndTheProblem) {
  auto unknown = parseConfig("kafka:\n  brokers: a:1\n  brokerz: b\n", "restack.yaml", {});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("restack.yaml:3"), std::string::npos) << unknown.error().message();
  EXPECT_NE(unknown.error().message().find("kafka.brokerz"), std::string::npos);

  auto bad_number = parseConfig("kafka: {brokers: a:1}\nworker: {threads: many}\n", "restack.yaml", {});
  ASSERT_FALSE(bad_number);
  EXPECT_NE(bad_number.error().message().find("worker.threads"), std::string::npos);
  EXPECT_NE(bad_number.error().message().find("'many'"), std::string::npos);

  auto bad_env = parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {"RESTACK_WORKER__THREADS=0"});
  ASSERT_FALSE(bad_env);
  EXPECT_NE(bad_env.error().message().find("RESTACK_WORKER__THREADS"), std::string::npos);

  auto missing = parseConfig("store: {path: /x}\n", "restack.yaml", {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("kafka.brokers is required"), std::string::npos);

  auto choice = parseConfig("kafka: {brokers: a:1, assignment_strategy: sticky}\n", "restack.yaml", {});
  ASSERT_FALSE(choice);
  EXPECT_NE(choice.error().message().find("cooperative-sticky"), std::string::npos);

  auto yaml = parseConfig("kafka: [brokers\n", "restack.yaml", {});
  ASSERT_FALSE(yaml);
  EXPECT_NE(yaml.error().message().find("invalid YAML"), std::string::npos);

  auto list = parseConfig("kafka: {brokers: [a, b]}\n", "restack.yaml", {});
  ASSERT_FALSE(list);
  EXPECT_NE(list.error().message().find("single value"), std::string::npos);

  auto same_topic = parseConfig("kafka: {brokers: a:1, topics: {events: x, symbolicated: x}}\n", "restack.yaml", {});
  ASSERT_FALSE(same_topic);
}

// Every property Restack's guarantees depend on is refused, from the file and from the
// environment, with an error naming it.
TEST(Config, ProtectedKafkaPropertiesAreRefusedByName) {
  const std::vector<std::string> protected_names = {"bootstrap.servers",
                                                    "metadata.broker.list",
                                                    "group.id",
                                                    "partition.assignment.strategy",
                                                    "session.timeout.ms",
                                                    "heartbeat.interval.ms",
                                                    "enable.auto.commit",
                                                    "auto.commit.enable",
                                                    "enable.auto.offset.store",
                                                    "offset.store.method",
                                                    "auto.offset.reset",
                                                    "enable.partition.eof",
                                                    "isolation.level",
                                                    "enable.idempotence",
                                                    "acks",
                                                    "request.required.acks",
                                                    "transactional.id",
                                                    "partitioner",
                                                    "queuing.strategy"};
  for (const std::string& name : protected_names) {
    EXPECT_FALSE(protectedPropertyReason(name).empty()) << name;
    auto from_file =
        parseConfig("kafka:\n  brokers: a:1\n  properties:\n    " + name + ": \"v-4711\"\n", "restack.yaml", {});
    ASSERT_FALSE(from_file) << name;
    const std::string& message = from_file.error().message();
    EXPECT_NE(message.find("kafka.properties.\"" + name + "\""), std::string::npos) << message;
    EXPECT_NE(message.find("restack.yaml:4"), std::string::npos) << message;
    EXPECT_EQ(message.find("v-4711"), std::string::npos) << message;
  }
  // RESTACK_KAFKA__PROPERTIES__ENABLE_AUTO_COMMIT=true -> kafka.properties."enable.auto.commit".
  auto from_env =
      parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {"RESTACK_KAFKA__PROPERTIES__ENABLE_AUTO_COMMIT=true"});
  ASSERT_FALSE(from_env);
  EXPECT_NE(from_env.error().message().find("kafka.properties.\"enable.auto.commit\""), std::string::npos);
  EXPECT_NE(from_env.error().message().find("RESTACK_KAFKA__PROPERTIES__ENABLE_AUTO_COMMIT"), std::string::npos);
  auto acks_env = parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {"RESTACK_KAFKA__PROPERTIES__ACKS=1"});
  ASSERT_FALSE(acks_env);
  EXPECT_NE(acks_env.error().message().find("\"acks\""), std::string::npos);

  // Pass-through properties that do not touch the guarantees load as before.
  auto allowed = parseConfig(R"(
kafka:
  brokers: a:1
  properties: {security.protocol: SASL_SSL, sasl.password: "hunter2", max.in.flight: 5, linger.ms: 20,
               group.instance.id: worker-0}
)",
                             "restack.yaml", {});
  ASSERT_TRUE(allowed) << allowed.error().message();
  EXPECT_EQ(allowed->kafka.properties.at("max.in.flight"), "5");

  // More than 5 requests in flight breaks the idempotent producer's ordering.
  for (const char* name : {"max.in.flight", "max.in.flight.requests.per.connection"}) {
    auto too_many = parseConfig(std::string("kafka: {brokers: a:1, properties: {") + name + ": 6}}\n", "r.yaml", {});
    ASSERT_FALSE(too_many) << name;
    EXPECT_NE(too_many.error().message().find(std::string("\"") + name + "\""), std::string::npos);
    EXPECT_NE(too_many.error().message().find("1 to 5"), std::string::npos);
  }
}

TEST(Config, SecretPropertyNamesAreRecognised) {
  for (const char* name : {"sasl.password", "ssl.key.password", "ssl.key.pem", "ssl.keystore.password",
                           "sasl.jaas.config", "sasl.oauthbearer.client.secret", "sasl.oauthbearer.config",
                           "sasl.oauthbearer.token.endpoint.url", "SSL.KEY.LOCATION", "my.api.token"}) {
    EXPECT_TRUE(isSecretProperty(name)) << name;
  }
  for (const char* name :
       {"security.protocol", "sasl.username", "sasl.mechanism", "ssl.ca.location", "message.max.bytes", "linger.ms"}) {
    EXPECT_FALSE(isSecretProperty(name)) << name;
  }
}

TEST(Config, OutputsMustFitTheProducersMessageMaxBytes) {
  auto defaults = parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {});
  ASSERT_TRUE(defaults) << defaults.error().message();
  EXPECT_EQ(defaults->limits.max_output_bytes, 900000u);
  EXPECT_LE(defaults->limits.max_output_bytes + kOutputRecordMargin, kDefaultMessageMaxBytes);

  // Above librdkafka's default message.max.bytes: refused, naming both keys.
  auto too_big = parseConfig("kafka: {brokers: a:1}\nlimits: {max_output_bytes: 990000}\n", "restack.yaml", {});
  ASSERT_FALSE(too_big);
  const std::string& message = too_big.error().message();
  EXPECT_NE(message.find("limits.max_output_bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("message.max.bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("1000000"), std::string::npos) << message;

  // Exactly at the bound: accepted.
  auto at_bound = parseConfig("kafka: {brokers: a:1}\nlimits: {max_output_bytes: " +
                                  std::to_string(kDefaultMessageMaxBytes - kOutputRecordMargin) + "}\n",
                              "restack.yaml", {});
  EXPECT_TRUE(at_bound) << at_bound.error().message();

  // A raised message.max.bytes lets a larger limit through; a lowered one refuses the default.
  auto raised = parseConfig(
      "kafka: {brokers: a:1, properties: {message.max.bytes: 2000000}}\nlimits: {max_output_bytes: 1900000}\n",
      "restack.yaml", {});
  EXPECT_TRUE(raised) << raised.error().message();
  auto lowered =
      parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {"RESTACK_KAFKA__PROPERTIES__MESSAGE_MAX_BYTES=500000"});
  ASSERT_FALSE(lowered);
  EXPECT_NE(lowered.error().message().find("kafka.properties.\"message.max.bytes\""), std::string::npos)
      << lowered.error().message();
  auto garbage = parseConfig("kafka: {brokers: a:1, properties: {message.max.bytes: lots}}\n", "restack.yaml", {});
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().message().find("message.max.bytes"), std::string::npos);
}

TEST(Config, BindAddressIsAnIpLiteral) {
  auto defaults = parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {});
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->observability.bind_address, "0.0.0.0");
  for (const char* address : {"127.0.0.1", "::1", "::", "10.1.2.3"}) {
    auto config = parseConfig(
        std::string("kafka: {brokers: a:1}\nobservability: {bind_address: \"") + address + "\"}\n", "restack.yaml", {});
    ASSERT_TRUE(config) << address << ": " << config.error().message();
    EXPECT_EQ(config->observability.bind_address, address);
  }
  auto bad = parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {"RESTACK_OBSERVABILITY__BIND_ADDRESS=localhost"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("observability.bind_address"), std::string::npos);
}

TEST(Config, UploadRetryKeys) {
  auto defaults = parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {});
  ASSERT_TRUE(defaults) << defaults.error().message();
  EXPECT_EQ(defaults->uploads.retry_initial_backoff_ms, 5000u);
  EXPECT_EQ(defaults->uploads.retry_max_backoff_ms, 300000u);
  EXPECT_EQ(defaults->uploads.retry_deadline_s, 86400u);
  EXPECT_EQ(defaults->uploads.catch_up_stall_s, 60u);

  auto set = parseConfig(
      "kafka: {brokers: a:1}\nuploads: {retry_initial_backoff_ms: 100, retry_max_backoff_ms: 1000, "
      "retry_deadline_s: 600, catch_up_stall_s: 5}\n",
      "restack.yaml", {"RESTACK_UPLOADS__RETRY_DEADLINE_S=700"});
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_EQ(set->uploads.retry_initial_backoff_ms, 100u);
  EXPECT_EQ(set->uploads.retry_max_backoff_ms, 1000u);
  EXPECT_EQ(set->uploads.retry_deadline_s, 700u);
  EXPECT_EQ(set->uploads.catch_up_stall_s, 5u);

  auto inverted =
      parseConfig("kafka: {brokers: a:1}\nuploads: {retry_initial_backoff_ms: 2000, retry_max_backoff_ms: 1000}\n",
                  "restack.yaml", {});
  ASSERT_FALSE(inverted);
  EXPECT_NE(inverted.error().message().find("uploads.retry_max_backoff_ms"), std::string::npos);
  auto zero = parseConfig("kafka: {brokers: a:1}\nuploads: {retry_deadline_s: 0}\n", "restack.yaml", {});
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message().find("uploads.retry_deadline_s"), std::string::npos);
}

TEST(Config, SymbolDemandTopicAndBounds) {
  auto defaults = parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {});
  ASSERT_TRUE(defaults) << defaults.error().message();
  EXPECT_EQ(defaults->kafka.topics.symbols_missing, "restack.symbols.missing");
  EXPECT_EQ(defaults->symbols_missing.flush_interval_ms, 10000u);
  EXPECT_EQ(defaults->symbols_missing.max_keys, 100000u);

  auto set = parseConfig(
      "kafka: {brokers: a:1, topics: {symbols_missing: demand}}\n"
      "symbols_missing: {flush_interval_ms: 250, max_keys: 7}\n",
      "restack.yaml", {"RESTACK_SYMBOLS_MISSING__MAX_KEYS=9"});
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_EQ(set->kafka.topics.symbols_missing, "demand");
  EXPECT_EQ(set->symbols_missing.flush_interval_ms, 250u);
  EXPECT_EQ(set->symbols_missing.max_keys, 9u);

  auto zero = parseConfig("kafka: {brokers: a:1}\nsymbols_missing: {max_keys: 0}\n", "restack.yaml", {});
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message().find("symbols_missing.max_keys"), std::string::npos) << zero.error().message();
  auto shared = parseConfig("kafka: {brokers: a:1, topics: {symbols_missing: restack.pending}}\n", "restack.yaml", {});
  ASSERT_FALSE(shared);
  EXPECT_NE(shared.error().message().find("kafka.topics.symbols_missing must be a topic of its own"), std::string::npos)
      << shared.error().message();
}

TEST(Config, DeliveryPendingTopicAndPendingBounds) {
  auto defaults = parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {});
  ASSERT_TRUE(defaults) << defaults.error().message();
  EXPECT_EQ(defaults->kafka.delivery, "exactly_once");
  EXPECT_EQ(defaults->kafka.transactional_id, "");
  EXPECT_EQ(defaults->kafka.topics.pending, "restack.pending");
  EXPECT_EQ(defaults->pending.max_events, 100000u);
  EXPECT_EQ(defaults->pending.max_bytes, 1ull << 30);
  EXPECT_EQ(defaults->pending.max_age_s, 72u * 3600);
  EXPECT_EQ(defaults->pending.replay_stall_s, 60u);

  auto set = parseConfig(
      "kafka: {brokers: a:1, delivery: at_least_once, transactional_id: restack-7, topics: {pending: p}}\n"
      "pending: {max_events: 5, max_bytes: 4096, max_age_s: 600, replay_stall_s: 5}\n",
      "restack.yaml", {"RESTACK_PENDING__MAX_EVENTS=9"});
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_EQ(set->kafka.delivery, "at_least_once");
  EXPECT_EQ(set->kafka.transactional_id, "restack-7");
  EXPECT_EQ(set->kafka.topics.pending, "p");
  EXPECT_EQ(set->pending.max_events, 9u);
  EXPECT_EQ(set->pending.max_bytes, 4096u);
  EXPECT_EQ(set->pending.max_age_s, 600u);
  EXPECT_EQ(set->pending.replay_stall_s, 5u);

  auto bad_mode = parseConfig("kafka: {brokers: a:1, delivery: twice}\n", "restack.yaml", {});
  ASSERT_FALSE(bad_mode);
  EXPECT_NE(bad_mode.error().message().find("kafka.delivery must be one of exactly_once, at_least_once"),
            std::string::npos)
      << bad_mode.error().message();
  auto shared_topic = parseConfig("kafka: {brokers: a:1, topics: {pending: restack.events.raw}}\n", "restack.yaml", {});
  ASSERT_FALSE(shared_topic);
  EXPECT_NE(shared_topic.error().message().find("kafka.topics.pending"), std::string::npos);
  auto short_age = parseConfig("kafka: {brokers: a:1}\npending: {max_age_s: 5}\n", "restack.yaml", {});
  ASSERT_FALSE(short_age);
}

TEST(Config, TheExampleFileIsValid) {
  auto config = loadConfig(std::string(RESTACK_SOURCE_DIR) + "/config/restack.example.yaml", {});
  ASSERT_TRUE(config) << config.error().message();
  auto missing = loadConfig("/nonexistent/restack.yaml", {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("/nonexistent/restack.yaml"), std::string::npos);
}

}  // namespace
}  // namespace restack::config
