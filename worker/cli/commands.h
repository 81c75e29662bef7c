// The subcommands of `restack` (docs/design.md §7). Each registers its flags on the CLI11 app and
// returns the process exit code when run.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace restack::cli {

using Command = std::function<int()>;

Command addRunCommand(CLI::App& app);
Command addDemoCommand(CLI::App& app);
Command addIngestCommand(CLI::App& app);
Command addSymbolicateCommand(CLI::App& app);
Command addMissingCommand(CLI::App& app);

}  // namespace restack::cli
