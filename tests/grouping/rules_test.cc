// Rule files: what they mean, and errors that name the file, the line and the fix.
#include "grouping/rules.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "grouping/fingerprint.h"
#include "tests/grouping/frames.h"

namespace restack::grouping {
namespace {

using testing::crash;
using testing::java;

TEST(Glob, StarsAndQuestionMarks) {
  EXPECT_TRUE(globMatch("com.shop.*", "com.shop.cart.Cart.load"));
  EXPECT_TRUE(globMatch("*Timeout*", "SocketTimeoutException"));
  EXPECT_TRUE(globMatch("lib?.so", "liba.so"));
  EXPECT_FALSE(globMatch("lib?.so", "libab.so"));
  EXPECT_TRUE(globMatch("*", ""));
  EXPECT_FALSE(globMatch("a*b*c", "aXbY"));
  EXPECT_TRUE(globMatch("a*b*c", "aXbYc"));
  // Pathological pattern stays fast (linear backtracking).
  EXPECT_FALSE(globMatch("*a*a*a*a*a*a*a*b", std::string(5000, 'a')));
}

constexpr char kExampleRules[] = R"(version: 1
app_packages: [com.shop.]
app_modules: ["libshop*.so"]
in_app:
  - {package: com.shop.vendor., in_app: false}
ignore:
  - {function: "com.shop.log.*"}
fingerprint:
  - {exception_type: java.lang.OutOfMemoryError, fingerprint: out-of-memory, title: Out of memory}
  - {message: "*Unable to resolve host*", fingerprint: no-network}
)";

TEST(Rules, ParsesEveryKind) {
  auto rules = parseAppRules(kExampleRules, "shop.yaml");
  ASSERT_TRUE(rules) << rules.error().message();
  EXPECT_EQ(rules->app_packages, std::vector<std::string>{"com.shop."});
  ASSERT_EQ(rules->in_app.size(), 1u);
  EXPECT_FALSE(rules->in_app[0].in_app);
  EXPECT_EQ(rules->in_app[0].origin, "shop.yaml:5");
  ASSERT_EQ(rules->ignore.size(), 1u);
  EXPECT_EQ(rules->ignore[0].origin, "shop.yaml:7");
  ASSERT_EQ(rules->fingerprints.size(), 2u);
  EXPECT_EQ(rules->fingerprints[1].fingerprint, "no-network");
}

TEST(Rules, ErrorsNameFileLineAndProblem) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"version: 2\n", "shop.yaml:1: unsupported version '2'"},
      {"version: 1\nin_app:\n  - {pakage: com.x.}\n", "shop.yaml:3: unknown key 'pakage' in 'in_app'"},
      {"ignore:\n  - {platform: ios}\n", "shop.yaml:2: 'ignore' entry needs at least one of"},
      {"fingerprint:\n  - {message: boom}\n", "shop.yaml:2: 'fingerprint' entry needs 'fingerprint:"},
      {"in_app:\n  - {package: a., in_app: maybe}\n", "shop.yaml:2: 'in_app' must be true or false"},
      {"colour: red\n", "shop.yaml:1: unknown key 'colour'"},
      {"in_app: [\n", "shop.yaml:"},
      {"fingerprint:\n  - {kind: oops, message: x, fingerprint: y}\n", "shop.yaml:2: unknown kind 'oops'"},
      // The platforms come from the registry (formats/common/platforms.cc), listed in its order.
      {"ignore:\n  - {platform: flutter, function: f}\n",
       "shop.yaml:2: unknown platform 'flutter' (expected ios, android, web or react_native)"},
  };
  for (const Case& c : cases) {
    auto rules = parseAppRules(c.text, "shop.yaml");
    ASSERT_FALSE(rules) << c.text;
    EXPECT_EQ(rules.error().code(), ErrorCode::kMalformedInput);
    EXPECT_NE(rules.error().message().find(c.expected), std::string::npos) << "got: " << rules.error().message();
  }
}

TEST(Rules, ExampleFileInConfigIsValid) {
  auto rules = loadAppRules(std::string(RESTACK_SOURCE_DIR) + "/config/grouping-rules.example.yaml");
  ASSERT_TRUE(rules) << rules.error().message();
  EXPECT_EQ(rules->app_packages.size(), 2u);
  EXPECT_EQ(rules->in_app.size(), 3u);
  EXPECT_EQ(rules->ignore.size(), 3u);
  EXPECT_EQ(rules->fingerprints.size(), 3u);
  EXPECT_EQ(rules->fingerprints[2].platform, "web");
}

