// Client properties: Restack's own settings win over pass-through ones, the operator's win over
// Restack's defaults, and a refused secret never shows its value.
#include "worker/kafka/clients.h"

#include <gtest/gtest.h>

#include "tests/worker/worker_fixtures.h"

namespace restack::worker {
namespace {

std::string property(RdKafka::Conf& conf, const std::string& name) {
  std::string value;
  EXPECT_EQ(conf.get(name, value), RdKafka::Conf::CONF_OK) << name;
  return value;
}

TEST(KafkaClients, RestacksOwnSettingsWinOverPassThroughOnes) {
  // The configuration refuses these names; the layering must hold even without that check.
  KafkaProperties properties({{"enable.auto.commit", "true"},
                              {"acks", "1"},
                              {"max.poll.interval.ms", "10000"},
                              {"compression.codec", "zstd"},
                              {"client.id", "quota-group-a"},
                              {"bootstrap.servers", "elsewhere:9092"}});
  properties.set("bootstrap.servers", "127.0.0.1:9092");
  properties.insert({"enable.auto.commit", "false"});
  properties["acks"] = "all";
  properties.insert({"max.poll.interval.ms", "1800000"});
  properties.setDefault("compression.type", "lz4");
  properties.setDefault("client.id", "restack-worker");
  auto conf = makeConf(properties);
  ASSERT_TRUE(conf) << conf.error().message();
  EXPECT_EQ(property(**conf, "enable.auto.commit"), "false");
  EXPECT_EQ(property(**conf, "acks"), "-1");  // librdkafka's spelling of all
  EXPECT_EQ(property(**conf, "max.poll.interval.ms"), "1800000");
  EXPECT_EQ(property(**conf, "bootstrap.servers"), "127.0.0.1:9092");
  // Defaults yield to the operator, also through an alias (compression.codec = compression.type).
  EXPECT_EQ(property(**conf, "compression.type"), "zstd");
  EXPECT_EQ(property(**conf, "client.id"), "quota-group-a");
}

TEST(KafkaClients, CommonPropertiesCarryTheBrokersAndThePassThrough) {
  config::Config config;
  config.kafka.brokers = "127.0.0.1:9092";
  config.kafka.properties = {{"socket.timeout.ms", "1234"}};
  KafkaProperties properties = commonProperties(config, "restack-test");
  auto conf = makeConf(properties);
  ASSERT_TRUE(conf) << conf.error().message();
  EXPECT_EQ(property(**conf, "bootstrap.servers"), "127.0.0.1:9092");
  EXPECT_EQ(property(**conf, "client.id"), "restack-test");
  EXPECT_EQ(property(**conf, "socket.timeout.ms"), "1234");
}

TEST(KafkaClients, TheTransactionalProducerRetriesQuicklyUnlessTheOperatorSaysOtherwise) {
  config::Config config;
  config.kafka.brokers = "127.0.0.1:9092";
  config.kafka.group_id = "restack";
  config.kafka.transactional_id = "restack-0";
  auto conf = makeConf(transactionalProducerProperties(config, "restack-test"));
  ASSERT_TRUE(conf) << conf.error().message();
  EXPECT_EQ(property(**conf, "transactional.id"), "restack-0");
  EXPECT_EQ(property(**conf, "retry.backoff.ms"), "20");  // librdkafka's own default is 100
  EXPECT_EQ(property(**conf, "transaction.timeout.ms"), "60000");
  EXPECT_EQ(property(**conf, "enable.idempotence"), "true");

  config.kafka.properties = {{"retry.backoff.ms", "250"}, {"transaction.timeout.ms", "30000"}};
  auto overridden = makeConf(transactionalProducerProperties(config, "restack-test"));
  ASSERT_TRUE(overridden) << overridden.error().message();
  EXPECT_EQ(property(**overridden, "retry.backoff.ms"), "250");
  EXPECT_EQ(property(**overridden, "transaction.timeout.ms"), "30000");
}

TEST(KafkaClients, ThePendingReaderWaitsBrieflyAtAPartitionsEndUnlessTheOperatorSaysOtherwise) {
  config::Config config;
  config.kafka.brokers = "127.0.0.1:9092";
  config.kafka.group_id = "restack";
  auto conf = makeConf(pendingReaderProperties(config));
  ASSERT_TRUE(conf) << conf.error().message();
  EXPECT_EQ(property(**conf, "fetch.wait.max.ms"), "50");  // librdkafka's own default is 500
  EXPECT_EQ(property(**conf, "group.id"), "restack.pending-replay");
  EXPECT_EQ(property(**conf, "enable.auto.commit"), "false");
  EXPECT_EQ(property(**conf, "isolation.level"), "read_committed");

  config.kafka.properties = {{"fetch.wait.max.ms", "200"}, {"enable.auto.commit", "true"}};
  auto overridden = makeConf(pendingReaderProperties(config));
  ASSERT_TRUE(overridden) << overridden.error().message();
  EXPECT_EQ(property(**overridden, "fetch.wait.max.ms"), "200");
  EXPECT_EQ(property(**overridden, "enable.auto.commit"), "false");  // Restack's own, whatever is passed
}

TEST(KafkaClients, TheSecondTransactionalProducerHasAnIdOfItsOwnDerivedFromTheWorkers) {
  config::Config config;
  config.kafka.brokers = "127.0.0.1:9092";
  config.kafka.group_id = "restack";
  config.kafka.transactional_id = "restack-0";
  auto first = makeConf(transactionalProducerProperties(config, "restack-test", 0));
  auto second = makeConf(transactionalProducerProperties(config, "restack-test", 1));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(property(**first, "transactional.id"), "restack-0");
  EXPECT_EQ(property(**second, "transactional.id"), "restack-0.1");
  EXPECT_EQ(property(**second, "client.id"), "restack-test");

  // Without a configured id both come from the group and the host, and still differ.
  config.kafka.transactional_id.clear();
  EXPECT_TRUE(transactionalId(config, 0).starts_with("restack-"));
  EXPECT_EQ(transactionalId(config, 1), transactionalId(config, 0) + ".1");
}

TEST(KafkaClients, ARefusedSecretPropertyNamesItButNeverShowsTheValue) {
  // librdkafka quotes a refused enum value in its message; the secret must not survive.
  const std::string secret = "s3cr3t-Value-4711";
  for (const std::string& name : {std::string("sasl.oauthbearer.method"), std::string("my.unknown.password")}) {
    KafkaProperties properties({{name, secret}});
    auto conf = makeConf(properties);
    ASSERT_FALSE(conf) << name;
    const std::string& message = conf.error().message();
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_EQ(message.find(secret), std::string::npos) << message;
  }
  // A plain property keeps its value in the message: it helps and hides nothing.
  KafkaProperties plain({{"socket.timeout.ms", "soon"}});
  auto conf = makeConf(plain);
  ASSERT_FALSE(conf);
  EXPECT_NE(conf.error().message().find("socket.timeout.ms=soon"), std::string::npos) << conf.error().message();
}

TEST(KafkaClients, AProducerLooksUpTheTopicsItWritesAndSaysWhichItCouldNot) {
  worker_test::MockCluster cluster;
  cluster.createTopic("out.restored");
  cluster.createTopic("out.refused");
  cluster.setTopicError("out.refused", RdKafka::ERR_TOPIC_AUTHORIZATION_FAILED);
  config::Config config;
  config.kafka.brokers = cluster.bootstrap();
  auto producer = makeProducer(config, "restack-test", nullptr);
  ASSERT_TRUE(producer) << producer.error().message();

  KnownTopics known = learnTopicLeaders(**producer, {"out.restored", "out.refused"}, 5000);
  // A handle on each, the refused one too: its first record then fails on its own, as before.
  EXPECT_EQ(known.handles.size(), 2u);
  EXPECT_EQ(known.failures.find("out.restored"), std::string::npos) << known.failures;
  EXPECT_NE(known.failures.find("topic out.refused: Broker: Topic authorization failed"), std::string::npos)
      << known.failures;
  auto partitions = partitionCount(**producer, "out.restored");
  ASSERT_TRUE(partitions) << partitions.error().message();
  EXPECT_EQ(*partitions, 1);
  EXPECT_FALSE(partitionCount(**producer, "out.refused"));

  // The topics looked up take records by name as before.
  const std::string value = "restored";
  ASSERT_EQ((*producer)->produce("out.restored", RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                                 const_cast<char*>(value.data()), value.size(), nullptr, 0, 0, nullptr),
            RdKafka::ERR_NO_ERROR);
  EXPECT_EQ((*producer)->flush(10000), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ((*producer)->outq_len(), 0);
  known.handles.clear();  // before their producer

  // A consumer looks up the topics it will be assigned the same way.
  config::Config reader = config;
  KafkaProperties properties = commonProperties(reader, "restack-test-reader");
  properties.insert({"group.id", "restack-test-reader"});
  auto conf = makeConf(properties);
  ASSERT_TRUE(conf) << conf.error().message();
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf->get(), error));
  ASSERT_TRUE(consumer) << error;
  KnownTopics read = learnTopicLeaders(*consumer, {"out.restored", "out.refused"}, 5000);
  EXPECT_EQ(read.handles.size(), 2u);
  EXPECT_EQ(read.failures, "topic out.refused: Broker: Topic authorization failed");
  read.handles.clear();
  consumer->close();
}

}  // namespace
}  // namespace restack::worker
