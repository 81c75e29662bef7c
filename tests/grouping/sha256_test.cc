// SHA-256 (grouping/sha256.h) against coreutils' sha256sum on inputs around every padding boundary.
#include "grouping/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

namespace restack::grouping {
namespace {

std::string referenceSha256(const std::string& bytes) {
  auto path = std::filesystem::temp_directory_path() / ("restack-sha-" + std::to_string(::getpid()));
  std::ofstream(path, std::ios::binary) << bytes;
  std::string command = "sha256sum '" + path.string() + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << "sha256sum (coreutils) is needed";
  char buffer[128] = {};
  size_t n = pipe ? std::fread(buffer, 1, 64, pipe) : 0;
  if (pipe) ::pclose(pipe);
  std::filesystem::remove(path);
  return std::string(buffer, n);
}

TEST(Sha256, MatchesSha256sum) {
  std::mt19937 random(7);
  for (size_t size : {0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 1000, 4099}) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    Sha256 whole;
    whole.update(bytes);
    const std::string ours = toHex(whole.finish());
    ASSERT_EQ(ours, referenceSha256(bytes)) << "size " << size;
    // Feeding in odd pieces gives the same digest.
    Sha256 pieces;
    for (size_t at = 0; at < bytes.size(); at += 7) pieces.update(std::string_view(bytes).substr(at, 7));
    EXPECT_EQ(toHex(pieces.finish()), ours);
    // The one-call digest fingerprints use (hashComponents).
    EXPECT_EQ(toHex(sha256(bytes)), ours);
  }
}

}  // namespace
}  // namespace restack::grouping
