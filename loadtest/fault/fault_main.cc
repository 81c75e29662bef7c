// restack_fault: the driver of scripts/fault-test.sh (read that script's header for what the
// test does and how it counts). The script starts the Kafka cluster; this program creates the
// topics, runs the `restack run` workers, produces events and symbol uploads, injects faults,
// lets the workers drain, reads every output back with read_committed and compares each
// restored event with `restack symbolicate` on the same input and symbols.
//
//   restack_fault --restack build/worker/restack --bootstrap HOST:PORT,… --cluster-dir DIR
//                 --cluster-script scripts/kafka-cluster.sh --samples worker/demo/samples
//                 --work DIR [--minutes N] [--mode exactly_once|at_least_once] [--workers 3]
//                 [--slow-location auto|on|off] [--store-full auto|off] [--seed N]
//
// The last line it prints is the verdict line (see scripts/fault-test.sh); it exits 1 when the
// verdict fails and 2 when the test could not run.
#include <librdkafka/rdkafka.h>
#include <simdjson.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "loadtest/fault/outcome.h"
#include "loadtest/fault/slow_http.h"
#include "loadtest/fault/workers.h"

namespace restack::fault {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

const Clock::time_point g_start = Clock::now();

void say(const char* format, ...) __attribute__((format(printf, 1, 2)));
void say(const char* format, ...) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  std::fprintf(stdout, "[fault +%6.1fs] ", std::chrono::duration<double>(Clock::now() - g_start).count());
  va_list args;
  va_start(args, format);
  std::vfprintf(stdout, format, args);
  va_end(args);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// --- options ----------------------------------------------------------------------------------

struct Options {
  std::string restack;
  std::string bootstrap;
  std::string cluster_dir;
  std::string cluster_script;
  std::string samples;
  std::string work;
  double minutes = 3;
  std::string mode;  // "" = the worker's default
  int workers = 3;
  std::string slow_location = "auto";
  std::string store_full = "auto";
  uint64_t seed = 0;
  int partitions = 6;
  int batch_size = 100;
  int session_timeout_ms = 6000;
};

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  o.seed = static_cast<uint64_t>(std::random_device{}());
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "restack_fault: %s needs a value\n", flag.c_str());
      return std::nullopt;
    }
    const std::string value = argv[++i];
    if (flag == "--restack")
      o.restack = value;
    else if (flag == "--bootstrap")
      o.bootstrap = value;
    else if (flag == "--cluster-dir")
      o.cluster_dir = value;
    else if (flag == "--cluster-script")
      o.cluster_script = value;
    else if (flag == "--samples")
      o.samples = value;
    else if (flag == "--work")
      o.work = value;
    else if (flag == "--minutes")
      o.minutes = std::atof(value.c_str());
    else if (flag == "--mode")
      o.mode = value;
    else if (flag == "--workers")
      o.workers = std::atoi(value.c_str());
    else if (flag == "--slow-location")
      o.slow_location = value;
    else if (flag == "--store-full")
      o.store_full = value;
    else if (flag == "--seed")
      o.seed = std::strtoull(value.c_str(), nullptr, 10);
    else {
      std::fprintf(stderr, "restack_fault: unknown option %s\n", flag.c_str());
      return std::nullopt;
    }
  }
  if (o.restack.empty() || o.bootstrap.empty() || o.cluster_dir.empty() || o.cluster_script.empty() ||
      o.samples.empty() || o.work.empty()) {
    std::fprintf(stderr,
                 "restack_fault: --restack, --bootstrap, --cluster-dir, --cluster-script, --samples and "
                 "--work are required (scripts/fault-test.sh passes them)\n");
    return std::nullopt;
  }
  if (!o.mode.empty() && o.mode != "exactly_once" && o.mode != "at_least_once") {
    std::fprintf(stderr, "restack_fault: --mode is exactly_once or at_least_once, not %s\n", o.mode.c_str());
    return std::nullopt;
  }
  if (o.minutes <= 0 || o.workers < 2 || o.workers > 8) {
    std::fprintf(stderr, "restack_fault: --minutes must be > 0 and --workers 2..8\n");
    return std::nullopt;
  }
  return o;
}

// --- small helpers ----------------------------------------------------------------------------

std::optional<std::string> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool writeFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

int runShell(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// Replaces the one occurrence of `from`; false when there is none.
bool replaceOnce(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) return false;
  text.replace(at, from.size(), to);
  return true;
}

// --- Kafka ------------------------------------------------------------------------------------

rd_kafka_t* makeClient(rd_kafka_type_t type, const std::map<std::string, std::string>& properties,
                       void (*delivery)(rd_kafka_t*, const rd_kafka_message_t*, void*) = nullptr) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  // Broker outages are the point of this test: the clients' disconnect messages would drown the
  // driver's own lines (critical ones still show).
  rd_kafka_conf_set(conf, "log_level", "2", errstr, sizeof errstr);
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      say("kafka property %s=%s: %s", key.c_str(), value.c_str(), errstr);
      rd_kafka_conf_destroy(conf);
      return nullptr;
    }
  }
  if (delivery) rd_kafka_conf_set_dr_msg_cb(conf, delivery);
  rd_kafka_t* client = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (!client) say("cannot create a Kafka client: %s", errstr);
  return client;
}

