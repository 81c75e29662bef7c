// The record codec (symbolstore/record_codec.h) and the bytes of every stored record type.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "symbolstore/fuzz/record_fuzz_entry.h"
#include "symbolstore/native/native_records.h"
#include "symbolstore/proguard/proguard_records.h"
#include "symbolstore/record_codec.h"
#include "symbolstore/sourcemap/sourcemap_records.h"
#include "symbolstore/usage.h"
#include "tests/records/sample_records.h"

namespace restack::records {
namespace {

using records_test::SampleRecord;
using records_test::sampleRecords;

constexpr RecordType kTestType{"test", "widget", 2, 3, "re-ingest the widget"};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Decodes `record` with the decoder of its type (by name); the error, or "" when it decodes.
std::string decodeError(const SampleRecord& record, std::string_view value) {
  auto describe = [](const auto& decoded) { return decoded ? std::string() : decoded.error().describe(); };
  const std::string& name = record.name;
  if (name.starts_with("native.image")) return describe(native_store::decodeImage(value, record.key));
  if (name.starts_with("native.function")) return describe(native_store::decodeFunction(0x10d00, value, record.key));
  if (name.starts_with("native.symbols")) return describe(native_store::decodeSymbolChunk(0x2000, value, record.key));
  if (name.starts_with("native.strings")) return describe(native_store::decodeStringBlock(value, record.key));
  if (name.starts_with("native.module")) return describe(native_store::decodeIdList(value, record.key));
  if (name.starts_with("native.alias")) return describe(native_store::decodeAlias(value, record.key));
  if (name.starts_with("proguard.build-pointer")) return describe(proguard::decodeBuildPointer(value, record.key));
  if (name.starts_with("proguard.id-pointer")) return describe(proguard::decodeIdPointer(value, record.key));
  if (name.starts_with("proguard.map-info")) return describe(proguard::decodeMapInfo(value, record.key));
  if (name.starts_with("proguard.source-file")) return describe(proguard::decodeSourceFile(value, record.key));
  if (name.starts_with("proguard.class")) return describe(proguard::decodeClassRecord(value, record.key));
  if (name.starts_with("sourcemap.pointer")) return describe(sourcemap_records::decodePointer(value, record.key));
  if (name.starts_with("sourcemap.header")) return describe(sourcemap_records::decodeHeader(value, record.key));
  if (name.starts_with("sourcemap.source")) return describe(sourcemap_records::decodeSource(value, record.key));
  if (name.starts_with("sourcemap.text")) return describe(sourcemap_records::decodeText(value, record.key));
  if (name.starts_with("sourcemap.functions")) {
    return describe(sourcemap_records::decodeGeneratedFunctions(value, record.key));
  }
  if (name == "sourcemap.chunk.lines") return describe(sourcemap_records::decodeChunk(value, 3, 17, record.key));
  if (name.starts_with("sourcemap.chunk")) return describe(sourcemap_records::decodeChunk(value, 0, 0, record.key));
  if (name.starts_with("usage.time")) return describe(usage::decodeTime(value, record.key));
  ADD_FAILURE() << "no decoder for " << name;
  return "no decoder";
}

// ---- the bytes on disk

TEST(RecordsGolden, EveryRecordTypeWritesTheBytesOfTheReleaseThatIntroducedItsVersion) {
  const std::string golden = readFile(RESTACK_SOURCE_DIR "/tests/records/golden/records.txt");
  ASSERT_FALSE(golden.empty());
  std::istringstream expected(golden);
  std::istringstream actual(records_test::goldenText(sampleRecords()));
  std::string want, got;
  size_t lines = 0;
  while (std::getline(expected, want)) {
    ASSERT_TRUE(std::getline(actual, got)) << "missing record for: " << want;
    EXPECT_EQ(got, want);
    ++lines;
  }
  EXPECT_FALSE(std::getline(actual, got)) << "record without golden bytes: " << got;
  EXPECT_EQ(lines, sampleRecords().size());
}

TEST(RecordsGolden, EveryRecordDecodesAndEncodesBackToTheSameBytes) {
  for (const SampleRecord& record : sampleRecords()) {
    EXPECT_EQ(decodeError(record, record.value), "") << record.name;
  }
  for (const SampleRecord& record : sampleRecords()) {
    const std::string& name = record.name;
    std::string again;
    if (name.starts_with("native.image")) {
      again = native_store::encodeImage(*native_store::decodeImage(record.value));
    } else if (name.starts_with("native.function")) {
      again = native_store::encodeFunction(*native_store::decodeFunction(0x10d00, record.value));
    } else if (name.starts_with("native.symbols")) {
      again = native_store::encodeSymbolChunk(*native_store::decodeSymbolChunk(0x2000, record.value));
    } else if (name.starts_with("native.strings")) {
      again = native_store::encodeStringBlock(*native_store::decodeStringBlock(record.value));
    } else if (name.starts_with("native.module")) {
      again = native_store::encodeIdList(*native_store::decodeIdList(record.value));
    } else if (name.starts_with("native.alias")) {
      again = native_store::encodeAlias(*native_store::decodeAlias(record.value));
    } else if (name.starts_with("proguard.build-pointer")) {
      again = proguard::encodeBuildPointer(*proguard::decodeBuildPointer(record.value));
    } else if (name.starts_with("proguard.id-pointer")) {
      again = proguard::encodeIdPointer(*proguard::decodeIdPointer(record.value));
    } else if (name.starts_with("proguard.map-info")) {
      again = proguard::encodeMapInfo(*proguard::decodeMapInfo(record.value));
    } else if (name.starts_with("proguard.source-file")) {
      again = proguard::encodeSourceFile(*proguard::decodeSourceFile(record.value));
    } else if (name.starts_with("sourcemap.pointer")) {
      again = sourcemap_records::encodePointer(*sourcemap_records::decodePointer(record.value));
    } else if (name.starts_with("sourcemap.header")) {
      again = sourcemap_records::encodeHeader(*sourcemap_records::decodeHeader(record.value));
    } else if (name.starts_with("sourcemap.source")) {
      again = sourcemap_records::encodeSource(*sourcemap_records::decodeSource(record.value));
    } else if (name.starts_with("sourcemap.functions")) {
      again = sourcemap_records::encodeGeneratedFunctions(*sourcemap_records::decodeGeneratedFunctions(record.value));
    } else if (name.starts_with("sourcemap.text")) {
      auto lines = *sourcemap_records::decodeText(record.value);
      again = sourcemap_records::encodeText(std::vector<std::string_view>(lines.begin(), lines.end()));
    } else if (name.starts_with("sourcemap.chunk")) {
      const bool lines = name == "sourcemap.chunk.lines";
      again =
          sourcemap_records::encodeChunk(*sourcemap_records::decodeChunk(record.value, lines ? 3 : 0, lines ? 17 : 0));
    } else if (name.starts_with("usage.time")) {
      again = usage::encodeTime(*usage::decodeTime(record.value));
    } else {
      continue;  // class records decode into views, checked field by field below
    }
    EXPECT_EQ(again, record.value) << name;
  }
}

TEST(RecordsGolden, ClassRecordsDecodeToWhatWasEncoded) {
  for (const SampleRecord& record : sampleRecords()) {
    if (record.name != "proguard.class.merged") continue;
    auto decoded = proguard::decodeClassRecord(record.value);
    ASSERT_TRUE(decoded) << decoded.error().describe();
    EXPECT_EQ(decoded->original_name, "com.example.Rich");
    EXPECT_EQ(decoded->source_file, "Rich.java");
    EXPECT_TRUE(decoded->synthesized);
    ASSERT_EQ(decoded->methods.size(), 3u);
    const proguard::MethodRecord* caller = decoded->findMethod("a");
    ASSERT_NE(caller, nullptr);
    ASSERT_EQ(caller->ranges.size(), 1u);
    ASSERT_NE(caller->ranges[0].callsite, nullptr);
    EXPECT_EQ(caller->ranges[0].callsite->outline, "La;z(Ljava/lang/String;I)I");
    ASSERT_EQ(caller->ranges[0].rules.size(), 1u);
    EXPECT_EQ(caller->ranges[0].rules[0].remove_inner_frames, 2u);
    ASSERT_EQ(decoded->fields.size(), 2u);
    EXPECT_TRUE(decoded->fields[1].synthesized);
    ASSERT_EQ(decoded->merged_names.size(), 2u);
    EXPECT_EQ(decoded->merged_names[1], "com.example.Third");
  }
}

// Function records are written as version 1 unless a node has a scope (version 2), so stores
// and goldens of images without GCC lambdas keep their bytes.
TEST(RecordsGolden, FunctionRecordsCarryNodeScopesOnlyInVersion2) {
  for (const SampleRecord& record : sampleRecords()) {
    if (!record.name.starts_with("native.function")) continue;
    auto decoded = native_store::decodeFunction(0x10d00, record.value);
    ASSERT_TRUE(decoded) << decoded.error().describe();
    ASSERT_EQ(decoded->nodes.size(), 2u);
    EXPECT_EQ(decoded->nodes[0].scope, native_store::kNoString) << record.name;
    if (record.name == "native.function.scope") {
      EXPECT_EQ(record.value[0], 2);
      EXPECT_EQ(decoded->nodes[1].name, 3u);
      EXPECT_EQ(decoded->nodes[1].scope, 4u);
    } else {
      EXPECT_EQ(record.value[0], 1) << record.name;
      EXPECT_EQ(decoded->nodes[1].scope, native_store::kNoString) << record.name;
    }
  }
}

// ---- one error policy for every record type

TEST(RecordsErrors, EveryTruncationIsAMalformedInputNamingTypeAndKey) {
  for (const SampleRecord& record : sampleRecords()) {
    const std::string family = record.name.substr(0, record.name.find('.'));
    for (size_t length = 0; length < record.value.size(); ++length) {
      const std::string error = decodeError(record, std::string_view(record.value).substr(0, length));
      if (record.name == "native.alias" && length >= 2) {
        EXPECT_EQ(error, "") << "an alias is its id, any length";
        continue;
      }
      if (record.name == "native.function.clone" && length == record.value.size() - 1) {
        EXPECT_EQ(error, "") << "the clone is an optional last field";
        continue;
      }
      ASSERT_NE(error, "") << record.name << " cut at " << length;
      EXPECT_TRUE(error.starts_with("malformed_input: ")) << error;
      EXPECT_NE(error.find(family + " "), std::string::npos) << error;
      EXPECT_NE(error.find(printableKey(record.key)), std::string::npos) << error;
      EXPECT_NE(error.find("re-ingest"), std::string::npos) << error;
    }
  }
}

TEST(RecordsErrors, UnknownVersionsAndTrailingBytesAreRefused) {
  for (const SampleRecord& record : sampleRecords()) {
    for (uint8_t version : {uint8_t{0}, uint8_t{200}}) {
      std::string value = record.value;
      value[0] = static_cast<char>(version);
      const std::string error = decodeError(record, value);
      EXPECT_NE(error.find("has format version " + std::to_string(version) + "; this restack reads versions"),
                std::string::npos)
          << record.name << ": " << error;
      EXPECT_TRUE(error.starts_with("malformed_input: ")) << error;
    }
    if (record.name == "native.alias") continue;  // the id is the rest of the value
    const std::string error = decodeError(record, record.value + std::string(1, '\0'));
    EXPECT_NE(error, "") << record.name << " with a trailing byte";
  }
}

// ---- the codec itself

TEST(RecordCodec, VarintsZigzagsAndFixedFieldsRoundTrip) {
  RecordWriter writer(3);
  const uint64_t values[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, uint64_t{1} << 63, UINT64_MAX};
  for (uint64_t value : values) writer.varint(value);
  const int64_t signed_values[] = {0, -1, 1, -64, 64, INT64_MIN, INT64_MAX};
  for (int64_t value : signed_values) writer.zigzag(value);
  writer.bytes("hello");
  writer.bytes("");
  writer.u8(0xfe);
  writer.u64le(0x0102030405060708ull);
  const std::string value = writer.take();
  EXPECT_EQ(value[0], 3);
  EXPECT_EQ(value.substr(1, 5), std::string("\x00\x01\x7f\x80\x01", 5));

  RecordReader reader(kTestType, value);
  EXPECT_EQ(reader.version(), 3);
  for (uint64_t expected : values) EXPECT_EQ(reader.varint(), expected);
  for (int64_t expected : signed_values) EXPECT_EQ(reader.zigzag(), expected);
  EXPECT_EQ(reader.bytes(), "hello");
  EXPECT_EQ(reader.bytes(), "");
  EXPECT_EQ(reader.u8(), 0xfe);
  EXPECT_EQ(reader.u64le(), 0x0102030405060708ull);
  EXPECT_TRUE(reader.finish());
  EXPECT_EQ(value.substr(value.size() - 8), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));

