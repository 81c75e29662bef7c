#include "tests/support/rdkafka_handles.h"

namespace restack::testkafka {

void KafkaClientDeleter::operator()(rd_kafka_t* client) const {
  if (rd_kafka_type(client) == RD_KAFKA_CONSUMER) rd_kafka_consumer_close(client);
  rd_kafka_destroy(client);
}

Expected<KafkaClient> makeClient(rd_kafka_type_t type, const KafkaProperties& properties,
                                 const std::function<void(rd_kafka_conf_t*)>& customize) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return invalidArgument("librdkafka property " + name + "=" + value + ": " + errstr);
    }
  }
  if (customize) customize(conf);
  rd_kafka_t* client = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (client == nullptr) {  // on failure the configuration still belongs to us
    rd_kafka_conf_destroy(conf);
    return invalidArgument(std::string("creating a librdkafka client failed: ") + errstr);
  }
  if (type == RD_KAFKA_CONSUMER) rd_kafka_poll_set_consumer(client);
  return KafkaClient(client);
}

std::string describeKafkaError(rd_kafka_resp_err_t error) {
  return std::string(rd_kafka_err2str(error)) + " (" + rd_kafka_err2name(error) + ")";
}

}  // namespace restack::testkafka
