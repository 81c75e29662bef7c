// Swift names (formats/swift/swift_demangle.h) against the Swift project's own demangling
// vectors in tests/swift/swift_manglings.txt.
#include "formats/swift/swift_demangle.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/mutate.h"

namespace restack::swift {
namespace {

std::vector<std::pair<std::string, std::string>> swiftProjectVectors() {
  std::ifstream file(std::string(RESTACK_SOURCE_DIR) + "/tests/swift/swift_manglings.txt");
  std::vector<std::pair<std::string, std::string>> vectors;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t arrow = line.find(" ---> ");
    if (arrow == std::string::npos) continue;
    vectors.emplace_back(line.substr(0, arrow), line.substr(arrow + 6));
  }
  return vectors;
}

TEST(SwiftDemangle, TheDemanglerIsBuiltIn) {
  EXPECT_TRUE(swiftDemanglerAvailable());
}

TEST(SwiftDemangle, EverySwiftProjectVectorDemanglesAsTheSwiftProjectSays) {
  const auto vectors = swiftProjectVectors();
  ASSERT_GE(vectors.size(), 25u);
  for (const auto& [mangled, expected] : vectors) {
    EXPECT_TRUE(isSwiftMangled(mangled)) << mangled;
    EXPECT_EQ(demangleSwift(mangled).value_or("<not demangled>"), expected) << mangled;
  }
}

TEST(SwiftDemangle, NameOnlyDropsModuleParametersAndReturnType) {
  // What grouping keys on: stable when a parameter or return type changes.
  EXPECT_EQ(demangleSwift("$s4main5helloyS2iF", SwiftNameStyle::kNameOnly), "hello");
  EXPECT_EQ(demangleSwift("$s4main5helloyS2SF", SwiftNameStyle::kNameOnly), "hello");
  EXPECT_EQ(demangleSwift("$s4main3runyyFyycfU_", SwiftNameStyle::kNameOnly), "closure #1 in run");
  EXPECT_EQ(demangleSwift("$s4main5helloyS2iF"), "main.hello(Swift.Int) -> Swift.Int");
  EXPECT_EQ(demangleSwift("$s4main5helloyS2SF"), "main.hello(Swift.String) -> Swift.String");
  for (const auto& [mangled, expected] : swiftProjectVectors()) {
    auto name = demangleSwift(mangled, SwiftNameStyle::kNameOnly);
    ASSERT_TRUE(name.has_value()) << mangled;
    EXPECT_EQ(name->find(" -> "), std::string::npos) << mangled << " -> " << *name;
  }
}

TEST(SwiftDemangle, OtherNamesAreLeftToTheirOwnDemanglers) {
  for (const char* name : {"_ZN3foo3barEi", "main", "-[Foo bar:]", "_RNvCs1234_4core3fmt", "", "$", "$x4main"}) {
    EXPECT_FALSE(isSwiftMangled(name)) << name;
    EXPECT_EQ(demangleSwift(name), std::nullopt) << name;
  }
}

TEST(SwiftDemangle, UnreadableSwiftLookalikesAreRefused) {
  for (const std::string& name : {std::string("$s"), std::string("$sSD5IndexVy__GD"), std::string("_$s\xff\xfe", 5),
                                  std::string("$s") + std::string(20000, 'A'), std::string("$s4main\0x", 9)}) {
    EXPECT_EQ(demangleSwift(name), std::nullopt) << name.substr(0, 40);
  }
}

TEST(SwiftDemangle, DeterministicMutationRunNeverCrashes) {
  std::mt19937 random(20261123);
  size_t demangled = 0;
  const auto vectors = swiftProjectVectors();
  for (const auto& [mangled, expected] : vectors) {
    for (int round = 0; round < 200; ++round) {
      const std::string mutated = test_support::mutate(mangled, random, 4, 4);
      for (SwiftNameStyle style : {SwiftNameStyle::kComplete, SwiftNameStyle::kNameOnly}) {
        if (auto name = demangleSwift(mutated, style)) {
          ++demangled;
          EXPECT_FALSE(name->empty());
        }
      }
    }
  }
  // Most single edits still leave a readable prefix; the run must have exercised the demangler.
  EXPECT_GT(demangled, vectors.size() * 10);
}

}  // namespace
}  // namespace restack::swift
