// Helpers for the grouping cross-build tests that run real toolchains (label "tools").
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace restack::grouping::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::random_device device;
    path_ =
        std::filesystem::temp_directory_path() / (prefix + std::to_string(device()) + "-" + std::to_string(device()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void writeFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through the shell in `dir`; returns its exit code and merged output.
inline CommandResult run(const std::filesystem::path& dir, const std::string& command) {
  const std::string full = "cd '" + dir.string() + "' && (" + command + ") 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline bool haveCommand(const std::string& name) {
  return run(std::filesystem::temp_directory_path(), "command -v " + name).exit_code == 0;
}

}  // namespace restack::grouping::testing
