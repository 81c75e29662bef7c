// restack run: the Kafka worker.
#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <iostream>

#include "config/config.h"
#include "worker/cli/commands.h"
#include "worker/kafka/http_status.h"
#include "worker/kafka/worker.h"
#include "worker/logging/log.h"

namespace restack::cli {
namespace {

std::atomic<bool> g_stop{false};

void onSignal(int) {
  g_stop = true;
}

int run(const std::string& config_path) {
  auto config = config::loadConfig(config_path, config::processEnvironment());
  if (!config) {
    std::cerr << "restack run: " << config.error().message() << "\n";
    return 2;
  }
  if (Status logging = logging::configureLogging(config->observability.log_level, config->observability.log_format);
      !logging) {
    std::cerr << "restack run: " << logging.error().message() << "\n";
    return 2;
  }
  std::signal(SIGTERM, onSignal);
  std::signal(SIGINT, onSignal);

  worker::Metrics metrics;
  std::unique_ptr<worker::HttpStatusServer> status;
  if (config->observability.http_port != 0) {
    auto started =
        worker::HttpStatusServer::start(config->observability.http_port, metrics, config->observability.bind_address);
    if (!started) {
      spdlog::error("{}", started.error().message());
      return 1;
    }
    status = std::move(*started);
  }
  spdlog::info("restack worker starting: brokers {}, group {}, store {}", config->kafka.brokers, config->kafka.group_id,
               config->store.path);
  auto worker = worker::Worker::create(*config, metrics);
  if (!worker) {
    spdlog::error("cannot start: {}", worker.error().message());
    return 1;
  }
  Status result = (*worker)->run(g_stop);
  if (!result) {
    spdlog::error("worker stopped: {}", result.error().message());
    return 1;
  }
  spdlog::info("restack worker stopped cleanly");
  return 0;
}

}  // namespace

Command addRunCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "run",
      "Run the Kafka worker: consume raw events, restore them, publish restored events, fingerprints and DLQ "
      "records. SIGTERM finishes the batch in flight, commits and leaves the group.");
  command->add_option("--config", *path, "YAML configuration (see config/restack.example.yaml)")->required();
  return [path] { return run(*path); };
}

}  // namespace restack::cli
