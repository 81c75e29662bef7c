// restack missing: the symbol-demand feed (kafka.topics.symbols_missing, docs/design.md §13) as a
// table or JSON Lines: which symbol files events needed and did not find, per app and build.
#include <librdkafka/rdkafkacpp.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>

#include "config/config.h"
#include "worker/cli/commands.h"
#include "worker/kafka/clients.h"
#include "worker/kafka/symbol_demand.h"

namespace restack::cli {
namespace {

struct MissingFlags {
  std::string config_path;
  std::string app;
  std::string build;
  bool json = false;
  uint32_t timeout_ms = 10000;
};

std::string isoTime(int64_t ms) {
  if (ms <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void printTable(const std::vector<worker::DemandRecord>& records) {
  const std::vector<std::string> header = {"APP",    "BUILD",  "KIND",       "IDENTIFIER", "MODULE",
                                           "EVENTS", "FRAMES", "FIRST SEEN", "LAST SEEN"};
  std::vector<std::vector<std::string>> rows;
  for (const worker::DemandRecord& r : records) {
    rows.push_back({r.app, r.build_id, r.kind, r.identifier, r.module.empty() ? "-" : r.module,
                    std::to_string(r.events), std::to_string(r.frames), isoTime(r.first_seen_ms),
                    isoTime(r.last_seen_ms)});
  }
  std::vector<size_t> widths(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    widths[c] = header[c].size();
    for (const auto& row : rows) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool number = c == 5 || c == 6;
      const std::string pad(widths[c] - row[c].size(), ' ');
      line += number ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : "");
      if (c + 1 < row.size()) line += "  ";
    }
    std::cout << line << "\n";
  };
  print(header);
  for (const auto& row : rows) print(row);
}

int missing(const MissingFlags& flags) {
  auto config = config::loadConfig(flags.config_path, config::processEnvironment());
  if (!config) {
    std::cerr << "restack missing: " << config.error().message() << "\n";
    return 2;
  }
  const std::string& topic = config->kafka.topics.symbols_missing;
  // A plain reader: partitions assigned by hand, nothing committed, committed records only.
  auto properties = worker::commonProperties(*config, "restack-missing");
  properties.insert({"group.id", config->kafka.group_id + ".missing-reader"});
  properties.insert({"enable.auto.commit", "false"});
  properties.insert({"enable.partition.eof", "true"});
  properties.insert({"isolation.level", "read_committed"});
  auto conf = worker::makeConf(properties);
  if (!conf) {
    std::cerr << "restack missing: " << conf.error().message() << "\n";
    return 1;
  }
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> reader(RdKafka::KafkaConsumer::create(conf->get(), error));
  if (!reader) {
    std::cerr << "restack missing: cannot create the Kafka consumer: " << error << "\n";
    return 1;
  }
  const std::chrono::milliseconds timeout(flags.timeout_ms);
  auto partitions = worker::demandTopicPartitions(*reader, topic, timeout);
  if (!partitions) {
    std::cerr << "restack missing: " << partitions.error().message();
    if (partitions.error().code() == ErrorCode::kNotFound) {
      std::cerr << " (kafka.topics.symbols_missing; the topic is created as in docs/operations.md §1)";
    }
    std::cerr << "\n";
    reader->close();
    return 1;
  }
  std::vector<int32_t> all(static_cast<size_t>(*partitions));
  for (int32_t p = 0; p < *partitions; ++p) all[static_cast<size_t>(p)] = p;
  // Last record per key wins, a tombstone deletes: the compacted topic's state.
  std::map<std::string, worker::DemandRecord> state;
  uint64_t unreadable = 0;
  Status read = worker::readDemandPartitions(
      *reader, topic, all, timeout,
      [&](int32_t partition, std::string_view key, std::optional<std::string_view> value) -> Status {
        const std::string name(key);
        if (!value) {
          state.erase(name);
          return Status::ok();
        }
        auto record = worker::decodeDemandRecord(*value);
        if (!record) {
          if (++unreadable <= 10) {
            std::cerr << "restack missing: " << topic << "/" << partition << " key " << name
                      << " skipped: " << record.error().message() << "\n";
          }
          return Status::ok();
        }
        state[name] = std::move(*record);
        return Status::ok();
      });
  reader->close();
  if (!read) {
    std::cerr << "restack missing: " << read.error().message() << "\n";
    return 1;
  }
  std::vector<worker::DemandRecord> records;
  for (auto& [key, record] : state) {
    if (!flags.app.empty() && record.app != flags.app) continue;
    if (!flags.build.empty() && record.build_id != flags.build) continue;
    records.push_back(std::move(record));
  }
  if (flags.json) {
    for (const worker::DemandRecord& record : records) std::cout << worker::encodeDemandRecord(record) << "\n";
  } else {
    printTable(records);
  }
  if (unreadable > 0) std::cerr << "restack missing: " << unreadable << " record(s) could not be read\n";
  return 0;
}

}  // namespace

Command addMissingCommand(CLI::App& app) {
  auto flags = std::make_shared<MissingFlags>();
  CLI::App* command = app.add_subcommand(
      "missing",
      "List the symbol files events needed and did not find: the symbol-demand topic "
      "(kafka.topics.symbols_missing) read from its start to its end, one line per app, build, stack kind and "
      "missing identifier (debug id, mapping id, bundle or file name) with the events and frames that needed it "
      "and when it was first and last seen. Demands met by an upload are gone.");
  command->add_option("--config", flags->config_path, "YAML configuration (brokers, topic names, Kafka properties)")
      ->required();
  command->add_option("--app", flags->app, "Only this app");
  command->add_option("--build", flags->build, "Only this build id");
  command->add_flag("--json", flags->json, "JSON Lines, one record per line as on the topic, instead of a table");
  command
      ->add_option("--timeout-ms", flags->timeout_ms,
                   "Give up when the brokers do not answer (or the topic makes no progress) for this long")
      ->default_val(10000)
      ->check(CLI::Range(100u, 3600000u));
  return [flags] { return missing(*flags); };
}

}  // namespace restack::cli