  std::string key = "K";
  RecordWriter::putBigEndian(key, 0x0a0b0c, 4);
  EXPECT_EQ(key, std::string("K\x00\x0a\x0b\x0c", 5));
}

TEST(RecordCodec, TheReaderNeverReadsPastTheEndAndSaysWhy) {
  auto errorOf = [](std::string_view value, auto read) {
    RecordReader reader(kTestType, value, std::string_view("W\0\x01id", 5));
    reader.version();
    read(reader);
    EXPECT_FALSE(reader.ok());
    return reader.error().message();
  };
  EXPECT_EQ(errorOf("", [](RecordReader&) {}),
            "corrupt test widget record W\\x00\\x01id: empty value; re-ingest the widget");
  EXPECT_EQ(errorOf("\x01", [](RecordReader&) {}),
            "test widget record W\\x00\\x01id has format version 1; this restack reads versions 2 to 3; "
            "re-ingest the widget");
  EXPECT_EQ(errorOf("\x02\x80", [](RecordReader& r) { r.varint(); }),
            "corrupt test widget record W\\x00\\x01id: truncated; re-ingest the widget");
  EXPECT_NE(errorOf(std::string("\x02") + std::string(11, '\x80') + "\x01", [](RecordReader& r) { r.varint(); })
                .find("varint longer than 10 bytes"),
            std::string::npos);
  EXPECT_NE(errorOf("\x02\x05"
                    "abc",
                    [](RecordReader& r) { r.bytes(); })
                .find("string longer than the value"),
            std::string::npos);
  EXPECT_NE(errorOf("\x02\x04"
                    "abc",
                    [](RecordReader& r) { r.count(1); })
                .find("count larger than the value"),
            std::string::npos);
  EXPECT_NE(errorOf("\x02\x80\x80\x80\x80\x10", [](RecordReader& r) { r.varint32(); }).find("does not fit 32 bits"),
            std::string::npos);
  EXPECT_NE(errorOf("\x02"
                    "1234567",
                    [](RecordReader& r) { r.u64le(); })
                .find("truncated"),
            std::string::npos);
  // The first failure is the one reported; later reads return zero.
  EXPECT_NE(errorOf("\x02",
                    [](RecordReader& r) {
                      r.u8();
                      EXPECT_EQ(r.varint(), 0u);
                      EXPECT_EQ(r.bytes(), "");
                      r.fail("something else");
                    })
                .find(": truncated;"),
            std::string::npos);
  // Bytes left over when the decoder is done.
  RecordReader trailing(kTestType, "\x02\x01\x01");
  trailing.version();
  trailing.u8();
  EXPECT_FALSE(trailing.finish());
  EXPECT_NE(trailing.error().message().find("trailing bytes"), std::string::npos);
  EXPECT_EQ(trailing.error().code(), ErrorCode::kMalformedInput);
  EXPECT_TRUE(isUnreadableRecord(trailing.error()));
}

TEST(RecordCodec, KeysAreShownReadably) {
  EXPECT_EQ(printableKey("L\0abc\0C\0a.b"), "L");  // a string literal stops at its first NUL
  EXPECT_EQ(printableKey(std::string_view("L\0a\\b\xff", 6)), "L\\x00a\\x5cb\\xff");
  EXPECT_EQ(printableKey(std::string(200, 'k')), std::string(96, 'k') + "…");
}

// ---- the fuzz entry of the codec reader, on the golden records and mutations of them

// The fuzz input of a sample record: the index of its type in kRecordFuzzTypes, then the value.
std::string fuzzInputFor(const std::string& name, const std::string& value) {
  for (size_t i = 0; i < std::size(kRecordFuzzTypes); ++i) {
    if (name.starts_with(std::string(kRecordFuzzTypes[i]) + ".") || name == kRecordFuzzTypes[i]) {
      return std::string(1, static_cast<char>(i)) + value;
    }
  }
  ADD_FAILURE() << "no fuzz type for " << name;
  return {};
}

TEST(RecordsFuzz, GoldenRecordsAndTheirMutationsRunThroughTheFuzzEntry) {
  size_t decoded = 0;
  for (const SampleRecord& record : sampleRecords()) {
    const std::string input = fuzzInputFor(record.name, record.value);
    decoded += recordFuzzOne(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    for (size_t i = 1; i < input.size(); ++i) {
      std::string mutated = input;
      mutated[i] = static_cast<char>(mutated[i] ^ (1 << (i % 8)));
      recordFuzzOne(reinterpret_cast<const uint8_t*>(mutated.data()), mutated.size());
    }
  }
  EXPECT_EQ(decoded, sampleRecords().size());  // every unmutated record decodes
}

// Inputs the fuzzer found (tests/records/fuzz_regressions/README.md), each replayed.
TEST(RecordsFuzz, RegressionInputsRunThroughTheFuzzEntry) {
  size_t inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(RESTACK_SOURCE_DIR "/tests/records/fuzz_regressions")) {
    if (entry.path().extension() != ".bin") continue;
    const std::string input = readFile(entry.path().string());
    recordFuzzOne(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    ++inputs;
  }
  EXPECT_GE(inputs, 1u);
}

}  // namespace
}  // namespace restack::records
