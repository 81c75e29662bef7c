#include "worker/kafka/clients.h"

#include <spdlog/spdlog.h>

namespace restack::worker {
namespace {

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
  return conf;
}

Expected<std::unique_ptr<RdKafka::Producer>> makeProducer(const config::Config& config, const std::string& client_id,
                                                          RdKafka::DeliveryReportCb* delivery_reports) {
  auto properties = commonProperties(config, client_id);
  // Restack's guarantees: nothing lost, no reordering, keys land where the Java client puts them.
  properties.set("enable.idempotence", "true");
  properties.set("acks", "all");
  properties.set("partitioner", "murmur2_random");
  // Tuning the operator may change.
  properties.setDefault("compression.type", "lz4");
  properties.setDefault("linger.ms", "5");
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