struct TopicSpec {
  std::string name;
  int partitions;
  std::map<std::string, std::string> configs;
};

bool createTopics(const std::string& bootstrap, const std::vector<TopicSpec>& topics) {
  rd_kafka_t* admin = makeClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}});
  if (!admin) return false;
  std::vector<rd_kafka_NewTopic_t*> news;
  char errstr[512];
  for (const TopicSpec& spec : topics) {
    rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(spec.name.c_str(), spec.partitions, 3, errstr, sizeof errstr);
    rd_kafka_NewTopic_set_config(topic, "min.insync.replicas", "2");
    for (const auto& [key, value] : spec.configs) rd_kafka_NewTopic_set_config(topic, key.c_str(), value.c_str());
    news.push_back(topic);
  }
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(admin, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(options, 60000, errstr, sizeof errstr);
  rd_kafka_AdminOptions_set_request_timeout(options, 60000, errstr, sizeof errstr);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(admin);
  rd_kafka_CreateTopics(admin, news.data(), news.size(), options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 70000);
  bool ok = event != nullptr && rd_kafka_event_error(event) == RD_KAFKA_RESP_ERR_NO_ERROR;
  if (event && ok) {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        say("creating topic %s failed: %s", rd_kafka_topic_result_name(results[i]),
            rd_kafka_topic_result_error_string(results[i]));
        ok = false;
      }
    }
  } else {
    say("CreateTopics failed: %s", event ? rd_kafka_event_error_string(event) : "no answer");
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy_array(news.data(), news.size());
  rd_kafka_destroy(admin);
  return ok;
}

struct Topics {
  std::string events = "restack.events.raw";
  std::string symbols = "restack.symbols";
  std::string shared = "restack.symbols.shared";
  std::string symbolicated = "restack.events.symbolicated";
  std::string fingerprints = "restack.fingerprints";
  std::string dlq = "restack.events.dlq";
  std::string pending = "restack.pending";
};

// --- the input: groups of events and uploads ---------------------------------------------------

struct Upload {
  std::string file;  // path under the samples folder
  std::string kind;
  std::string name;  // source maps: the minified file
};

struct Template {
  std::string id;    // the demo event id, or "<id>-full" for a variant
  std::string line;  // raw event JSON with app "demo", build "1.0.0(100)"
};

struct Group {
  std::string app;
  std::string build;
  bool late = false;  // uploads produced after some of its events
  bool slow = false;  // the mapping comes from the slow location
  std::vector<std::string> template_ids;
  std::map<std::string, EventExpectation> expected;  // template id -> offline restoration
  size_t produced = 0;
  size_t total = 0;
  bool uploads_sent = false;
};

struct PlannedEvent {
  size_t group;
  std::string template_id;
  std::string event_id;
};

std::string instantiate(const Template& t, const Group& g, const std::string& event_id) {
  std::string line = t.line;
  replaceOnce(line, "\"event_id\":\"" + t.id.substr(0, t.id.size() - (t.id.ends_with("-full") ? 5 : 0)) + "\"",
              "\"event_id\":\"" + event_id + "\"");
  replaceOnce(line, "\"app\":\"demo\"", "\"app\":\"" + g.app + "\"");
  replaceOnce(line, "\"build_id\":\"1.0.0(100)\"", "\"build_id\":\"" + g.build + "\"");
  return line;
}

// The iOS event without its UIKitCore frame (an operating-system image nobody uploads): every
// frame of it can be restored, so its offline restoration is complete rather than partial.
std::optional<std::string> withoutUikit(const std::string& line) {
  const size_t uikit = line.find("UIKitCore");
  if (uikit == std::string::npos) return std::nullopt;
  const size_t start = line.rfind("\\n", uikit);
  const size_t end = line.find("\\n", uikit);
  if (start == std::string::npos || end == std::string::npos) return std::nullopt;
  std::string out = line;
  out.erase(start, end - start);
  return out;
}

