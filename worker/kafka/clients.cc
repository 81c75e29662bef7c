#include "worker/kafka/clients.h"

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

std::string errorText(RdKafka::ErrorCode code) {
  return RdKafka::err2str(code);
}

}  // namespace restack::worker
