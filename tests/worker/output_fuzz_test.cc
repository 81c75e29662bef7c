// A short deterministic run of the output fuzz entry point (worker/pipeline/fuzz/fuzz_output.h), so
// CI exercises it without libFuzzer: structured seeds, their mutations, random bytes, and every
// input kept in tests/worker/fuzz_regressions/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "worker/pipeline/fuzz/fuzz_output.h"

namespace restack::pipeline {
namespace {

std::map<FuzzOutcome, size_t> outcomes;

void run(const std::string& input) {
  ++outcomes[outputFuzzOne(reinterpret_cast<const uint8_t*>(input.data()), input.size())];
}

std::vector<std::string> seeds() {
  using namespace std::string_literals;
  return {
      // limit 64 + 4 * 0x0100 = 1088 bytes, 8 frames per thread: a thread, frames, restored text.
      "\x01\x00\x07"
      "\x00sdk\0\x01main stack\0\x03pc 0x10|crash_here|crash.c|libcrash.so\0\x0bpc 0x20|entry\0"
      "\x05restored line\0\x83\xff\xfe invalid utf-8\0\xc3"
      "caf\xc3\xa9|f|g"s,
      // a small limit: frames must be dropped, then the event refused.
      "\x00\x20\x01"
      "\x01t\0\x03"
      "a\0\x03"
      "b\0\x03"
      "c\0\x03"
      "d\0\x03"
      "e\0\x05text\0\x00"
      "1234"s,
      // lag samples on two threads, with control characters and quotes.
      "\x00\x80\x03"
      "\x02s1\0\x03\"quoted\"\0\x42s2\0\x04\x01\x02\x1f\0\x05\\\\n\0\x00key\"with\\quote"s,
  };
}

TEST(OutputFuzz, DeterministicRun) {
  std::mt19937 random(4321);
  for (const std::string& seed : seeds()) {
    run(seed);
    for (int round = 0; round < 500; ++round) {
      std::string mutated = seed;
      int edits = 1 + static_cast<int>(random() % 8);
      for (int e = 0; e < edits && !mutated.empty(); ++e) {
        size_t at = random() % mutated.size();
        switch (random() % 4) {
          case 0:
            mutated[at] = static_cast<char>(random());
            break;
          case 1:
            mutated.erase(at, 1 + random() % 4);
            break;
          case 2:
            mutated.insert(at, 1, static_cast<char>(random()));
            break;
          default:
            mutated.insert(at, mutated.substr(random() % mutated.size(), 1 + random() % 64));
        }
      }
      run(mutated);
    }
  }
  for (int round = 0; round < 300; ++round) {
    std::string bytes(random() % 2048, '\0');
    for (char& c : bytes) c = static_cast<char>(random() % 8 == 0 ? 0 : random());
    run(bytes);
  }
  // Every way out was taken: written whole, cut down to fit, refused.
  EXPECT_GT(outcomes[FuzzOutcome::kWhole], 50u);
  EXPECT_GT(outcomes[FuzzOutcome::kCutDown], 50u);
  EXPECT_GT(outcomes[FuzzOutcome::kRefused], 50u);
}

TEST(OutputFuzz, EveryCheckedInRegressionInputSurvives) {
  const std::filesystem::path folder = std::string(RESTACK_SOURCE_DIR) + "/tests/worker/fuzz_regressions";
  size_t files = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (entry.path().extension() != ".bin") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_FALSE(bytes.empty()) << entry.path();
    run(bytes);
    ++files;
  }
  EXPECT_FALSE(error) << error.message();
  EXPECT_GT(files, 0u);
}

}  // namespace
}  // namespace restack::pipeline