// Offline restoration of one group's templates with all of its symbols.
bool computeExpectations(const Options& o, const std::vector<Template>& templates, const std::vector<Upload>& uploads,
                         Group& g, const fs::path& folder) {
  fs::create_directories(folder);
  std::string input;
  for (const std::string& id : g.template_ids) {
    for (const Template& t : templates) {
      if (t.id == id) input += instantiate(t, g, id) + "\n";
    }
  }
  if (!writeFile(folder / "events.jsonl", input)) return false;
  std::string command =
      shellQuote(o.restack) + " symbolicate --json --app " + shellQuote(g.app) + " --build " + shellQuote(g.build);
  for (const Upload& u : uploads) command += " --symbols " + shellQuote((fs::path(o.samples) / u.file).string());
  command += " --dlq " + shellQuote((folder / "dlq.jsonl").string()) + " < " +
             shellQuote((folder / "events.jsonl").string()) + " > " + shellQuote((folder / "restored.jsonl").string()) +
             " 2> " + shellQuote((folder / "symbolicate.err").string());
  const int status = runShell(command);
  if (status != 0 && status != 3) {  // 3: some lines went to the DLQ, as demo-bad-1 must
    say("restack symbolicate failed (status %d) for %s:%s; see %s", status, g.app.c_str(), g.build.c_str(),
        (folder / "symbolicate.err").c_str());
    return false;
  }
  auto restored = readFile(folder / "restored.jsonl");
  auto dlq = readFile(folder / "dlq.jsonl");
  if (!restored || !dlq) return false;
  std::istringstream lines(*restored);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    auto record = canonicalRestored(line);
    if (!record) {
      say("offline output unreadable: %s", record.error().message().c_str());
      return false;
    }
    EventExpectation& e = g.expected[record->event_id];
    e.canonical = record->canonical;
    e.final_pending = record->pending;
  }
  std::istringstream dlq_lines(*dlq);
  while (std::getline(dlq_lines, line)) {
    for (const std::string& id : g.template_ids) {
      if (line.find("\"event_id\":\"" + id + "\"") != std::string::npos) g.expected[id].dead_letter = true;
    }
  }
  for (const std::string& id : g.template_ids) {
    if (!g.expected.count(id)) {
      say("restack symbolicate gave nothing for %s in %s:%s", id.c_str(), g.app.c_str(), g.build.c_str());
      return false;
    }
  }
  return true;
}

// --- producing --------------------------------------------------------------------------------

std::atomic<uint64_t> g_delivery_failures{0};
std::string g_last_delivery_failure;

void onDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++g_delivery_failures;
    g_last_delivery_failure = rd_kafka_err2str(message->err);
  }
}

bool produce(rd_kafka_t* producer, const std::string& topic, const std::string& key, const std::string& value,
             const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  while (true) {
    rd_kafka_headers_t* h = rd_kafka_headers_new(headers.size());
    for (const auto& [name, v] : headers) rd_kafka_header_add(h, name.c_str(), -1, v.data(), v.size());
    rd_kafka_resp_err_t err =
        rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
                          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return true;
    rd_kafka_headers_destroy(h);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      say("produce to %s failed: %s", topic.c_str(), rd_kafka_err2str(err));
      return false;
    }
    rd_kafka_poll(producer, 100);
  }
}

// --- reading the outputs ----------------------------------------------------------------------

struct Collected {
  std::mutex mutex;
  std::vector<RestoredRecord> restored;
  std::map<std::string, uint64_t> dead_letters;  // event id -> DLQ records
  std::vector<std::string> other_dlq;            // DLQ records that are no event of ours (rejected uploads…)
  uint64_t unreadable = 0;
  std::atomic<int64_t> last_record_ms{0};
  std::atomic<uint64_t> records{0};
};

int64_t sinceStartMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - g_start).count();
}

void collect(const std::string& bootstrap, const Topics& topics, int partitions, Collected& out,
             const std::atomic<bool>& stop) {
  rd_kafka_t* consumer = makeClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                                        {"group.id", "restack-fault-reader"},
                                                        {"enable.auto.commit", "false"},
                                                        {"isolation.level", "read_committed"},
                                                        {"enable.partition.eof", "false"}});
  if (!consumer) return;
  rd_kafka_topic_partition_list_t* assignment = rd_kafka_topic_partition_list_new(2 * partitions);
  for (const std::string* topic : {&topics.symbolicated, &topics.dlq}) {
    for (int p = 0; p < partitions; ++p) {
      rd_kafka_topic_partition_list_add(assignment, topic->c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
  }
  rd_kafka_assign(consumer, assignment);
  rd_kafka_topic_partition_list_destroy(assignment);
  simdjson::dom::parser parser;
  while (!stop) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer, 200);
    if (!message) continue;
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const std::string topic = rd_kafka_topic_name(message->rkt);
      std::string_view value(static_cast<const char*>(message->payload), message->len);
      ++out.records;
      out.last_record_ms = sinceStartMs();
      std::lock_guard lock(out.mutex);
      if (topic == topics.symbolicated) {
        auto record = canonicalRestored(value);
        if (record) {
          char where[64];
          std::snprintf(where, sizeof(where), "p%d@%lld +%.1fs", static_cast<int>(message->partition),
                        static_cast<long long>(message->offset), static_cast<double>(sinceStartMs()) / 1000.0);
          record->where = where;
          out.restored.push_back(std::move(*record));
        } else {
          ++out.unreadable;
        }
      } else {
        simdjson::dom::element root;
        std::string_view id;
        if (parser.parse(value.data(), value.size(), true).get(root) == simdjson::SUCCESS && root.is_object() &&
            root["event_id"].get_string().get(id) == simdjson::SUCCESS) {
          ++out.dead_letters[std::string(id)];
        } else {
          std::string reason;
          rd_kafka_headers_t* headers = nullptr;
          const void* v = nullptr;
          size_t n = 0;
          if (rd_kafka_message_headers(message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR &&
              rd_kafka_header_get_last(headers, "restack.error", &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            reason.assign(static_cast<const char*>(v), n);
          }
          std::string key = message->key ? std::string(static_cast<const char*>(message->key), message->key_len) : "";
          out.other_dlq.push_back(key + ": " + reason);
        }
      }
    }
    rd_kafka_message_destroy(message);
  }
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
}

