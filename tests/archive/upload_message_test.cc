// Upload messages are untrusted: decodeUploadMessage refuses bad header values with a short,
// readable message, and the limits.* keys of this concern load and reach IngestOptions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "tests/archive/fuzz_entry.h"
#include "worker/kafka/upload_message.h"

namespace restack::worker {
namespace {

Expected<UploadMessage> decode(const Headers& headers, std::string_view key = "shop:1.0", bool shared = false) {
  return decodeUploadMessage(key, headers, shared);
}

void expectRefused(const Expected<UploadMessage>& upload, const std::string& fragment) {
  ASSERT_FALSE(upload);
  EXPECT_EQ(upload.error().code(), ErrorCode::kMalformedInput) << upload.error().message();
  EXPECT_NE(upload.error().message().find(fragment), std::string::npos) << upload.error().message();
  EXPECT_LT(upload.error().message().size(), 400u) << upload.error().message();
}

TEST(UploadMessage, HeadersAndKeyFallback) {
  auto upload = decode({{"restack.kind", "proguard"}, {"restack.file_name", "mapping.txt"}, {"traceparent", "x"}});
  ASSERT_TRUE(upload) << upload.error().message();
  EXPECT_EQ(upload->meta.app, "shop");
  EXPECT_EQ(upload->meta.build_id, "1.0");
  EXPECT_EQ(*upload->meta.kind, SymbolKind::kProguard);
  EXPECT_EQ(upload->file_name, "mapping.txt");
  // Headers win over the key; the same header twice with the same value is fine.
  upload = decode({{"restack.app", "web"}, {"restack.build_id", "7"}, {"restack.app", "web"}}, "ignored");
  ASSERT_TRUE(upload) << upload.error().message();
  EXPECT_EQ(upload->meta.app, "web");
  EXPECT_EQ(upload->meta.build_id, "7");
  // The shared topic needs neither.
  upload = decodeUploadMessage("", {}, /*shared=*/true);
  ASSERT_TRUE(upload);
  EXPECT_TRUE(upload->meta.shared);
  // Round trip.
  UploadMessage original;
  original.meta.kind = SymbolKind::kSourcemap;
  original.meta.app = "web";
  original.meta.build_id = "2024.1";
  original.meta.name = "main.js";
  original.file_name = "main.js.map";
  original.location = "file:///uploads/main.js.map";
  auto back = decode(encodeUploadHeaders(original), "");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->meta.app, "web");
  EXPECT_EQ(back->meta.name, "main.js");
  EXPECT_EQ(back->location, original.location);
}

TEST(UploadMessage, BadValuesAreRefusedClearly) {
  expectRefused(decode({{"restack.app", std::string("sh\0p", 4)}}), "header restack.app holds a NUL byte ('sh\\x00p')");
  expectRefused(decode({{"restack.build_id", std::string(2 << 20, 'b')}}),
                "header restack.build_id is 2097152 bytes, more than the limit of 1024");
  expectRefused(decode({{"restack.kind", "pdb\x01"}}), "header restack.kind is 'pdb\\x01', not one of");
  expectRefused(decode({{"restack.kind", std::string(5000, 'k')}}), "more than the limit of 1024");
  expectRefused(decode({{"restack.app", "a"}, {"restack.app", "b"}}),
                "header restack.app appears twice with different values ('a', 'b')");
  expectRefused(decode({{"restack.location", std::string(8193, 'u')}}), "more than the limit of 8192");
  expectRefused(decode({}, std::string("sh\0p:1", 6)), "the message key holds a NUL byte");
  expectRefused(decode({}, std::string(4096, 'k')), "the message key is 4096 bytes");
  expectRefused(decode({}, "no-colon"), "is not '<app>:<build_id>'");
  // Long presigned URLs and big foreign headers pass.
  auto upload = decode(
      {{"restack.location", "https://bucket/x?" + std::string(4000, 's')}, {"x-trace", std::string(1 << 20, 't')}});
  ASSERT_TRUE(upload) << upload.error().message();
}

TEST(UploadMessage, FuzzRegressionsAndSeeds) {
  // Inputs kept in tests/archive/fuzz_regressions/, for both fuzz targets.
  const std::filesystem::path folder = std::filesystem::path(RESTACK_SOURCE_DIR) / "tests/archive/fuzz_regressions";
  int inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() == ".md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(entry.path().filename().string());
    archive_test::fuzzArchiveOnce(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    archive_test::fuzzUploadMessageOnce(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++inputs;
  }
  EXPECT_GE(inputs, 5);
}

TEST(UploadLimitsConfig, KeysLoadValidateAndReachIngest) {
  auto config = config::parseConfig(R"(
kafka: {brokers: "k:9092"}
limits: {max_upload_bytes: 1048576, max_decompression_ratio: 50, max_sourcemap_bytes: 65536}
)",
                                    "restack.yaml", {});
  ASSERT_TRUE(config) << config.error().message();
  IngestOptions options = ingestOptionsFrom(*config);
  EXPECT_EQ(options.max_input_bytes, 1048576u);
  EXPECT_EQ(options.max_decompression_ratio, 50u);
  EXPECT_EQ(options.max_sourcemap_bytes, 65536u);
  // The defaults are IngestOptions' own, and the example file's.
  const config::Config defaults;
  EXPECT_EQ(defaults.limits.max_decompression_ratio, IngestOptions{}.max_decompression_ratio);
  EXPECT_EQ(defaults.limits.max_sourcemap_bytes, IngestOptions{}.max_sourcemap_bytes);
  EXPECT_EQ(defaults.limits.max_upload_bytes, IngestOptions{}.max_input_bytes);
  auto example = config::loadConfig(std::string(RESTACK_SOURCE_DIR) + "/config/restack.example.yaml", {});
  ASSERT_TRUE(example) << example.error().message();
  EXPECT_EQ(example->limits.max_decompression_ratio, defaults.limits.max_decompression_ratio);
  EXPECT_EQ(example->limits.max_sourcemap_bytes, defaults.limits.max_sourcemap_bytes);

  auto bad = config::parseConfig("kafka: {brokers: k}\nlimits: {max_decompression_ratio: 1}\n", "restack.yaml", {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("limits.max_decompression_ratio must be a whole number from 2"),
            std::string::npos)
      << bad.error().message();
  auto env = config::parseConfig("kafka: {brokers: k}\n", "restack.yaml", {"RESTACK_LIMITS__MAX_SOURCEMAP_BYTES=1x"});
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().message().find("limits.max_sourcemap_bytes"), std::string::npos);
}

}  // namespace
}  // namespace restack::worker
