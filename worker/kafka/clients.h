// librdkafka client construction from the configuration: the properties Restack needs for its
// guarantees, then the operator's pass-through properties (TLS, SASL, timeouts …).
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <map>
#include <memory>
#include <string>

#include "config/config.h"
#include "formats/common/status.h"

namespace restack::worker {

// Properties every client gets: brokers, client.id, and config.kafka.properties.
std::map<std::string, std::string> commonProperties(const config::Config& config, const std::string& client_id);

Expected<std::unique_ptr<RdKafka::Conf>> makeConf(const std::map<std::string, std::string>& properties);

// Idempotent producer, acks=all, murmur2 partitioning (the Java client's), lz4.
Expected<std::unique_ptr<RdKafka::Producer>> makeProducer(const config::Config& config, const std::string& client_id,
                                                          RdKafka::DeliveryReportCb* delivery_reports);

std::string errorText(RdKafka::ErrorCode code);

}  // namespace restack::worker
