#include "tests/support/kafka_broker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "tests/support/rdkafka_handles.h"

namespace restack::testkafka {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const char kSetupHint[] = "run scripts/setup.sh (scripts/setup.d/kafka.sh installs the broker)";

fs::path brokerScript() {
  return fs::path(RESTACK_SOURCE_DIR) / "scripts" / "kafka-broker.sh";
}

// Single quotes keep every byte literal for /bin/sh; an embedded quote becomes '\''.
std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

CommandResult runShell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    result.output = "could not start /bin/sh";
    return result;
  }
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// Ports the kernel just handed out for 127.0.0.1; all sockets stay open until every port is
// chosen, so the ports differ. Another process may still take one before the broker binds it:
// start() retries with new ports when that happens.
Expected<std::vector<int>> pickFreePorts(int count) {
  std::vector<int> sockets;
  std::vector<int> ports;
  for (int i = 0; i < count; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof address;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      if (fd >= 0) close(fd);
      for (int open_fd : sockets) close(open_fd);
      return ioError("could not reserve a free TCP port on 127.0.0.1");
    }
    sockets.push_back(fd);
    ports.push_back(ntohs(address.sin_port));
  }
  for (int fd : sockets) close(fd);
  return ports;
}

bool javaOnPath() {
  return runShell("command -v java >/dev/null").exit_code == 0;
}

bool kafkaJarsPresent(const fs::path& libs) {
  std::error_code ec;
  if (!fs::is_directory(libs, ec)) return false;
  for (const auto& entry : fs::directory_iterator(libs, ec)) {
    if (entry.path().filename().string().starts_with("kafka_2.13-")) return true;
  }
  return false;
}

std::string scriptEnvironment(const fs::path& libs) {
  return "KAFKA_LIBS=" + shellQuote(libs.string()) + " ";
}

}  // namespace

fs::path kafkaLibsDir() {
  return fs::path(RESTACK_DEPS_DIR) / "kafka" / "libs";
}

Expected<std::unique_ptr<KafkaBroker>> KafkaBroker::start(KafkaBrokerOptions options) {
  const fs::path libs = kafkaLibsDir();
  if (!javaOnPath()) return notFound(std::string("java is not on PATH; ") + kSetupHint);
  if (!kafkaJarsPresent(libs)) {
    return notFound("the Apache Kafka jars are missing from " + libs.string() + "; " + kSetupHint);
  }
  if (const char* keep = std::getenv("RESTACK_KEEP_KAFKA_DIR"); keep && std::string(keep) == "1") {
    options.keep_dir = true;
  }

  std::string last_failure;
  constexpr int kAttempts = 3;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    std::string pattern = (fs::temp_directory_path() / "restack-kafka-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return ioError("could not create a temporary folder for the broker under " + fs::temp_directory_path().string());
    }
    const fs::path dir = pattern;
    auto ports = pickFreePorts(2);
    if (!ports) return ports.error();
    const int port = (*ports)[0];
    const int controller_port = (*ports)[1];

    // The watchdog (KAFKA_OWNER_PID) ends the broker and removes its folder if this process
    // dies without running destructors.
    std::string command = scriptEnvironment(libs) + "KAFKA_OWNER_PID=" + std::to_string(getpid()) +
                          " KAFKA_OWNER_CLEANUP=" + (options.keep_dir ? "0" : "1") +
                          " KAFKA_START_TIMEOUT=" + std::to_string(options.start_timeout.count()) +
                          " KAFKA_EXTRA_PROPERTIES=" + shellQuote(options.extra_server_properties) + " " +
                          (options.heap_opts.empty() || std::getenv("KAFKA_HEAP_OPTS") != nullptr
                               ? std::string()
                               : "KAFKA_HEAP_OPTS=" + shellQuote(options.heap_opts) + " ") +
                          shellQuote(brokerScript().string()) + " start " + shellQuote(dir.string()) + " " +
                          std::to_string(port) + " " + std::to_string(controller_port);
    CommandResult result = runShell(command);
    if (result.exit_code == 0) {
      return std::unique_ptr<KafkaBroker>(new KafkaBroker(dir, port, options.keep_dir));
    }
    last_failure = result.output;
    runShell(shellQuote(brokerScript().string()) + " kill " + shellQuote(dir.string()));
    // A port taken between our pick and the broker's bind is worth another try; anything
    // else (missing jars, bad properties) fails the same way every time.
    const bool port_clash =
        last_failure.find("in use") != std::string::npos || last_failure.find("BindException") != std::string::npos;
    if (!options.keep_dir || port_clash) fs::remove_all(dir);
    if (!port_clash) break;
  }
  return ioError("could not start the Kafka broker with scripts/kafka-broker.sh:\n" + last_failure);
}