// Events the worker group has not committed yet (high watermark minus committed offset, summed),
// or -1 when the brokers did not answer.
int64_t groupLag(const std::string& bootstrap, const std::string& group, const std::string& topic, int partitions) {
  rd_kafka_t* client = makeClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap}, {"group.id", group}});
  if (!client) return -1;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(list, topic.c_str(), p);
  int64_t lag = 0;
  if (rd_kafka_committed(client, list, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR) lag = -1;
  for (int i = 0; lag >= 0 && i < list->cnt; ++i) {
    int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(client, topic.c_str(), list->elems[i].partition, &low, &high, 10000) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      lag = -1;
      break;
    }
    const int64_t committed = list->elems[i].offset < 0 ? low : list->elems[i].offset;
    lag += std::max<int64_t>(0, high - committed);
  }
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_destroy(client);
  return lag;
}

// --- faults -----------------------------------------------------------------------------------

struct FaultCounts {
  std::atomic<uint64_t> kills{0};           // worker SIGKILLs
  std::atomic<uint64_t> pauses{0};          // worker SIGSTOP past the session timeout
  std::atomic<uint64_t> broker_outages{0};  // kill -9 or controlled shutdown of a node
  std::atomic<uint64_t> store_full{0};
};

class StoreFiller {
 public:
  // Mounts a small tmpfs at `mount_point` (root only).
  static std::optional<StoreFiller> mount(const fs::path& mount_point, std::string& why_not) {
    if (::geteuid() != 0) {
      why_not = "not running as root (a tmpfs for the store needs mount)";
      return std::nullopt;
    }
    std::error_code ec;
    fs::create_directories(mount_point, ec);
    if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64m") != 0) {
      why_not = std::string("mount of a tmpfs failed: ") + std::strerror(errno);
      return std::nullopt;
    }
    return StoreFiller(mount_point);
  }
  void fill() {
    std::ofstream out(point_ / "filler.bin", std::ios::binary);
    std::string chunk(1 << 16, 'x');
    while (out.write(chunk.data(), chunk.size())) {
    }
  }
  void release() {
    std::error_code ec;
    fs::remove(point_ / "filler.bin", ec);
  }
  void unmount() { ::umount2(point_.c_str(), MNT_DETACH); }
  const fs::path& point() const { return point_; }

 private:
  explicit StoreFiller(fs::path point) : point_(std::move(point)) {}
  fs::path point_;
};

class FaultInjector {
 public:
  FaultInjector(const Options& o, WorkerSet& workers, std::optional<StoreFiller>& filler, FaultCounts& counts)
      : o_(o), workers_(workers), filler_(filler), counts_(counts), random_(o.seed * 7919 + 1) {}

  void run(const std::atomic<bool>& stop) {
    std::vector<std::string> kinds = {"kill-worker", "kill-worker", "pause-worker", "kill-broker", "stop-broker"};
    if (filler_) kinds.push_back("store-full");
    // The first fault comes after the workers had time to join and restore a little.
    sleepFor(15s, stop);
    while (!stop) {
      const std::string kind = kinds[random_() % kinds.size()];
      inject(kind, stop);
      sleepFor(std::chrono::milliseconds(3000 + random_() % 7000), stop);
    }
  }

 private:
  void sleepFor(std::chrono::milliseconds time, const std::atomic<bool>& stop) {
    const auto until = Clock::now() + time;
    while (!stop && Clock::now() < until) std::this_thread::sleep_for(100ms);
  }
  // Sleeps even when stopping: a fault once begun is always undone.
  static void hold(std::chrono::milliseconds time) { std::this_thread::sleep_for(time); }

  void inject(const std::string& kind, const std::atomic<bool>& stop) {
    const size_t worker = random_() % workers_.size();
    const int node = 1 + static_cast<int>(random_() % 3);
    if (kind == "kill-worker") {
      const int down = 500 + static_cast<int>(random_() % 4000);
      say("fault: SIGKILL worker %zu, restart in %d ms", worker, down);
      workers_.kill(worker, down);
      ++counts_.kills;
    } else if (kind == "pause-worker") {
      const int paused = o_.session_timeout_ms + 3000 + static_cast<int>(random_() % 5000);
      say("fault: SIGSTOP worker %zu for %d ms (session timeout %d ms)", worker, paused, o_.session_timeout_ms);
      workers_.stop(worker);
      hold(std::chrono::milliseconds(paused));
      workers_.resume(worker);
      say("fault: SIGCONT worker %zu", worker);
      ++counts_.pauses;
    } else if (kind == "kill-broker" || kind == "stop-broker") {
      const bool kill = kind == "kill-broker";
      say("fault: %s broker node %d", kill ? "kill -9" : "controlled shutdown of", node);
      runShell(shellQuote(o_.cluster_script) + (kill ? " kill-node " : " stop-node ") + shellQuote(o_.cluster_dir) +
               " " + std::to_string(node) + " > /dev/null");
      ++counts_.broker_outages;
      hold(std::chrono::milliseconds(3000 + random_() % 10000));
      say("fault: restarting broker node %d", node);
      const int status = runShell(shellQuote(o_.cluster_script) + " start-node " + shellQuote(o_.cluster_dir) + " " +
                                  std::to_string(node) + " > /dev/null");
      if (status != 0)
        say("fault: broker node %d did not come back (status %d)", node, status);
      else
        say("fault: broker node %d serves again", node);
    } else if (kind == "store-full") {
      say("fault: the store volume of worker 1 (%s) is full", filler_->point().c_str());
      filler_->fill();
      ++counts_.store_full;
      hold(std::chrono::milliseconds(10000 + random_() % 10000));
      filler_->release();
      say("fault: the store volume of worker 1 has room again");
    }
    (void)stop;
  }

