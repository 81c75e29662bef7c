#include "worker/kafka/clients.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <memory>

#include "worker/logging/log.h"

namespace restack::worker {
namespace {

// librdkafka's log and error lines go through the worker's logger, so that they share its level
// and format (a JSON log stays one JSON object per line). Stateless, so one instance serves every
// client for the life of the process.
class KafkaLogRouter final : public RdKafka::EventCb {
 public:
  void event_cb(RdKafka::Event& event) override {
    switch (event.type()) {
      case RdKafka::Event::EVENT_LOG:
        logging::logFromKafka(static_cast<int>(event.severity()), event.fac(), "librdkafka", event.str());
        break;
      case RdKafka::Event::EVENT_ERROR:
        logging::logFromKafka(event.fatal() ? 2 : 3, RdKafka::err2str(event.err()), "librdkafka", event.str());
        break;
      default:
        break;
    }
  }
};

KafkaLogRouter g_kafka_log_router;

// librdkafka may quote the value it refused ("Invalid value \"…\" for configuration property");
// for a secret that must not reach the message.
std::string withoutValue(std::string text, const std::string& value) {
  if (value.empty()) return text;
  for (size_t at = text.find(value); at != std::string::npos; at = text.find(value, at)) {
    text.replace(at, value.size(), "<redacted>");
    at += 10;
  }
  return text;
}

}  // namespace

KafkaProperties commonProperties(const config::Config& config, const std::string& client_id) {
  KafkaProperties properties(config.kafka.properties);
  properties.set("bootstrap.servers", config.kafka.brokers);
  properties.setDefault("client.id", client_id);
  return properties;
}

Expected<std::unique_ptr<RdKafka::Conf>> makeConf(const KafkaProperties& properties) {
  for (const auto& [name, value] : properties.own()) {
    auto passed = properties.passthrough().find(name);
    if (passed != properties.passthrough().end() && passed->second != value) {
      spdlog::warn("kafka.properties.\"{}\" is ignored: Restack sets this property itself", name);
    }
  }
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  // Layer by layer rather than one merged map: librdkafka has aliases (compression.codec for
  // compression.type, linger.ms for queue.buffering.max.ms …), and the later layer must win
  // whichever spelling each used.
  for (const auto* layer : {&properties.defaults(), &properties.passthrough(), &properties.own()}) {
    for (const auto& [name, value] : *layer) {
      if (conf->set(name, value, error) == RdKafka::Conf::CONF_OK) continue;
      if (config::isSecretProperty(name)) {
        return invalidArgument("kafka property " + name + " (value not shown): " + withoutValue(error, value));
      }
      return invalidArgument("kafka property " + name + "=" + value + ": " + error);
    }
  }
  if (conf->set("event_cb", static_cast<RdKafka::EventCb*>(&g_kafka_log_router), error) != RdKafka::Conf::CONF_OK) {
    return Error(ErrorCode::kInternal, "event_cb: " + error);
  }
  return conf;
}

namespace {

// The idempotent producer's properties: Restack's guarantees (nothing lost, no reordering, keys
// land where the Java client puts them) over the pass-through ones, tuning the operator may change.
KafkaProperties producerProperties(const config::Config& config, const std::string& client_id) {
  KafkaProperties properties = commonProperties(config, client_id);
  properties.set("enable.idempotence", "true");
  properties.set("acks", "all");
  properties.set("partitioner", "murmur2_random");
  properties.setDefault("compression.type", "lz4");
  properties.setDefault("linger.ms", "5");
  return properties;
}

Expected<std::unique_ptr<RdKafka::Producer>> createProducer(const KafkaProperties& properties,
                                                            RdKafka::DeliveryReportCb* delivery_reports) {
  auto conf = makeConf(properties);
  if (!conf) return conf.error();
  std::string error;
  if (delivery_reports && (*conf)->set("dr_cb", delivery_reports, error) != RdKafka::Conf::CONF_OK) {
    return Error(ErrorCode::kInternal, "dr_cb: " + error);
  }
  std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(conf->get(), error));
  if (!producer) return invalidArgument("cannot create the Kafka producer: " + error);
  return producer;
}

}  // namespace

Expected<std::unique_ptr<RdKafka::Producer>> makeProducer(const config::Config& config, const std::string& client_id,
                                                          RdKafka::DeliveryReportCb* delivery_reports) {
  return createProducer(producerProperties(config, client_id), delivery_reports);
}

KafkaProperties pendingReaderProperties(const config::Config& config) {
  KafkaProperties properties = commonProperties(config, "restack-worker-pending");
  properties.insert({"group.id", config.kafka.group_id + ".pending-replay"});
  properties.insert({"enable.auto.commit", "false"});
  properties.insert({"enable.partition.eof", "true"});
  properties.insert({"isolation.level", "read_committed"});
  // A replay ends when every partition reported its end, and a fetch at a partition's end comes
  // back only after this wait (librdkafka's default is 500 ms): each replay, at every start and
  // every assignment, waited that long for nothing. The reader is idle between replays.
  properties.setDefault("fetch.wait.max.ms", "50");
  return properties;
}

