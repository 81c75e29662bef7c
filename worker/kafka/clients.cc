#include "worker/kafka/clients.h"

#include <unistd.h>

#include <memory>

namespace restack::worker {

std::map<std::string, std::string> commonProperties(const config::Config& config, const std::string& client_id) {
  std::map<std::string, std::string> properties = {
      {"bootstrap.servers", config.kafka.brokers},
      {"client.id", client_id},
  };
  for (const auto& [key, value] : config.kafka.properties) properties[key] = value;
  return properties;
}

Expected<std::unique_ptr<RdKafka::Conf>> makeConf(const std::map<std::string, std::string>& properties) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  for (const auto& [key, value] : properties) {
    if (conf->set(key, value, error) != RdKafka::Conf::CONF_OK) {
      return invalidArgument("kafka property " + key + "=" + value + ": " + error);
    }
  }
  return conf;
}

Expected<std::unique_ptr<RdKafka::Producer>> makeProducer(const config::Config& config, const std::string& client_id,
                                                          RdKafka::DeliveryReportCb* delivery_reports) {
  auto properties = commonProperties(config, client_id);
  // Restack's guarantees: nothing lost, no reordering, keys land where the Java client puts them.
  properties.insert({"enable.idempotence", "true"});
  properties.insert({"acks", "all"});
  properties.insert({"partitioner", "murmur2_random"});
  properties.insert({"compression.type", "lz4"});
  properties.insert({"linger.ms", "5"});
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

std::string transactionalId(const config::Config& config) {
  if (!config.kafka.transactional_id.empty()) return config.kafka.transactional_id;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return config.kafka.group_id + "-worker";
  return config.kafka.group_id + "-" + host;
}

Expected<std::unique_ptr<RdKafka::Producer>> makeTransactionalProducer(const config::Config& config,
                                                                       const std::string& client_id,
                                                                       RdKafka::DeliveryReportCb* delivery_reports) {
  config::Config transactional = config;
  // Set through the pass-through map so that the same merging rules apply as for every property.
  transactional.kafka.properties["transactional.id"] = transactionalId(config);
  // An open transaction of a worker that died blocks read_committed consumers of its partitions
  // until the broker aborts it; one minute bounds that stall.
  transactional.kafka.properties.insert({"transaction.timeout.ms", "60000"});
  auto producer = makeProducer(transactional, client_id, delivery_reports);
  if (!producer) return producer.error();
  // Fences an earlier producer with this id and aborts what it left open; retried while the
  // transaction coordinator is still loading.
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<RdKafka::Error> error((*producer)->init_transactions(60000));
    if (!error) break;
    if (!error->is_retriable() || attempt >= 5) {
      return ioError("cannot initialise transactions of " + transactionalId(config) + ": " + error->str() +
                     " (does the broker run a transaction coordinator? kafka.delivery=at_least_once works without)");
    }
  }
  return std::move(*producer);
}

std::string errorText(RdKafka::ErrorCode code) {
  return RdKafka::err2str(code);
}

}  // namespace restack::worker
