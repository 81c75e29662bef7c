// Helpers of the tests that run real Java tools (proguard_tools_test.cc,
// accuracy_corpus_test.cc): shell commands, and the "... N more" expansion that makes an
// original and a restored trace comparable.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "formats/common/status.h"

namespace restack::testing {

// Runs a shell command; returns its stdout, or an error with its output when it fails.
inline Expected<std::string> run(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return ioError("cannot run: " + command);
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  int status = pclose(pipe);
  if (status != 0) return ioError("command failed (" + std::to_string(status) + "): " + command + "\n" + output);
  return output;
}

inline std::string quote(const std::filesystem::path& path) {
  return "'" + path.string() + "'";
}

// Replaces every "... N more" with the N last frames of the enclosing trace, as Java elided
// them. The count itself depends on how many physical frames there were, which inlining changes
// (a frame the original run elided may be printed by the obfuscated one, restored from an
// inlined caller); the expanded traces must be equal.
inline std::string expandMoreLines(const std::string& trace) {
  struct Block {
    size_t indent = 0;
    std::vector<std::string> frames;  // "at ..." without indentation
  };
  std::vector<Block> blocks;
  std::string out;
  std::istringstream in(trace);
  std::string line;
  const std::regex more(R"(^(\s*)\.\.\. (\d+) more$)");
  while (std::getline(in, line)) {
    size_t indent = line.find_first_not_of(" \t");
    if (indent == std::string::npos) indent = line.size();
    std::string text = line.substr(indent);
    std::smatch match;
    if (text.starts_with("at ") && !blocks.empty()) {
      blocks.back().frames.push_back(text);
    } else if (std::regex_match(line, match, more) && blocks.size() >= 1) {
      const Block& current = blocks.back();
      // The enclosing trace: the previous block at the same indent ("Caused by:") or the
      // nearest one indented less ("Suppressed:").
      const Block* enclosing = nullptr;
      for (size_t i = blocks.size() - 1; i-- > 0;) {
        if (blocks[i].indent <= current.indent) {
          enclosing = &blocks[i];
          break;
        }
      }
      size_t count = std::stoul(match[2].str());
      if (enclosing != nullptr && count <= enclosing->frames.size()) {
        std::string prefix = line.substr(0, indent);
        std::vector<std::string> tail(enclosing->frames.end() - static_cast<long>(count), enclosing->frames.end());
        for (const std::string& frame : tail) {
          out += prefix + frame + "\n";
          blocks.back().frames.push_back(frame);
        }
        continue;
      }
    } else if (!text.starts_with("===")) {
      blocks.push_back(Block{indent, {}});
    } else {
      blocks.clear();
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace restack::testing
