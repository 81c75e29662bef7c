// Runs a shell command for a test and keeps what it printed and how it exited.
#pragma once

#include <string>

namespace restack::test_support {

struct CommandOutput {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string output;  // stdout, and stderr when `merge_stderr`
};

// Runs `command` through /bin/sh in `dir` ("" = the current folder), with `stdin_file` ("" =
// /dev/null) as its standard input.
CommandOutput runCommand(const std::string& command, const std::string& dir = "", const std::string& stdin_file = "",
                         bool merge_stderr = true);

// `text` quoted for /bin/sh.
std::string shellQuote(const std::string& text);

}  // namespace restack::test_support
