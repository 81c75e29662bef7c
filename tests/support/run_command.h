// Runs a shell command for a test and keeps what it printed and how it exited; writes the files
// such commands read.
#pragma once

#include <string>
#include <vector>

namespace restack::test_support {

struct CommandOutput {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string output;  // stdout, and stderr when `merge_stderr`
};

// Runs `command` through /bin/sh in `dir` ("" = the current folder), with `stdin_file` ("" =
// /dev/null) as its standard input.
CommandOutput runCommand(const std::string& command, const std::string& dir = "", const std::string& stdin_file = "",
                         bool merge_stderr = true);

// Writes `text` to `path`, creating its folder; false (with a test failure) when it cannot.
bool writeTextFile(const std::string& path, const std::string& text);

// The lines of a command's output, "\r\n" or "\n" ended, without a last empty line.
std::vector<std::string> outputLines(const std::string& text);

// `text` quoted for /bin/sh.
std::string shellQuote(const std::string& text);

}  // namespace restack::test_support