TEST(Rules, EmptyFileMeansNoRules) {
  auto rules = parseAppRules("", "empty.yaml");
  ASSERT_TRUE(rules) << rules.error().message();
  EXPECT_TRUE(rules->in_app.empty());
}

TEST(Rules, DirectoryLoadsOneFilePerApp) {
  auto dir = std::filesystem::temp_directory_path() / ("restack-grouping-rules-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "shop.yaml") << kExampleRules;
  std::ofstream(dir / "news.yml") << "app_packages: [com.news.]\n";
  std::ofstream(dir / "README.txt") << "not rules";
  GroupingConfig config;
  Status status = loadRulesDirectory(dir.string(), config);
  ASSERT_TRUE(status) << status.error().message();
  EXPECT_EQ(config.apps.size(), 2u);
  ASSERT_NE(config.rulesFor("news"), nullptr);
  EXPECT_EQ(config.rulesFor("news")->app_packages[0], "com.news.");

  std::ofstream(dir / "bad.yaml") << "ignore: 3\n";
  GroupingConfig broken;
  Status failed = loadRulesDirectory(dir.string(), broken);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message().find("bad.yaml:1: 'ignore' must be a list"), std::string::npos)
      << failed.error().message();
  std::filesystem::remove_all(dir);

  GroupingConfig missing;
  Status absent = loadRulesDirectory((dir / "nope").string(), missing);
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().code(), ErrorCode::kIo);
}

TEST(Rules, ApplyToFingerprints) {
  GroupingConfig config;
  auto rules = parseAppRules(kExampleRules, "shop.yaml");
  ASSERT_TRUE(rules);
  config.apps["shop"] = *rules;

  // app_packages decide in-app; the vendored package is out; log frames are ignored.
  auto input =
      crash("android", "java.lang.IllegalStateException", "bad state",
            {java("com.shop.log.Logger.e"), java("com.shop.vendor.Json.parse"), java("com.shop.cart.Cart.load"),
             java("com.other.Sdk.call"), java("com.shop.cart.CartActivity.onResume")});
  Fingerprint fp = computeFingerprint(input, config);
  EXPECT_EQ(fp.frames_used,
            (std::vector<std::string>{"com.shop.cart.Cart.load", "com.shop.cart.CartActivity.onResume"}));
  const auto& decisions = fp.thread_frames[0];
  EXPECT_TRUE(decisions[0].ignored);
  EXPECT_EQ(decisions[0].ignore_reason, "rule shop.yaml:7");
  EXPECT_FALSE(decisions[1].in_app);
  EXPECT_EQ(decisions[1].in_app_reason, "rule shop.yaml:5");
  EXPECT_FALSE(decisions[3].in_app);
  EXPECT_EQ(decisions[3].in_app_reason, "not in app_packages");
  EXPECT_NE(std::find(fp.rules_applied.begin(), fp.rules_applied.end(), "ignore: rule shop.yaml:7"),
            fp.rules_applied.end());

  // Forced fingerprints: every OOM groups together whatever the stack.
  auto oom1 = crash("android", "java.lang.OutOfMemoryError", "Failed to allocate 1024 bytes",
                    {java("com.shop.img.Decoder.decode")});
  auto oom2 = crash("android", "java.lang.OutOfMemoryError", "Failed to allocate 77 bytes",
                    {java("com.shop.feed.Feed.render")});
  Fingerprint f1 = computeFingerprint(oom1, config);
  Fingerprint f2 = computeFingerprint(oom2, config);
  EXPECT_EQ(f1.hash, f2.hash);
  EXPECT_EQ(f1.source, FingerprintSource::kForced);
  EXPECT_EQ(f1.title, "Out of memory");
  EXPECT_EQ(f1.culprit, "com.shop.img.Decoder.decode");

  auto offline = crash("android", "java.net.UnknownHostException", "Unable to resolve host \"api.shop.com\"",
                       {java("com.shop.net.Api.get")});
  EXPECT_EQ(computeFingerprint(offline, config).components, (std::vector<std::string>{"v2", "forced", "no-network"}));
  // Another app is not affected by shop's rules.
  offline.app = "news";
  EXPECT_NE(computeFingerprint(offline, config).source, FingerprintSource::kForced);
}

}  // namespace
}  // namespace restack::grouping