std::string transactionalId(const config::Config& config, int turn) {
  std::string id = config.kafka.transactional_id;
  if (id.empty()) {
    char host[256] = {};
    id = ::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0' ? config.kafka.group_id + "-worker"
                                                                      : config.kafka.group_id + "-" + host;
  }
  return turn == 0 ? id : id + "." + std::to_string(turn);
}

KafkaProperties transactionalProducerProperties(const config::Config& config, const std::string& client_id, int turn) {
  KafkaProperties properties = producerProperties(config, client_id);
  properties.set("transactional.id", transactionalId(config, turn));  // kafka.transactional_id
  // An open transaction of a worker that died blocks read_committed consumers of its partitions
  // until the broker aborts it; one minute bounds that stall (the operator may choose another).
  properties.setDefault("transaction.timeout.ms", "60000");
  // A transaction's first requests often reach the coordinator while it still completes the
  // previous commit (its markers): it answers CONCURRENT_TRANSACTIONS, and librdkafka retries
  // AddPartitionsToTxn after 20 ms but AddOffsetsToTxn after retry.backoff.ms, 100 ms by default.
  // At 2,000 events/s one transaction in 25 paid that, which made the p99 of exactly-once latency
  // (docs/benchmarks.md, "Exactly-once: the offsets' retry"). 20 ms for every request of the
  // transactional producer; an operator's kafka.properties may set another.
  properties.setDefault("retry.backoff.ms", "20");
  return properties;
}

Expected<std::unique_ptr<RdKafka::Producer>> makeTransactionalProducer(const config::Config& config,
                                                                       const std::string& client_id,
                                                                       RdKafka::DeliveryReportCb* delivery_reports,
                                                                       int turn) {
  KafkaProperties properties = transactionalProducerProperties(config, client_id, turn);
  auto producer = createProducer(properties, delivery_reports);
  if (!producer) return producer.error();
  // Fences an earlier producer with this id and aborts what it left open; retried while the
  // transaction coordinator is still loading.
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<RdKafka::Error> error((*producer)->init_transactions(60000));
    if (!error) break;
    if (!error->is_retriable() || attempt >= 5) {
      return ioError("cannot initialise transactions of " + transactionalId(config, turn) + ": " + error->str() +
                     " (does the broker run a transaction coordinator? kafka.delivery=at_least_once works without)");
    }
  }
  return std::move(*producer);
}

std::string errorText(RdKafka::ErrorCode code) {
  return RdKafka::err2str(code);
}

namespace {

// One metadata request for the topic of `handle`: its partition count, or why not, naming the topic.
Expected<int> askPartitionCount(RdKafka::Handle& client, RdKafka::Topic& handle, int timeout_ms) {
  const std::string topic = handle.name();
  RdKafka::Metadata* raw = nullptr;
  RdKafka::ErrorCode code = client.metadata(false, &handle, &raw, timeout_ms);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (code != RdKafka::ERR_NO_ERROR) return ioError("metadata of " + topic + ": " + errorText(code));
  for (const RdKafka::TopicMetadata* found : *metadata->topics()) {
    if (found->topic() != topic) continue;
    if (found->err() != RdKafka::ERR_NO_ERROR) return ioError("topic " + topic + ": " + errorText(found->err()));
    return static_cast<int>(found->partitions()->size());
  }
  return notFound("topic " + topic + " does not exist");
}

}  // namespace

Expected<int> partitionCount(RdKafka::Handle& client, const std::string& topic, int timeout_ms) {
  std::string error;
  std::unique_ptr<RdKafka::Topic> handle(RdKafka::Topic::create(&client, topic, nullptr, error));
  if (!handle) return invalidArgument("topic " + topic + ": " + error);
  return askPartitionCount(client, *handle, timeout_ms);
}

KnownTopics learnTopicLeaders(RdKafka::Handle& client, const std::vector<std::string>& topics, int timeout_ms) {
  KnownTopics known;
  const auto fail = [&](const std::string& why) { known.failures += (known.failures.empty() ? "" : "; ") + why; };
  for (const std::string& topic : topics) {
    std::string error;
    std::unique_ptr<RdKafka::Topic> handle(RdKafka::Topic::create(&client, topic, nullptr, error));
    if (!handle) {
      fail("topic " + topic + ": " + error);
      continue;
    }
    auto asked = askPartitionCount(client, *handle, timeout_ms);
    if (!asked) fail(asked.error().message());
    known.handles.push_back(std::move(handle));
  }
  if (!known.failures.empty()) {
    spdlog::warn("cannot look up at start: {}; the first use of such a topic waits for its lookup", known.failures);
  }
  return known;
}

}  // namespace restack::worker