  const Options& o_;
  WorkerSet& workers_;
  std::optional<StoreFiller>& filler_;
  FaultCounts& counts_;
  std::mt19937_64 random_;
};

// --- the test ---------------------------------------------------------------------------------

std::string workerConfig(const Options& o, size_t index, const fs::path& store, bool uploads_keys,
                         bool transactional_id) {
  std::ostringstream yaml;
  yaml << "# Written by restack_fault (scripts/fault-test.sh) for worker " << index << ".\n"
       << "kafka:\n"
       << "  brokers: \"" << o.bootstrap << "\"\n"
       << "  group_id: restack-fault\n"
       << "  session_timeout_ms: " << o.session_timeout_ms << "\n";
  if (!o.mode.empty()) yaml << "  delivery: " << o.mode << "\n";
  if (transactional_id) {
    // One transactional id per worker: they share a host, so the default "<group>-<hostname>"
    // would make them fence each other.
    yaml << "  transactional_id: restack-fault-w" << index << "\n";
  }
  yaml << "store:\n  path: \"" << store.string() << "\"\n  block_cache_mb: 16\n"
       << "cache:\n  native_mb: 16\n  proguard_mb: 16\n  sourcemap_mb: 16\n"
       << "worker:\n  threads: 1\n  batch_size: " << o.batch_size << "\n  batch_linger_ms: 50\n"
       << "observability:\n  http_port: 0\n  log_level: info\n";
  if (uploads_keys) {
    yaml << "uploads:\n  http_hosts: \"127.0.0.1\"\n  allow_plain_http: true\n  allowed_networks: \"127.0.0.0/8\"\n";
  }
  return yaml.str();
}

// True when the restack binary contains `word`: how the driver tells whether the worker's config
// has a key (uploads.allowed_networks, kafka.transactional_id) without writing one it would reject.
bool binaryKnows(const std::string& binary, const std::string& word) {
  auto content = readFile(binary);
  return content && content->find(word) != std::string::npos;
}