KafkaBroker::KafkaBroker(fs::path dir, int port, bool keep_dir)
    : dir_(std::move(dir)), port_(port), bootstrap_("127.0.0.1:" + std::to_string(port)), keep_dir_(keep_dir) {}

KafkaBroker::~KafkaBroker() {
  if (running_) runShell(shellQuote(brokerScript().string()) + " kill " + shellQuote(dir_.string()));
  if (!keep_dir_) {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
}

Status KafkaBroker::stop() {
  if (!running_) return Status::ok();
  CommandResult result = runShell(shellQuote(brokerScript().string()) + " stop " + shellQuote(dir_.string()));
  running_ = false;
  if (result.exit_code != 0) return ioError("stopping the Kafka broker failed: " + result.output);
  return Status::ok();
}

Status KafkaBroker::createTopic(const std::string& name, int partitions,
                                const std::map<std::string, std::string>& configs) {
  return createTopics({TopicSpec{name, partitions, configs}});
}

Status KafkaBroker::createTopics(const std::vector<TopicSpec>& topics, std::chrono::milliseconds timeout) {
  auto admin = makeClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_}});
  if (!admin) return admin.error();
  rd_kafka_t* client = admin->get();

  std::vector<rd_kafka_NewTopic_t*> new_topics;
  auto destroy_new_topics = [&] { rd_kafka_NewTopic_destroy_array(new_topics.data(), new_topics.size()); };
  char errstr[512];
  for (const TopicSpec& spec : topics) {
    rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(spec.name.c_str(), spec.partitions, 1, errstr, sizeof errstr);
    if (topic == nullptr) {
      destroy_new_topics();
      return invalidArgument("topic " + spec.name + ": " + errstr);
    }
    new_topics.push_back(topic);
    for (const auto& [key, value] : spec.configs) {
      rd_kafka_NewTopic_set_config(topic, key.c_str(), value.c_str());
    }
  }

  rd_kafka_AdminOptions_t* admin_options = rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(admin_options, static_cast<int>(timeout.count()), errstr, sizeof errstr);
  rd_kafka_AdminOptions_set_request_timeout(admin_options, static_cast<int>(timeout.count()), errstr, sizeof errstr);
  Queue queue(rd_kafka_queue_new(client));
  rd_kafka_CreateTopics(client, new_topics.data(), new_topics.size(), admin_options, queue.get());
  rd_kafka_AdminOptions_destroy(admin_options);
  destroy_new_topics();

  Event event(rd_kafka_queue_poll(queue.get(), static_cast<int>(timeout.count()) + 5000));
  if (!event) return ioError("CreateTopics got no answer from " + bootstrap_);
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return ioError(std::string("CreateTopics failed: ") + rd_kafka_event_error_string(event.get()));
  }
  const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event.get());
  size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(result, &count);
  for (size_t i = 0; i < count; ++i) {
    rd_kafka_resp_err_t error = rd_kafka_topic_result_error(results[i]);
    if (error == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      return Error(ErrorCode::kInvalidArgument,
                   std::string("topic ") + rd_kafka_topic_result_name(results[i]) + " already exists");
    }
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const char* message = rd_kafka_topic_result_error_string(results[i]);
      return ioError(std::string("creating topic ") + rd_kafka_topic_result_name(results[i]) +
                     " failed: " + (message ? message : describeKafkaError(error)));
    }
  }

  // The controller has committed the topics; wait until this broker's metadata shows a leader
  // for every partition, so the first produce does not race the metadata propagation.
  const auto deadline = Clock::now() + timeout;
  for (const TopicSpec& spec : topics) {
    while (true) {
      const rd_kafka_metadata_t* metadata = nullptr;
      bool ready = false;
      if (rd_kafka_metadata(client, 1, nullptr, &metadata, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        for (int t = 0; t < metadata->topic_cnt; ++t) {
          const rd_kafka_metadata_topic_t& topic = metadata->topics[t];
          if (spec.name != topic.topic || topic.err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
          ready = topic.partition_cnt == spec.partitions;
          for (int p = 0; ready && p < topic.partition_cnt; ++p) {
            ready = topic.partitions[p].leader >= 0;
          }
        }
        rd_kafka_metadata_destroy(metadata);
      }
      if (ready) break;
      if (Clock::now() > deadline) {
        return ioError("topic " + spec.name + " was created but its " + std::to_string(spec.partitions) +
                       " partitions got no leader in time");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return Status::ok();
}

Expected<int> KafkaBroker::partitionCount(const std::string& topic, std::chrono::milliseconds timeout) const {
  auto client = makeClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_}});
  if (!client) return client.error();
  const rd_kafka_metadata_t* metadata = nullptr;
  rd_kafka_resp_err_t error =
      rd_kafka_metadata(client->get(), 1, nullptr, &metadata, static_cast<int>(timeout.count()));
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return ioError("metadata request to " + bootstrap_ + " failed: " + describeKafkaError(error));
  }
  std::optional<int> partitions;
  for (int t = 0; t < metadata->topic_cnt; ++t) {
    if (topic == metadata->topics[t].topic && metadata->topics[t].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      partitions = metadata->topics[t].partition_cnt;
    }
  }
  rd_kafka_metadata_destroy(metadata);
  if (!partitions) return notFound("topic " + topic + " does not exist on " + bootstrap_);
  return *partitions;
}

