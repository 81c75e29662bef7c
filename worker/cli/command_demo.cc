// restack demo: the pipeline end to end on an embedded Kafka, no external services.
#include "worker/cli/commands.h"
#include "worker/demo/demo_runner.h"

namespace restack::cli {

Command addDemoCommand(CLI::App& app) {
  auto options = std::make_shared<demo::DemoOptions>();
  CLI::App* command = app.add_subcommand(
      "demo",
      "Start librdkafka's mock cluster, create the topics, publish the bundled sample symbol files and events of "
      "every stack kind, run the worker, and print raw and restored stacks side by side.");
  command->add_option("--timeout", options->timeout_seconds, "Seconds to wait for the restored events")
      ->default_val(120);
  command->add_flag("--verbose", options->verbose, "Show the worker's log");
  return [options] { return demo::runDemo(*options); };
}

}  // namespace restack::cli
