// A short deterministic run of the fuzz entry point so that CI exercises it: seeds that cover
// every metadata kind, then byte-level mutations of them and random inputs.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "symbolstore/proguard/fuzz/fuzz_entry.h"

namespace restack::proguard {
namespace {

const char* const kSeeds[] = {
    "# pg_map_id: abc\n# {'id':'com.android.tools.r8.mapping','version':'2.2'}\n"
    "a.A -> a:\n# {'id':'sourceFile','fileName':'A.kt'}\n    int f -> a\n"
    "    1:2:void a.B.g(int,long):3:4 -> a\n    1:2:void h():9 -> a\n"
    "    # {'id':'com.android.tools.r8.rewriteFrame','conditions':['throws(La;)'],'actions':['removeInnerFrames(1)']}\n"
    "    3:3:int o():0 -> b\n# {'id':'com.android.tools.r8.outline'}\n"
    "    4:4:int c():0:0 -> c\n# "
    "{'id':'com.android.tools.r8.outlineCallsite','positions':{'3':5},'outline':'La;b()I'}\n"
    "    5:5:int c():70:70 -> c\n    void s() -> d\n# {'id':'com.android.tools.r8.synthesized'}\n"
    "    0:65535:void k():7:7 -> e\n    void x(int):10:12 -> f\n    void y(long) -> f\n",
    ("b.B -> b:\n    1:4294967295:void z():4294967290:4294967295 -> a\n    1:1:void w():1 -> a\n"
     "    void v(int):4294967200:4294967295 -> b\n    void v(long) -> b\n"),
    "c -> c:\n    void m() -> m\n\n\n# {broken\n",
};

TEST(ProguardFuzz, DeterministicRunOverSeedsMutationsAndRandomInputs) {
  std::mt19937 random(20240611);
  int runs = 0;
  for (const char* seed : kSeeds) {
    std::string base(seed);
    fuzzProguardOnce(reinterpret_cast<const uint8_t*>(base.data()), base.size());
    ++runs;
    for (int i = 0; i < 600; ++i) {
      std::string mutated = base;
      int edits = 1 + static_cast<int>(random() % 8);
      for (int e = 0; e < edits && !mutated.empty(); ++e) {
        size_t at = random() % mutated.size();
        switch (random() % 4) {
          case 0:
            mutated[at] = static_cast<char>(random());
            break;
          case 1:
            mutated.erase(at, 1 + random() % 8);
            break;
          case 2:
            mutated.insert(at, std::string(1 + random() % 4, "0123456789:->( )\n#{}'"[random() % 21]));
            break;
          default:
            mutated.insert(at, mutated.substr(random() % mutated.size(), random() % 40));
            break;
        }
      }
      fuzzProguardOnce(reinterpret_cast<const uint8_t*>(mutated.data()), mutated.size());
      ++runs;
    }
  }
  for (int i = 0; i < 300; ++i) {
    std::string noise(random() % 400, '\0');
    for (char& c : noise) c = static_cast<char>(random());
    fuzzProguardOnce(reinterpret_cast<const uint8_t*>(noise.data()), noise.size());
    ++runs;
  }
  EXPECT_EQ(runs, 3 * 601 + 300);
}

}  // namespace
}  // namespace restack::proguard
