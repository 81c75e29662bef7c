// KafkaBroker: a real, single-node Apache Kafka (KRaft) on 127.0.0.1 for one test process.
//
// The broker runs from a fresh temporary folder through scripts/kafka-broker.sh with the jars
// that scripts/setup.sh put in .deps/kafka/libs. It is the place to test what librdkafka's mock
// cluster cannot do: transactions, static membership, compaction, the Admin API.
//
//   auto broker = restack::testkafka::KafkaBroker::start();
//   ASSERT_TRUE(broker) << broker.error().message();
//   ASSERT_TRUE((*broker)->createTopic("restack.events.raw", 4));
//   ... clients use (*broker)->bootstrap() ...
//   auto records = restack::testkafka::consumeAll((*broker)->bootstrap(), "restack.fingerprints");
//
// Lifetime: destroying the KafkaBroker SIGKILLs the broker and deletes its folder (test data is
// throwaway, and a kill takes milliseconds where a controlled shutdown takes seconds). A test
// process that dies without running destructors (crash, ctest timeout) leaves no broker behind
// either: the script's watchdog kills the broker once this process is gone.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/common/status.h"

namespace restack::testkafka {

struct KafkaBrokerOptions {
  // Lines appended verbatim to the broker's server.properties, one setting per line, e.g.
  // "log.cleaner.min.compaction.lag.ms=0". Default: none (scripts/kafka-broker.sh's settings).
  std::string extra_server_properties{};
  // How long start() waits for the broker to accept clients. Default 90 s: a cold start takes
  // 3-5 s, but a 2-core machine running a parallel build can be far slower.
  std::chrono::seconds start_timeout{90};
  // Keep the broker's folder (server.log, data/) after destruction for a post-mortem. Default
  // false; the environment variable RESTACK_KEEP_KAFKA_DIR=1 turns it on as well.
  bool keep_dir = false;
  // The broker JVM's heap flags (scripts/kafka-broker.sh's KAFKA_HEAP_OPTS), e.g.
  // "-Xms512m -Xmx512m". Default empty: the script's "-Xmx512m -Xms64m", a heap that starts small
  // for the tests. A KAFKA_HEAP_OPTS in the environment wins over both.
  std::string heap_opts{};
};

struct TopicSpec {
  std::string name;
  int partitions = 1;
  // Topic-level configs, e.g. {"cleanup.policy", "compact"}. Default: the broker's defaults.
  std::map<std::string, std::string> configs{};
};

class KafkaBroker {
 public:
  // Starts a broker on free loopback ports and waits until it serves clients. Fails with a
  // message naming scripts/setup.sh when Java or the Kafka jars are missing, and with the tail
  // of the broker's log when it does not come up.
  static Expected<std::unique_ptr<KafkaBroker>> start(KafkaBrokerOptions options = {});

  KafkaBroker(const KafkaBroker&) = delete;
  KafkaBroker& operator=(const KafkaBroker&) = delete;
  ~KafkaBroker();

  // "127.0.0.1:<port>", for bootstrap.servers.
  const std::string& bootstrap() const { return bootstrap_; }
  int port() const { return port_; }
  // The broker's folder: server.properties, server.log, data/.
  const std::filesystem::path& dir() const { return dir_; }

  // Creates topics through the Admin API (CreateTopics) and returns once every partition has a
  // leader in the broker's metadata, so producers can use them at once. Replication factor 1.
  Status createTopics(const std::vector<TopicSpec>& topics,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));
  Status createTopic(const std::string& name, int partitions, const std::map<std::string, std::string>& configs = {});

  // The number of partitions the broker reports for `topic` (kNotFound when it does not exist).
  Expected<int> partitionCount(const std::string& topic,
                               std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  // Runs a Kafka command-line class from the same jars (e.g. "kafka.tools.ConsoleProducer")
  // with `args`, feeding `stdin_text`; returns its stdout and stderr, or an error carrying them
  // when the tool exits non-zero.
  Expected<std::string> runTool(const std::string& java_class, const std::vector<std::string>& args,
                                const std::string& stdin_text = "") const;

  // Graceful stop (SIGTERM, controlled shutdown); the destructor then has nothing left to do.
  Status stop();

  // The last `lines` lines of the broker's server.log, for failure messages.
  std::string logTail(int lines = 40) const;

  // For failure messages: whether the broker process still runs, and the last `lines` lines of
  // its server.log and JVM output that say why it might not (ERROR, FATAL, exceptions). A broker
  // that stops in the middle of a test mostly says why there: a full disk, for example, fails its
  // log folder and it shuts itself down.
  std::string diagnosis(int lines = 15) const;

 private:
  KafkaBroker(std::filesystem::path dir, int port, bool keep_dir);

  std::filesystem::path dir_;
  int port_ = 0;
  std::string bootstrap_;
  bool keep_dir_ = false;
  bool running_ = true;
};

// Where scripts/setup.sh installs the Kafka jars (<repo>/.deps/kafka/libs).
std::filesystem::path kafkaLibsDir();

}  // namespace restack::testkafka
