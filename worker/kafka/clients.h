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

// The exactly_once producer: makeProducer's settings plus transactional.id
// (config.kafka.transactional_id, default "<group_id>-<hostname>", see transactionalId()).
// init_transactions has run when it returns: a previous producer with the same id is fenced and
// its open transaction aborted.
Expected<std::unique_ptr<RdKafka::Producer>> makeTransactionalProducer(const config::Config& config,
                                                                       const std::string& client_id,
                                                                       RdKafka::DeliveryReportCb* delivery_reports);

// config.kafka.transactional_id, or "<group_id>-<hostname>" when it is empty.
std::string transactionalId(const config::Config& config);

std::string errorText(RdKafka::ErrorCode code);

}  // namespace restack::worker