int runTest(const Options& o) {
  say("seed %llu, %.1f minute(s), mode %s, %d workers", static_cast<unsigned long long>(o.seed), o.minutes,
      o.mode.empty() ? "default" : o.mode.c_str(), o.workers);
  std::mt19937_64 random(o.seed);
  const fs::path work = o.work;
  fs::create_directories(work);
  const Topics topics;

  // The samples.
  auto manifest_text = readFile(fs::path(o.samples) / "manifest.json");
  auto events_text = readFile(fs::path(o.samples) / "events.jsonl");
  if (!manifest_text || !events_text) {
    say("cannot read %s/manifest.json and events.jsonl", o.samples.c_str());
    return 2;
  }
  std::vector<Upload> uploads;
  {
    simdjson::dom::parser parser;
    simdjson::dom::element manifest;
    if (parser.parse(*manifest_text).get(manifest) != simdjson::SUCCESS) return 2;
    simdjson::dom::array list;
    if (manifest["uploads"].get_array().get(list) != simdjson::SUCCESS) return 2;
    for (auto entry : list) {
      Upload u;
      std::string_view s;
      if (entry["file"].get_string().get(s) == simdjson::SUCCESS) u.file = s;
      if (entry["kind"].get_string().get(s) == simdjson::SUCCESS) u.kind = s;
      if (entry["name"].get_string().get(s) == simdjson::SUCCESS) u.name = s;
      uploads.push_back(u);
    }
  }
  std::map<std::string, std::string> upload_bytes;
  for (const Upload& u : uploads) {
    auto bytes = readFile(fs::path(o.samples) / u.file);
    if (!bytes) return 2;
    upload_bytes[u.file] = std::move(*bytes);
  }
  std::vector<Template> templates;
  {
    std::istringstream lines(*events_text);
    std::string line;
    while (std::getline(lines, line)) {
      const size_t at = line.find("\"event_id\":\"");
      if (at == std::string::npos) continue;
      const size_t start = at + 12;
      const std::string id = line.substr(start, line.find('"', start) - start);
      templates.push_back({id, line});
      if (auto full = withoutUikit(line)) templates.push_back({id + "-full", *full});
    }
  }
  say("samples: %zu uploads, %zu event templates", uploads.size(), templates.size());

  // Groups: 4 apps x 6 builds. App fa3 gets every upload late, the others every other build.
  std::vector<Group> groups;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 6; ++b) {
      Group g;
      g.app = "fa" + std::to_string(a);
      g.build = "1." + std::to_string(b) + ".0(" + std::to_string(100 + b) + ")";
      g.late = a == 3 || (a + b) % 2 == 1;
      g.slow = g.late && (b % 3 == 0);
      // Every template goes to every group, the iOS event with its never-uploaded UIKitCore
      // frame too: an operating-system image holds no event (reason system_image), so where the
      // dSYM comes late that event is pending until it comes and then restored and published
      // final like the others.
      for (const Template& t : templates) g.template_ids.push_back(t.id);
      groups.push_back(std::move(g));
    }
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!computeExpectations(o, templates, uploads, groups[i], work / "offline" / std::to_string(i))) return 2;
  }
  say("offline restoration done for %zu groups (restack symbolicate)", groups.size());

  // The plan: copies of every template of every group, shuffled.
  const int copies = std::max(4, static_cast<int>(o.minutes * 5));
  std::vector<PlannedEvent> plan;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    for (int c = 0; c < copies; ++c) {
      for (const std::string& id : groups[gi].template_ids) {
        plan.push_back({gi, id, groups[gi].app + "/" + groups[gi].build + "/" + id + "/" + std::to_string(c)});
      }
    }
    groups[gi].total = static_cast<size_t>(copies) * groups[gi].template_ids.size();
  }
  std::shuffle(plan.begin(), plan.end(), random);
  std::map<std::string, const EventExpectation*> expected;
  for (const PlannedEvent& e : plan) expected[e.event_id] = &groups[e.group].expected.at(e.template_id);

  // Topics: replication 3, min.insync.replicas 2; symbols and pending co-partitioned with events.
  const std::map<std::string, std::string> compact = {{"cleanup.policy", "compact"}};
  if (!createTopics(o.bootstrap, {{topics.events, o.partitions, {}},
                                  {topics.symbols, o.partitions, {}},
                                  {topics.shared, 1, {}},
                                  {topics.symbolicated, o.partitions, {}},
                                  {topics.fingerprints, o.partitions, {}},
                                  {topics.dlq, o.partitions, {}},
                                  {topics.pending, o.partitions, compact}})) {
    return 2;
  }
  say("topics created (%d partitions, replication 3, min.insync.replicas 2)", o.partitions);

  // The slow location.
  std::unique_ptr<SlowHttpServer> slow;
  bool uploads_keys = false;
  if (o.slow_location != "off") {
    uploads_keys = binaryKnows(o.restack, "allowed_networks");
    auto started = SlowHttpServer::start(10s);
    if (!started) {
      say("slow location: %s", started.error().message().c_str());
      return 2;
    }
    slow = std::move(*started);
    if (o.slow_location == "on" && !uploads_keys) {
      say("slow location: this restack has no uploads.allowed_networks; its fetches are not restricted, the fault "
          "runs without the keys");
    }
    say("slow location on %s (10 s per file)%s", slow->base().c_str(),
        uploads_keys ? ", uploads.http_hosts/allow_plain_http/allowed_networks set" : "");
  } else {
    say("slow location: off (--slow-location off)");
    for (Group& g : groups) g.slow = false;
  }

  // The store-full volume of worker 1.
  std::optional<StoreFiller> filler;
  if (o.store_full != "off") {
    std::string why_not;
    filler = StoreFiller::mount(work / "w1" / "store-volume", why_not);
    if (!filler)
      say("store-full fault SKIPPED: %s", why_not.c_str());
    else
      say("store-full fault on: worker 1's store is on a 64 MiB tmpfs at %s", filler->point().c_str());
  } else {
    say("store-full fault: off (--store-full off)");
  }

  // Workers.
  const bool transactional_ids = binaryKnows(o.restack, "transactional_id");
  std::vector<std::string> folders;
  for (int i = 0; i < o.workers; ++i) {
    const fs::path folder = work / ("w" + std::to_string(i));
    fs::create_directories(folder);
    const fs::path store = (i == 1 && filler) ? filler->point() / "store" : folder / "store";
    if (!writeFile(folder / "config.yaml",
                   workerConfig(o, static_cast<size_t>(i), store, uploads_keys, transactional_ids)))
      return 2;
    folders.push_back(folder.string());
  }
  WorkerSet workers(o.restack, folders);
  if (!workers.startAll()) {
    say("cannot start %s", o.restack.c_str());
    return 2;
  }
  say("%d workers started (logs in %s/w*/worker.log)", o.workers, work.c_str());

  std::atomic<bool> stop_collect{false};
  Collected collected;
  std::thread collector([&] { collect(o.bootstrap, topics, o.partitions, collected, stop_collect); });

  rd_kafka_t* producer = makeClient(RD_KAFKA_PRODUCER,
                                    {{"bootstrap.servers", o.bootstrap},
                                     {"enable.idempotence", "true"},
                                     {"acks", "all"},
                                     {"partitioner", "murmur2_random"},
                                     {"linger.ms", "5"},
                                     // Never give up on a record (a broker outage is expected):
                                     // a retried record after a timeout could be written twice.
                                     {"message.timeout.ms", "0"}},
                                    onDelivery);
  if (!producer) return 2;

  auto sendUploads = [&](Group& g) {
    for (const Upload& u : uploads) {
      std::vector<std::pair<std::string, std::string>> headers = {{"restack.kind", u.kind},
                                                                  {"restack.app", g.app},
                                                                  {"restack.build_id", g.build},
                                                                  {"restack.file_name", fs::path(u.file).filename()}};
      if (!u.name.empty()) headers.emplace_back("restack.name", u.name);
      std::string value = upload_bytes[u.file];
      if (g.slow && u.kind == "proguard" && slow) {
        const std::string path = "/" + g.app + "/" + g.build + "/" + fs::path(u.file).filename().string();
        slow->serve(path, value);
        headers.emplace_back("restack.location", slow->base() + path);
        value.clear();
      }
      produce(producer, topics.symbols, g.app + ":" + g.build, value, headers);
    }
    g.uploads_sent = true;
  };

  // Early uploads first, acknowledged before any event.
  for (Group& g : groups) {
    if (!g.late) sendUploads(g);
  }
  rd_kafka_flush(producer, 60000);
  say("early uploads of %zu groups acknowledged",
      std::count_if(groups.begin(), groups.end(), [](const Group& g) { return !g.late; }));

  FaultCounts counts;
  FaultInjector injector(o, workers, filler, counts);
  std::atomic<bool> stop_faults{false};
  std::thread faults([&] { injector.run(stop_faults); });

  // Events at an even pace over 60% of the run; late uploads once 40% of their group is out.
  const auto produce_time = std::chrono::milliseconds(static_cast<int64_t>(o.minutes * 60000 * 0.6));
  const auto produce_start = Clock::now();
  size_t next = 0;
  while (next < plan.size()) {
    if (workers.configRejected()) {
      say("a worker rejected its configuration (see %s)%s", workers.logPath(0).c_str(),
          o.mode.empty() ? "" : "; does this restack know kafka.delivery?");
      stop_faults = true;
      faults.join();
      stop_collect = true;
      collector.join();
      rd_kafka_destroy(producer);
      if (filler) filler->unmount();
      return 2;
    }
    const double elapsed =
        std::chrono::duration<double>(Clock::now() - produce_start) / std::chrono::duration<double>(produce_time);
    const size_t due = std::min(plan.size(), static_cast<size_t>(elapsed * static_cast<double>(plan.size())) + 1);
    for (; next < due; ++next) {
      const PlannedEvent& e = plan[next];
      Group& g = groups[e.group];
      const Template* t = nullptr;
      for (const Template& candidate : templates) {
        if (candidate.id == e.template_id) t = &candidate;
      }
      produce(producer, topics.events, g.app + ":" + g.build, instantiate(*t, g, e.event_id));
      ++g.produced;
      if (g.late && !g.uploads_sent && g.produced * 10 >= g.total * 4) {
        sendUploads(g);
        say("late uploads of %s:%s produced after %zu of its %zu events%s", g.app.c_str(), g.build.c_str(), g.produced,
            g.total, g.slow && slow ? " (mapping.txt from the slow location)" : "");
      }
    }
    rd_kafka_poll(producer, 0);
    std::this_thread::sleep_for(50ms);
  }
  for (Group& g : groups) {
    if (!g.uploads_sent) sendUploads(g);
  }
  while (rd_kafka_outq_len(producer) > 0) rd_kafka_flush(producer, 1000);
  say("all %zu events produced and acknowledged (%llu delivery errors reported and retried by the client)", plan.size(),
      static_cast<unsigned long long>(g_delivery_failures.load()));

  // Faults go on a little longer, then the workers drain.
  const auto faults_until = g_start + std::chrono::milliseconds(static_cast<int64_t>(o.minutes * 60000 * 0.8));
  while (Clock::now() < faults_until) std::this_thread::sleep_for(200ms);
  stop_faults = true;
  faults.join();
  say("faults over: %llu worker kills, %llu pauses, %llu broker outages, %llu store-full; draining",
      static_cast<unsigned long long>(counts.kills.load()), static_cast<unsigned long long>(counts.pauses.load()),
      static_cast<unsigned long long>(counts.broker_outages.load()),
      static_cast<unsigned long long>(counts.store_full.load()));

  auto currentTally = [&] {
    std::lock_guard lock(collected.mutex);
    return tally(expected, collected.restored, collected.dead_letters);
  };
  // Done when every event has its final outcome, or when the group has committed everything and
  // nothing new arrived for 30 s since the faults ended, or after the drain budget. Quiet time
  // before the faults ended does not count: an events partition handed over by the last fault goes
  // to a worker that may still have to fetch its symbols (the slow location takes 10 s per file)
  // before its waiting events come out restored.
  const int64_t faults_over_ms = sinceStartMs();
  const auto drain_deadline = Clock::now() + std::chrono::seconds(std::max(120, static_cast<int>(o.minutes * 30)));
  while (Clock::now() < drain_deadline) {
    std::this_thread::sleep_for(5s);
    Tally t = currentTally();
    const int64_t lag = groupLag(o.bootstrap, "restack-fault", topics.events, o.partitions);
    const int64_t quiet_ms = sinceStartMs() - std::max<int64_t>(collected.last_record_ms, faults_over_ms);
    say("drain: %llu of %llu events have their final outcome, group lag %lld, quiet for %.0f s",
        static_cast<unsigned long long>(t.restored + t.wrong), static_cast<unsigned long long>(t.events),
        static_cast<long long>(lag), quiet_ms / 1000.0);
    if (t.lost == 0) break;
    if (lag == 0 && quiet_ms > 30000) break;
  }
  workers.terminateAll(30);
  // Whatever the last clean shutdowns published.
  std::this_thread::sleep_for(5s);
  stop_collect = true;
  collector.join();
  rd_kafka_destroy(producer);
  if (filler) filler->unmount();

  Tally t = currentTally();
  const uint64_t kills = counts.kills;
  const uint64_t outages = counts.broker_outages;
  // at_least_once: a worker repeats outputs only when it gives up partitions without having
  // committed what it published: when it dies (a kill, an exit on its own), when the group takes
  // its assignment away (a pause past the session timeout, or a rebalance that a fault set off
  // while it was busy: its log says "lost"), or when a commit is refused as it hands partitions
  // over (after a broker outage moved the group coordinator: "could not be committed before it
  // moved"). Each time, at most the publication in flight and the batch restored beside it are
  // restored again by the next owner: two batches of at most batch_size events. One fault can
  // cost several workers their assignment, so the worker logs are counted, not the faults.
  uint64_t handovers = 0;
  for (size_t i = 0; i < workers.size(); ++i) {
    std::ifstream log(workers.logPath(i));
    for (std::string line; std::getline(log, line);) {
      if (line.find("] lost ") != std::string::npos ||
          line.find("could not be committed before it moved") != std::string::npos) {
        ++handovers;
      }
    }
  }
  const uint64_t interruptions = kills + workers.unplannedExits() + handovers + 1;
  const uint64_t bound = interruptions * 2 * static_cast<uint64_t>(o.batch_size);
  say("details: %llu restored after a provisional pending output, %llu lost that only got a provisional output, "
      "%llu worker pauses, %llu store-full, %llu worker exits on their own%s%s, %llu restored records of unknown "
      "events, "
      "%llu unreadable output records",
      static_cast<unsigned long long>(t.restored_late), static_cast<unsigned long long>(t.stuck_pending),
      static_cast<unsigned long long>(counts.pauses.load()), static_cast<unsigned long long>(counts.store_full.load()),
      static_cast<unsigned long long>(workers.unplannedExits()), workers.unplannedExits() ? " (last: " : "",
      workers.unplannedExits() ? (workers.lastUnplannedExit() + ")").c_str() : "",
      static_cast<unsigned long long>(t.unknown_records), static_cast<unsigned long long>(collected.unreadable));
  if (slow) {
    say("slow location: %llu requests, %llu answered in full", static_cast<unsigned long long>(slow->requests()),
        static_cast<unsigned long long>(slow->completed()));
  }
  if (o.mode != "exactly_once") {
    say("at-least-once bound: %llu duplicates (%llu kills, %llu exits, %llu partition handovers without a commit, "
        "plus 1, x 2 batches of %d)",
        static_cast<unsigned long long>(bound), static_cast<unsigned long long>(kills),
        static_cast<unsigned long long>(workers.unplannedExits()), static_cast<unsigned long long>(handovers),
        o.batch_size);
  }
  for (const std::string& other : collected.other_dlq) say("DLQ record that is no event: %s", other.c_str());
  for (const std::string& line : t.samples) say("%s", line.c_str());
  if (!t.duplicated_by_group.empty()) {
    std::string line;
    for (const auto& [group, count] : t.duplicated_by_group) {
      line += (line.empty() ? "" : ", ") + group + " " + std::to_string(count);
    }
    say("duplicates by build: %s", line.c_str());
  }

  const std::string mode = o.mode.empty() ? "default" : o.mode;
  bool failed = t.lost > 0 || t.wrong > 0;
  if (o.mode == "exactly_once" && t.duplicated > 0) failed = true;
  if (o.mode != "exactly_once" && t.duplicated > bound) {
    say("duplicates %llu exceed the at-least-once bound %llu (its line above says what it counts)",
        static_cast<unsigned long long>(t.duplicated), static_cast<unsigned long long>(bound));
    failed = true;
  }
  std::printf(
      "fault: events %llu, restored %llu, lost %llu, duplicated %llu, wrong %llu, kills %llu, broker outages "
      "%llu, mode %s\n",
      static_cast<unsigned long long>(t.events), static_cast<unsigned long long>(t.restored),
      static_cast<unsigned long long>(t.lost), static_cast<unsigned long long>(t.duplicated),
      static_cast<unsigned long long>(t.wrong), static_cast<unsigned long long>(kills),
      static_cast<unsigned long long>(outages), mode.c_str());
  std::fflush(stdout);
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace restack::fault

int main(int argc, char** argv) {
  auto options = restack::fault::parseOptions(argc, argv);
  if (!options) return 2;
  return restack::fault::runTest(*options);
}
