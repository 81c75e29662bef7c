#include "tests/support/run_command.h"

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "formats/common/text_lines.h"

namespace restack::test_support {

std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

CommandOutput runCommand(const std::string& command, const std::string& dir, const std::string& stdin_file,
                         bool merge_stderr) {
  std::string full = "(" + command + ") <" + shellQuote(stdin_file.empty() ? "/dev/null" : stdin_file);
  if (merge_stderr) full += " 2>&1";
  if (!dir.empty()) full = "cd " + shellQuote(dir) + " && " + full;
  CommandOutput result;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool writeTextFile(const std::string& path, const std::string& text) {
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) {
    ADD_FAILURE() << "cannot write " << path;
    return false;
  }
  return true;
}

std::vector<std::string> outputLines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::string_view line : splitLines(text)) lines.emplace_back(line);
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

}  // namespace restack::test_support
