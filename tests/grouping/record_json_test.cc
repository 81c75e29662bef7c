// The restack.fingerprints record, read back with simdjson (an independent JSON parser).
#include "grouping/record_json.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include "grouping/fingerprint.h"
#include "tests/grouping/frames.h"

namespace restack::grouping {
namespace {

using testing::crash;
using testing::java;

std::string_view field(simdjson::dom::element& root, const char* name) {
  std::string_view value;
  EXPECT_EQ(root[name].get(value), simdjson::SUCCESS) << name;
  return value;
}

TEST(RecordJson, CarriesTheFingerprintAndParsesBack) {
  auto input = crash("android", "java.lang.IllegalStateException",
                     "quote \" backslash \\ tab \t newline \n control \x01 bad utf8 \xff end",
                     {java("com.shop.a.Cart.load"), java("com.shop.a.CartActivity.onResume")});
  input.event_id = "0f8e";
  input.build_id = "7.8.0(78007)";
  input.timestamp_ms = 1700000000000;
  input.provisional_fingerprint = "00000000000000000000000000000000";
  Fingerprint fp = computeFingerprint(input, GroupingConfig{});
  const std::string json = fingerprintRecordJson(input, fp);

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  EXPECT_EQ(field(root, "app"), "shop");
  EXPECT_EQ(field(root, "fingerprint"), fp.hash);
  EXPECT_EQ(field(root, "algorithm"), "v2");
  EXPECT_EQ(field(root, "quality"), "complete");
  EXPECT_EQ(field(root, "source"), "in_app");
  EXPECT_EQ(field(root, "build_id"), "7.8.0(78007)");
  EXPECT_EQ(field(root, "replaces"), "00000000000000000000000000000000");
  EXPECT_EQ(field(root, "culprit"), "com.shop.a.Cart.load");
  uint64_t timestamp = 0;
  ASSERT_EQ(root["timestamp_ms"].get(timestamp), simdjson::SUCCESS);
  EXPECT_EQ(timestamp, 1700000000000u);
  simdjson::dom::array frames;
  ASSERT_EQ(root["frames"].get(frames), simdjson::SUCCESS);
  EXPECT_EQ(frames.size(), 2u);
  // The title keeps the message's first line, trimmed.
  EXPECT_EQ(field(root, "title"), "java.lang.IllegalStateException: quote \" backslash \\ tab \t newline");
  auto escaped = [](std::string_view text) {
    std::string out;
    appendJsonString(out, text);
    return out;
  };
  EXPECT_EQ(escaped("a\x01z\xff"), "\"a\\u0001z\xEF\xBF\xBD\"");
  EXPECT_EQ(escaped("\xC3\xA9"), "\"\xC3\xA9\"");                                  // valid UTF-8 passes through
  EXPECT_EQ(escaped("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate
  EXPECT_EQ(root["lag_share"].error(), simdjson::NO_SUCH_FIELD);
}

TEST(RecordJson, LagFields) {
  GroupingInput lag;
  lag.app = "shop";
  lag.kind = "lag";
  lag.platform = "android";
  lag.samples = {{0, {java("com.shop.a.Slow.run")}}, {10, {java("com.shop.a.Slow.run")}}};
  Fingerprint fp = computeFingerprint(lag, GroupingConfig{});
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(fingerprintRecordJson(lag, fp)).get(root), simdjson::SUCCESS);
  double share = 0;
  ASSERT_EQ(root["lag_share"].get(share), simdjson::SUCCESS);
  EXPECT_DOUBLE_EQ(share, 1.0);
}

}  // namespace
}  // namespace restack::grouping
