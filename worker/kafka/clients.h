// librdkafka client construction from the configuration. A client's properties come in three
// layers, applied in this order so that each one wins over the one before:
//   1. Restack's defaults the operator may change (client.id for quotas, compression, linger);
//   2. the operator's pass-through properties (config.kafka.properties: TLS, SASL, timeouts …);
//   3. Restack's own settings, which its guarantees depend on (acks, idempotence, offsets …).
// The configuration already refuses pass-through properties that would touch layer 3
// (config::protectedPropertyReason); the layering makes Restack's settings win regardless.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "formats/common/status.h"

namespace restack::worker {

class KafkaProperties {
 public:
  using Map = std::map<std::string, std::string>;
  explicit KafkaProperties(Map passthrough = {}) : passthrough_(std::move(passthrough)) {}

  // Restack's own setting: wins over a pass-through property of the same name. insert() and
  // operator[] keep the spelling of the callers that built a std::map before.
  void set(const std::string& name, std::string value) { own_[name] = std::move(value); }
  void insert(std::pair<std::string, std::string> entry) { set(entry.first, std::move(entry.second)); }
  std::string& operator[](const std::string& name) { return own_[name]; }
  // A default the operator's pass-through properties may override.
  void setDefault(const std::string& name, std::string value) { defaults_[name] = std::move(value); }

  const Map& defaults() const { return defaults_; }
  const Map& passthrough() const { return passthrough_; }
  const Map& own() const { return own_; }

 private:
  Map defaults_;
  Map passthrough_;
  Map own_;
};

// Properties every client gets: brokers and (overridable) client.id over config.kafka.properties.
KafkaProperties commonProperties(const config::Config& config, const std::string& client_id);

// Errors name the property; its value only when the name is not secret-like
// (config::isSecretProperty), and librdkafka's message is cleaned of secret values too.
Expected<std::unique_ptr<RdKafka::Conf>> makeConf(const KafkaProperties& properties);

// Idempotent producer, acks=all, murmur2 partitioning (the Java client's), lz4.
Expected<std::unique_ptr<RdKafka::Producer>> makeProducer(const config::Config& config, const std::string& client_id,
                                                          RdKafka::DeliveryReportCb* delivery_reports);

// The exactly_once producer's properties: makeProducer's, transactional.id, and defaults for
// transaction.timeout.ms (60 s) and retry.backoff.ms (20 ms) that kafka.properties may override.
KafkaProperties transactionalProducerProperties(const config::Config& config, const std::string& client_id,
                                                int turn = 0);

// An exactly_once producer: makeProducer's settings plus transactional.id, transactionalId(config,
// turn). init_transactions has run when it returns: a previous producer with the same id is fenced
// and its open transaction aborted.
Expected<std::unique_ptr<RdKafka::Producer>> makeTransactionalProducer(const config::Config& config,
                                                                       const std::string& client_id,
                                                                       RdKafka::DeliveryReportCb* delivery_reports,
                                                                       int turn = 0);

// The pending reader's properties: it never joins the group nor commits (its partitions are
// assigned by hand and read from the start, read_committed, to their end), and waits 50 ms for a
// fetch at a partition's end unless kafka.properties says otherwise.
KafkaProperties pendingReaderProperties(const config::Config& config);

// The transactional.id of the worker's producer `turn`: config.kafka.transactional_id, or
// "<group_id>-<hostname>" when it is empty, for turn 0, and that id + ".<turn>" for the others.
// An exactly_once worker has two producers and commits its batches with them in turn
// (worker/kafka/worker.cc, `publish`).
std::string transactionalId(const config::Config& config, int turn = 0);

std::string errorText(RdKafka::ErrorCode code);

// The number of partitions of `topic`, from one metadata request through `client`; an error when
// the topic does not exist or the brokers do not answer within `timeout_ms`.
Expected<int> partitionCount(RdKafka::Handle& client, const std::string& topic, int timeout_ms = 30000);

// Topic handles a client keeps open for its life, with what could not be looked up.
struct KnownTopics {
  std::vector<std::unique_ptr<RdKafka::Topic>> handles;  // destroy before their client
  std::string failures;                                  // "" when every topic was looked up
};

// Looks up `topics` through `client` and keeps a handle on each, so that librdkafka knows their
// partitions' leaders before the client first uses them and keeps them current with its periodic
// metadata refresh. A producer's first record to a topic it has not looked up waits for that
// lookup, 0.5-0.7 s on a local broker (docs/benchmarks.md, "The first record to a topic"); in
// exactly_once mode the whole transaction waits with it. A consumer assigned a partition of such a
// topic waits as long before it starts reading. What could not be looked up is also logged.
KnownTopics learnTopicLeaders(RdKafka::Handle& client, const std::vector<std::string>& topics, int timeout_ms = 10000);

}  // namespace restack::worker