Expected<std::string> KafkaBroker::runTool(const std::string& java_class, const std::vector<std::string>& args,
                                           const std::string& stdin_text) const {
  static int invocation = 0;
  const fs::path input = dir_ / ("tool-stdin-" + std::to_string(++invocation) + ".txt");
  {
    std::ofstream file(input, std::ios::binary);
    file << stdin_text;
    if (!file) return ioError("could not write " + input.string());
  }
  std::string command =
      scriptEnvironment(kafkaLibsDir()) + shellQuote(brokerScript().string()) + " run-class " + shellQuote(java_class);
  for (const std::string& arg : args) command += " " + shellQuote(arg);
  command += " < " + shellQuote(input.string());
  CommandResult result = runShell(command);
  std::error_code ignored;
  fs::remove(input, ignored);
  if (result.exit_code != 0) {
    return ioError(java_class + " exited with status " + std::to_string(result.exit_code) + ":\n" + result.output);
  }
  return result.output;
}

namespace {

// The last `lines` lines of `path` that `keep` accepts.
template <typename Keep>
std::deque<std::string> lastLines(const fs::path& path, int lines, Keep keep) {
  std::ifstream log(path);
  std::deque<std::string> kept;
  std::string line;
  while (std::getline(log, line)) {
    if (!keep(line)) continue;
    kept.push_back(line);
    if (static_cast<int>(kept.size()) > lines) kept.pop_front();
  }
  return kept;
}

}  // namespace

std::string KafkaBroker::logTail(int lines) const {
  std::ostringstream out;
  for (const std::string& kept : lastLines(dir_ / "server.log", lines, [](const std::string&) { return true; })) {
    out << kept << '\n';
  }
  return out.str();
}

std::string KafkaBroker::diagnosis(int lines) const {
  std::ostringstream out;
  std::ifstream pid_file(dir_ / "broker.pid");
  long pid = 0;
  if (pid_file >> pid && pid > 0) {
    out << "broker process " << pid << (::kill(static_cast<pid_t>(pid), 0) == 0 ? " is running" : " has exited")
        << '\n';
  } else {
    out << "broker process: no broker.pid in " << dir_.string() << '\n';
  }
  const auto telling = [](const std::string& line) {
    return line.find(" ERROR ") != std::string::npos || line.find(" FATAL ") != std::string::npos ||
           line.find("Exception") != std::string::npos || line.find("Caused by") != std::string::npos ||
           line.find("No space left") != std::string::npos;
  };
  for (const char* name : {"server.log", "jvm.out"}) {
    const std::deque<std::string> errors = lastLines(dir_ / name, lines, telling);
    if (errors.empty()) continue;
    out << "errors in " << name << ":\n";
    for (const std::string& error : errors) out << "  " << error << '\n';
  }
  return out.str();
}

}  // namespace restack::testkafka
