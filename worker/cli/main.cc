// restack: the worker, the operator tool and the offline tool in one binary.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <map>

#include "worker/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Restack restores crash, ANR and lag stacks (iOS, Android native, Android Java, Web H5, React Native)\n"
      "against symbol files parsed once into a local RocksDB store, as a Kafka worker or offline."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("restack 0.1.0"));
  std::map<CLI::App*, restack::cli::Command> commands;
  auto add = [&](restack::cli::Command (*factory)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    auto command = factory(app);
    commands[app.get_subcommands({})[before]] = std::move(command);
  };
  add(restack::cli::addRunCommand);
  add(restack::cli::addDemoCommand);
  add(restack::cli::addIngestCommand);
  add(restack::cli::addSymbolicateCommand);
  add(restack::cli::addMissingCommand);
  spdlog::set_default_logger(spdlog::stderr_color_mt("restack"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version end here too (exit 0); any other parse error is a usage error, and
    // usage errors exit 2 whichever CLI11 code they carry (docs/design.md §7).
    return app.exit(error) == 0 ? 0 : 2;
  }
  for (auto& [subcommand, run] : commands) {
    if (subcommand->parsed()) return run();
  }
  return 2;
}
