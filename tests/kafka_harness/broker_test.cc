// The broker fixture itself: it starts, serves metadata, creates topics with the requested
// partition counts through the Admin API, keeps auto topic creation off, round-trips records
// byte for byte, and never outlives its owner.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/kafka_harness/broker_fixture.h"
#include "tests/support/kafka_records.h"

namespace restack::testkafka {
namespace {

namespace fs = std::filesystem;

std::string runShellCapture(const std::string& command, int* exit_code) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

bool processAlive(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, command, state;
  stat >> pid_field >> command >> state;
  return state != "Z";
}

bool waitUntilGone(pid_t pid, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (processAlive(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

pid_t readPid(const fs::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// A port the kernel considers free right now, for the script-level tests.
int freeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

const std::string kScript = std::string(RESTACK_SOURCE_DIR) + "/scripts/kafka-broker.sh";

TEST_F(BrokerTest, StartsAsOneKraftNodeOnLoopback) {
  auto client = makeClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", broker().bootstrap()}});
  ASSERT_TRUE(client) << client.error().message();
  const rd_kafka_metadata_t* metadata = nullptr;
  ASSERT_EQ(rd_kafka_metadata(client->get(), 1, nullptr, &metadata, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(metadata->broker_cnt, 1);
  EXPECT_EQ(std::string(metadata->brokers[0].host), "127.0.0.1");
  EXPECT_EQ(metadata->brokers[0].port, broker().port());
  rd_kafka_metadata_destroy(metadata);

  // KRaft, not ZooKeeper: the metadata log lives in the broker's own data folder.
  EXPECT_TRUE(fs::exists(broker().dir() / "data" / "__cluster_metadata-0")) << broker().logTail();
  EXPECT_TRUE(fs::exists(broker().dir() / "data" / "meta.properties"));
}

TEST_F(BrokerTest, CreatesTopicsWithTheRequestedPartitionCounts) {
  ASSERT_TRUE(broker().createTopics({{"restack.events.raw", 12, {}},
                                     {"restack.symbols", 12, {}},
                                     {"restack.symbols.shared", 1, {}},
                                     {"restack.fingerprints", 3, {{"cleanup.policy", "compact"}}}}));
  for (auto [topic, expected] : {std::pair{"restack.events.raw", 12},
                                 {"restack.symbols", 12},
                                 {"restack.symbols.shared", 1},
                                 {"restack.fingerprints", 3}}) {
    auto partitions = broker().partitionCount(topic);
    ASSERT_TRUE(partitions) << partitions.error().message();
    EXPECT_EQ(*partitions, expected) << topic;
  }

  Status again = broker().createTopic("restack.symbols", 12);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message().find("already exists"), std::string::npos) << again.error().message();
}

TEST_F(BrokerTest, DoesNotCreateTopicsOnFirstUse) {
  // Production clusters usually forbid auto-creation; the tests must notice a missing topic.
  auto produced = produceAll(broker().bootstrap(), "never.created", {{.key = "k", .value = "v"}},
                             {.properties = {{"message.timeout.ms", "3000"}}, .timeout = std::chrono::seconds(10)});
  EXPECT_FALSE(produced);
  auto partitions = broker().partitionCount("never.created");
  ASSERT_FALSE(partitions);
  EXPECT_EQ(partitions.error().code(), ErrorCode::kNotFound);
}

TEST_F(BrokerTest, RoundTripsKeysValuesAndHeadersByteForByte) {
  ASSERT_TRUE(broker().createTopic("roundtrip", 3));
  const std::string binary_value("\x00\x01\xff{\"json\":true}\n", 17);
  std::vector<KafkaRecord> records = {
      {.partition = 0, .key = "shopee:7.8.0(78007)", .value = "{\"event_id\":\"a\"}"},
      {.partition = 1, .key = std::nullopt, .value = binary_value},
      {.partition = 1, .key = "", .value = std::nullopt},  // empty key, tombstone value
      {.partition = 2,
       .key = "app:1",
       .value = "with headers",
       .headers = {{"restack-error", "unreadable event: expected '{'"},
                   {"null-header", std::nullopt},
                   {"restack-error", "second value of a repeated header"}}},
  };
  auto sent = produceAll(broker().bootstrap(), "roundtrip", records);
  ASSERT_TRUE(sent) << sent.error().message();

  auto received = consumeAll(broker().bootstrap(), "roundtrip");
  ASSERT_TRUE(received) << received.error().message();
  ASSERT_EQ(received->size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const KafkaRecord& got = (*received)[i];
    SCOPED_TRACE("record " + std::to_string(i));
    EXPECT_EQ(got.partition, records[i].partition);
    EXPECT_EQ(got.offset, (*sent)[i].offset);
    EXPECT_EQ(got.key, records[i].key);
    EXPECT_EQ(got.value, records[i].value);
    ASSERT_EQ(got.headers.size(), records[i].headers.size());
    for (size_t h = 0; h < got.headers.size(); ++h) {
      EXPECT_EQ(got.headers[h].name, records[i].headers[h].name);
      EXPECT_EQ(got.headers[h].value, records[i].headers[h].value);
    }
  }
  EXPECT_EQ((*received)[3].header("restack-error"), "unreadable event: expected '{'");
  EXPECT_EQ((*received)[3].header("absent"), std::nullopt);
}

TEST(KafkaBrokerLifetime, DestructionKillsTheBrokerAndRemovesItsFolder) {
  fs::path dir;
  pid_t pid = 0;
  {
    auto broker = KafkaBroker::start();
    ASSERT_TRUE(broker) << broker.error().message();
    dir = (*broker)->dir();
    pid = readPid(dir / "broker.pid");
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(processAlive(pid));
  }
  EXPECT_TRUE(waitUntilGone(pid, std::chrono::seconds(5)));
  EXPECT_FALSE(fs::exists(dir));
}

TEST(KafkaBrokerLifetime, GracefulStopEndsTheProcess) {
  auto broker = KafkaBroker::start();
  ASSERT_TRUE(broker) << broker.error().message();
  pid_t pid = readPid((*broker)->dir() / "broker.pid");
  Status stopped = (*broker)->stop();
  ASSERT_TRUE(stopped) << stopped.error().message();
  EXPECT_FALSE(processAlive(pid));
  EXPECT_NE((*broker)->logTail(200).find("shut down completed"), std::string::npos) << (*broker)->logTail();
}

TEST(KafkaBrokerScript, WatchdogKillsTheBrokerWhenItsOwnerDies) {
  // A stand-in for a test binary that crashes: the broker must not outlive it.
  int code = -1;
  std::string owner = runShellCapture("sleep 60 >/dev/null 2>&1 & echo $!", &code);
  const pid_t owner_pid = std::stoi(owner);
  char pattern[] = "/tmp/restack-kafka-watchdog-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  const int port = freeLoopbackPort();
  int controller_port = freeLoopbackPort();
  while (controller_port == port) controller_port = freeLoopbackPort();
  const std::string ports = std::to_string(port) + " " + std::to_string(controller_port);
  std::string output =
      runShellCapture("KAFKA_LIBS='" + kafkaLibsDir().string() + "' KAFKA_OWNER_PID=" + std::to_string(owner_pid) +
                          " KAFKA_OWNER_CLEANUP=1 '" + kScript + "' start '" + dir.string() + "' " + ports,
                      &code);
  ASSERT_EQ(code, 0) << output;
  const pid_t broker_pid = readPid(dir / "broker.pid");
  ASSERT_TRUE(processAlive(broker_pid));

  kill(owner_pid, SIGKILL);
  EXPECT_TRUE(waitUntilGone(broker_pid, std::chrono::seconds(10)));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_FALSE(fs::exists(dir)) << "KAFKA_OWNER_CLEANUP=1 should have removed " << dir;
  runShellCapture("'" + kScript + "' kill '" + dir.string() + "'", &code);
  fs::remove_all(dir);
}

TEST(KafkaBrokerScript, MissingJarsNameTheSetupScript) {
  int code = -1;
  std::string output =
      runShellCapture("KAFKA_LIBS=/nonexistent/kafka/libs '" + kScript + "' start /tmp/restack-never 1", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("scripts/setup.sh"), std::string::npos) << output;
}

}  // namespace
}  // namespace restack::testkafka
