// A short deterministic run of the grouping fuzz entry point, so CI exercises it without
// libFuzzer: structured seeds, their mutations and random bytes.
#include "grouping/fuzz/fuzz_entry.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace restack::grouping {
namespace {

std::vector<std::string> seeds() {
  using namespace std::string_literals;
  return {
      "app_packages: [com.shop.]\nignore:\n  - {function: \"*log*\"}\n\0\x10java.lang.NPE|boom 42\0"
      "\x02"
      "com.shop.A.lambda$x$0\0\x02"
      "com.shop.A$1.run\0\x02"
      "android.os.Looper.loop"s,
      "\0\x02SIGSEGV|at 0x10\0\x01void a::b<int>(c<d>) const [clone .cold]|libshop.so\0"
      "\x01__29-[A b]_block_invoke_2|Shop\0\x05|libshop.so"s,
      "fingerprint:\n  - {message: \"*x*\", fingerprint: f}\n\0\x07TypeError|x\0\x23"
      "async Object.f [as g]|"
      "https://h/a.1234abcd.js\0\x23|node_modules/x.js\0\xa3"
      "h|chrome-extension://x/y.js"s,
      "in_app: [\0\x31\0\x31"
      "closure #1 (Int) -> () in A.b(c:) -> ()\0\x31operator<<(\0\x31((((<<<<"s,
  };
}

TEST(GroupingFuzz, DeterministicRun) {
  std::mt19937 random(1234);
  size_t runs = 0;
  for (const std::string& seed : seeds()) {
    groupingFuzzOne(reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
    for (int round = 0; round < 400; ++round) {
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
            mutated.insert(at, mutated.substr(random() % mutated.size(), 1 + random() % 16));
        }
      }
      groupingFuzzOne(reinterpret_cast<const uint8_t*>(mutated.data()), mutated.size());
      ++runs;
    }
  }
  for (int round = 0; round < 500; ++round) {
    std::string bytes(random() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(random() % 4 == 0 ? "\0<>()[]{}$#.:| "[random() % 16] : random());
    groupingFuzzOne(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++runs;
  }
  EXPECT_EQ(runs, seeds().size() * 400 + 500);
}

}  // namespace
}  // namespace restack::grouping
