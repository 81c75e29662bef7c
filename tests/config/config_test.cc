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
  EXPECT_EQ(config->worker.batch_size, 500u);
}

TEST(Config, EnvironmentOverridesTheFile) {
  auto config = parseConfig("kafka: {brokers: file:9092}\n", "restack.yaml",
                            {"RESTACK_KAFKA__BROKERS=env:9092", "RESTACK_WORKER__BATCH_SIZE=10",
                             "RESTACK_KAFKA__PROPERTIES__SASL_USERNAME=svc", "PATH=/usr/bin", "RESTACK_CONFIG=x"});
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->kafka.brokers, "env:9092");
  EXPECT_EQ(config->worker.batch_size, 10u);
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

TEST(Config, DeliveryPendingTopicAndPendingBounds) {
  auto defaults = parseConfig("kafka: {brokers: a:1}\n", "restack.yaml", {});
  ASSERT_TRUE(defaults) << defaults.error().message();
  EXPECT_EQ(defaults->kafka.delivery, "exactly_once");
  EXPECT_EQ(defaults->kafka.transactional_id, "");
  EXPECT_EQ(defaults->kafka.topics.pending, "restack.pending");
  EXPECT_EQ(defaults->pending.max_events, 100000u);
  EXPECT_EQ(defaults->pending.max_bytes, 1ull << 30);
  EXPECT_EQ(defaults->pending.max_age_s, 72u * 3600);

  auto set = parseConfig(
      "kafka: {brokers: a:1, delivery: at_least_once, transactional_id: restack-7, topics: {pending: p}}\n"
      "pending: {max_events: 5, max_bytes: 4096, max_age_s: 600}\n",
      "restack.yaml", {"RESTACK_PENDING__MAX_EVENTS=9"});
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_EQ(set->kafka.delivery, "at_least_once");
  EXPECT_EQ(set->kafka.transactional_id, "restack-7");
  EXPECT_EQ(set->kafka.topics.pending, "p");
  EXPECT_EQ(set->pending.max_events, 9u);
  EXPECT_EQ(set->pending.max_bytes, 4096u);
  EXPECT_EQ(set->pending.max_age_s, 600u);

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
