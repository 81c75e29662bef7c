// Swift frames as grouping keys them (grouping/normalize.h): the names Apple's demangler prints
// for the same source function, whatever the compiler made of it, normalize to one key.
#include <gtest/gtest.h>

#include <string>

#include "formats/swift/swift_demangle.h"
#include "grouping/normalize.h"

namespace restack {
namespace {

std::string key(const char* mangled) {
  auto demangled = swift::demangleSwift(mangled);
  EXPECT_TRUE(demangled.has_value()) << mangled;
  auto normalized = grouping::normalizeNativeName(demangled.value_or(mangled));
  EXPECT_EQ(normalized.drop_reason, nullptr) << mangled;
  return normalized.name;
}

TEST(SwiftGrouping, ASignatureChangeKeepsTheKey) {
  EXPECT_EQ(key("$s4main5helloyS2iF"), "main.hello");  // hello(Int) -> Int
  EXPECT_EQ(key("$s4main5helloyS2SF"), "main.hello");  // hello(String) -> String
}

TEST(SwiftGrouping, ClosuresAreKeyedByTheirEnclosingFunctionNotTheirNumber) {
  EXPECT_EQ(key("$s4main3runyyFyycfU_"), "closure in main.run");
  EXPECT_EQ(key("$s4main3runyyFyycfU0_"), "closure in main.run");
  // The partial-apply forwarder the compiler emits for a closure is the closure.
  EXPECT_EQ(key("$s4main3fooyySiFyyXEfU_TA"), "closure in main.foo");
}

TEST(SwiftGrouping, SpecializationsAndThunksAreTheFunctionTheyStandFor) {
  EXPECT_EQ(key("$s4main8MyStructV3fooyyFAA1XV_Tg5"), "main.MyStruct.foo");  // generic specialization
  EXPECT_EQ(key("$S4main5inneryys5Int32Vz_yADctF25closure_with_box_argumentxz_Bi32__lXXTf1nc_n"),
            "main.inner");                                          // function signature specialization
  EXPECT_EQ(key("$s3abc6testityySiFTm"), "abc.testit");             // merged
  EXPECT_EQ(key("_$s3foo3barC3bas3zimyAaEC_tFTo"), "foo.bar.bas");  // @objc thunk
  EXPECT_EQ(key("$sSo17OS_dispatch_queueC4sync7executeyyyXE_tFTOTA"), "__C.OS_dispatch_queue.sync");
}

TEST(SwiftGrouping, AsyncFunctionsAndTheirPartialFunctionsShareOneKey) {
  EXPECT_EQ(key("$s7example1fyyYaKF"), "example.f");  // example.f() async throws -> ()
  EXPECT_EQ(key("$s4main1fyyYaFTY0_"), "main.f");     // (1) suspend resume partial function for main.f()
  EXPECT_EQ(key("$s4main1fyyYaFTQ0_"), "main.f");     // (1) await resume partial function for main.f()
}

TEST(SwiftGrouping, FilePrivateDiscriminatorsAreNotPartOfTheName) {
  EXPECT_EQ(key("$s4main4TestC1xACSi_tc6_PRIV_Llfc"), "main.Test.init");
}

}  // namespace
}  // namespace restack
