// Unpacking untrusted uploads: bombs refused quickly in bounded memory, zip oddities refused
// with kMalformedInput instead of exceptions, legitimate compressed uploads still ingested.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "formats/common/archive.h"
#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "symbolstore/store.h"
#include "tests/archive/archive_fixtures.h"

namespace restack {
namespace {
namespace fs = std::filesystem;
using namespace archive_test;

constexpr uint64_t kGiB = 1ull << 30;
// Peak memory an unpacking step may add: buffers are 64 KiB, the zstd window a few MiB here.
constexpr uint64_t kMaxGrowthKib = 64 * 1024;

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

uint64_t sizeOf(const std::string& path) {
  std::error_code error;
  uint64_t size = fs::file_size(path, error);
  return error ? 0 : size;
}

// Runs `step` and returns how much it raised the process's peak resident memory, in KiB.
template <typename Step>
uint64_t peakGrowthKib(Step&& step) {
  EXPECT_TRUE(resetPeakRss()) << "cannot reset VmHWM through /proc/self/clear_refs";
  const uint64_t before = peakRssKib();
  step();
  const uint64_t after = peakRssKib();
  return after > before ? after - before : 0;
}

TEST(Unpack, TruncatedStreamsAreMalformed) {
  auto dir = TempDir::create("archive-test-");
  ASSERT_TRUE(dir);
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i * 7919 % 10007) + "\n";
  int n = 0;
  for (auto [compression, packed] : {std::pair{Compression::kGzip, gzipOf(text)}, {Compression::kZstd, zstdOf(text)}}) {
    for (size_t cut : {packed.size() / 2, packed.size() - 1, size_t{4}}) {
      const std::string target = dir->path() + "/out" + std::to_string(n++);
      Status status = decompressToFile(PackedInput{"", std::string_view(packed).substr(0, cut)}, compression, target,
                                       UnpackLimits{});
      ASSERT_FALSE(status) << compressionName(compression) << " cut at " << cut;
      EXPECT_EQ(status.error().code(), ErrorCode::kMalformedInput) << status.error().message();
      EXPECT_TRUE(status.error().message().find("truncated") != std::string::npos ||
                  status.error().message().find("corrupt") != std::string::npos)
          << status.error().message();
    }
    // The whole stream still decompresses, from memory and from a file.
    const std::string packed_path = dir->path() + "/whole" + std::to_string(n);
    std::ofstream(packed_path, std::ios::binary) << packed;
    for (const PackedInput& input : {PackedInput{"", packed}, PackedInput{packed_path, {}}}) {
      const std::string target = dir->path() + "/out" + std::to_string(n++);
      Status status = decompressToFile(input, compression, target, UnpackLimits{});
      ASSERT_TRUE(status) << status.error().message();
      EXPECT_EQ(readAll(target), text);
    }
  }
}

struct Bomb {
  Compression compression;
  std::string bytes;
};

TEST(Unpack, GzipAndZstdBombsAreRefusedQuicklyInBoundedMemory) {
  auto dir = TempDir::create("archive-test-");
  ASSERT_TRUE(dir);
  int n = 0;
  for (Bomb bomb : {Bomb{Compression::kGzip, gzipOfZeros(kGiB)}, Bomb{Compression::kZstd, zstdOfZeros(kGiB)}}) {
    SCOPED_TRACE(compressionName(bomb.compression));
    ASSERT_LT(bomb.bytes.size(), 2u << 20);  // 1 GiB of zeros in at most 2 MiB
    // Default limits: the ratio stops it long before limits.max_upload_bytes (8 GiB).
    const std::string target = dir->path() + "/bomb" + std::to_string(n++);
    Status status;
    const auto start = std::chrono::steady_clock::now();
    uint64_t growth = peakGrowthKib(
        [&] { status = decompressToFile(PackedInput{"", bomb.bytes}, bomb.compression, target, UnpackLimits{}); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code(), ErrorCode::kTooLarge);
    EXPECT_NE(status.error().message().find("limits.max_decompression_ratio"), std::string::npos)
        << status.error().message();
    EXPECT_LE(sizeOf(target), std::max<uint64_t>(200 * bomb.bytes.size(), kRatioAllowanceBytes));
    EXPECT_LT(growth, kMaxGrowthKib);
    EXPECT_LT(seconds, 60.0);  // about 1.5 s on an idle machine
    std::cout << compressionName(bomb.compression) << " bomb of " << bomb.bytes.size() << " bytes refused after "
              << sizeOf(target) << " bytes in " << seconds << " s, peak memory +" << growth << " KiB\n";

    // With the ratio check off, limits.max_upload_bytes stops it.
    UnpackLimits no_ratio;
    no_ratio.max_ratio = 0;
    no_ratio.max_bytes = 16 << 20;
    const std::string capped = dir->path() + "/capped" + std::to_string(n++);
    status = decompressToFile(PackedInput{"", bomb.bytes}, bomb.compression, capped, no_ratio);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code(), ErrorCode::kTooLarge);
    EXPECT_NE(status.error().message().find("limits.max_upload_bytes (16777216 bytes)"), std::string::npos)
        << status.error().message();
    EXPECT_LE(sizeOf(capped), 16u << 20);
  }
}

TEST(Unpack, ZipBombIsRefusedQuicklyInBoundedMemory) {
  auto dir = TempDir::create("archive-test-");
  ASSERT_TRUE(dir);
  const std::string zip = makeZip({zerosEntry("App.dSYM/Contents/Resources/DWARF/App", kGiB)});
  ASSERT_LT(zip.size(), 2u << 20);
  Status status;
  const auto start = std::chrono::steady_clock::now();
  uint64_t growth = peakGrowthKib([&] { status = extractZip(PackedInput{"", zip}, dir->path(), UnpackLimits{}); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kTooLarge);
  EXPECT_NE(status.error().message().find("zip entry 'App.dSYM/Contents/Resources/DWARF/App' decompresses to more "
                                          "than 200 times"),
            std::string::npos)
      << status.error().message();
  EXPECT_LE(sizeOf(dir->path() + "/App.dSYM/Contents/Resources/DWARF/App"), 200 * zip.size());
  EXPECT_LT(growth, kMaxGrowthKib);
  EXPECT_LT(seconds, 60.0);  // about 1.5 s on an idle machine
  std::cout << "zip bomb of " << zip.size() << " bytes refused in " << seconds << " s, peak memory +" << growth
            << " KiB\n";

  // The entry's declared size alone refuses it when it is over limits.max_upload_bytes.
  UnpackLimits small;
  small.max_bytes = 1 << 20;
  auto second = TempDir::create("archive-test-");
  ASSERT_TRUE(second);
  status = extractZip(PackedInput{"", zip}, second->path(), small);
  ASSERT_FALSE(status);
  EXPECT_NE(
      status.error().message().find("declares 1073741824 bytes, more than limits.max_upload_bytes (1048576 bytes)"),
      std::string::npos)
      << status.error().message();
  EXPECT_EQ(sizeOf(second->path() + "/App.dSYM/Contents/Resources/DWARF/App"), 0u);
}

TEST(Unpack, ManyModestZipEntriesHitTheWholeArchiveRatio) {
  // Each entry (1 MiB of zeros) stays within the 1 MiB allowance; together they are 40 MiB
  // from about 40 KiB of archive.
  std::vector<ZipEntry> entries;
  for (int i = 0; i < 40; ++i) entries.push_back(zerosEntry("part" + std::to_string(i), 1 << 20));
  const std::string zip = makeZip(entries);
  auto dir = TempDir::create("archive-test-");
  ASSERT_TRUE(dir);
  Status status = extractZip(PackedInput{"", zip}, dir->path(), UnpackLimits{});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kTooLarge);
  EXPECT_NE(status.error().message().find("the zip upload decompresses to more than 200 times its " +
                                          std::to_string(zip.size()) + " compressed bytes"),
            std::string::npos)
      << status.error().message();
  // A higher ratio lets it through.
  UnpackLimits lenient;
  lenient.max_ratio = 2000;
  auto second = TempDir::create("archive-test-");
  ASSERT_TRUE(second);
  Status ok = extractZip(PackedInput{"", zip}, second->path(), lenient);
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(sizeOf(second->path() + "/part39"), 1u << 20);
}

struct OddZip {
  const char* what;
  std::vector<ZipEntry> entries;
  std::string message;  // a part of the expected error
};

TEST(Zip, OddArchivesAreRefusedAsMalformedWithoutThrowing) {
  ZipEntry encrypted = storedEntry("secret", "x");
  encrypted.flags = 1;
  std::vector<ZipEntry> crowd;
  for (int i = 0; i < 11; ++i) crowd.push_back(storedEntry("f" + std::to_string(i), "x"));
  const std::vector<OddZip> cases = {
      {"a file, then a file under it", {storedEntry("a", "1"), storedEntry("a/b", "2")}, "needs 'a' to be a folder"},
      {"a file under a name, then that name as a file",
       {storedEntry("a/b", "2"), storedEntry("a", "1")},
       "zip entry 'a' is a file, but the archive also holds a folder 'a'"},
      {"a file, then a folder entry of that name",
       {storedEntry("a", "1"), storedEntry("a/", "")},
       "is a folder, but the archive also holds a file 'a'"},
      {"a duplicate name", {storedEntry("x", "1"), storedEntry("x", "2")}, "holds 'x' twice"},
      {"a duplicate spelt differently", {storedEntry("d/x", "1"), storedEntry("d//./x", "2")}, "holds 'd/x' twice"},
      {"an absolute path", {storedEntry("/tmp/restack-evil", "1")}, "absolute path"},
      {"a climb out", {storedEntry("../evil", "1")}, "outside the upload folder"},
      {"a climb out from a folder", {storedEntry("a/../../evil", "1")}, "outside the upload folder"},
      {"a symbolic link", {symlinkEntry("link", "/etc/passwd")}, "is a symbolic link"},
      {"an empty name", {storedEntry("", "1")}, "empty name"},
      {"a NUL in a name", {storedEntry(std::string("a\0b", 3), "1")}, "NUL"},
      {"a name of slashes only", {storedEntry("./", "")}, "names no file"},
      {"an encrypted entry", {encrypted}, "is encrypted"},
      {"a name component over 255 bytes", {storedEntry(std::string(300, 'n'), "1")}, "longer than 255 bytes"},
      {"more entries than the limit", crowd, "lists 11 entries, more than the limit of 10"},
  };
  for (const OddZip& odd : cases) {
    SCOPED_TRACE(odd.what);
    auto dir = TempDir::create("archive-test-");
    ASSERT_TRUE(dir);
    const std::string inner = dir->path() + "/inner";
    ASSERT_TRUE(fs::create_directory(inner));
    UnpackLimits limits;
    limits.max_zip_entries = 10;
    const std::string zip = makeZip(odd.entries);
    Status status = extractZip(PackedInput{"", zip}, inner, limits);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code(), ErrorCode::kMalformedInput) << status.error().message();
    EXPECT_NE(status.error().message().find(odd.message), std::string::npos) << status.error().message();
    // Nothing was written next to the extraction folder.
    std::vector<std::string> outside;
    for (const auto& entry : fs::directory_iterator(dir->path())) outside.push_back(entry.path().filename());
    EXPECT_EQ(outside, std::vector<std::string>{"inner"});
    EXPECT_FALSE(fs::exists("/tmp/restack-evil"));
  }
}

TEST(Zip, MacosShadowsAndFolderEntriesAreFine) {
  auto dir = TempDir::create("archive-test-");
  ASSERT_TRUE(dir);
  const std::string zip = makeZip({storedEntry("App.dSYM/", ""), storedEntry("App.dSYM/Contents/", ""),
                                   deflatedEntry("App.dSYM/Contents/Info.plist", "<plist/>"),
                                   storedEntry("__MACOSX/App.dSYM/._Info.plist", "junk"),
                                   storedEntry("App.dSYM/Contents/", "")});  // a repeated folder is harmless
  Status status = extractZip(PackedInput{"", zip}, dir->path(), UnpackLimits{});
  ASSERT_TRUE(status) << status.error().message();
  EXPECT_EQ(readAll(dir->path() + "/App.dSYM/Contents/Info.plist"), "<plist/>");
  EXPECT_FALSE(fs::exists(dir->path() + "/__MACOSX"));
}

class IngestUnpacking : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("archive-test-");
    ASSERT_TRUE(dir);
    dir_.emplace(std::move(*dir));
    StoreOptions options;
    options.path = dir_->path() + "/store";
    auto store = SymbolStore::open(options);
    ASSERT_TRUE(store) << store.error().message();
    store_ = std::move(*store);
    meta_.app = "shop";
    meta_.build_id = "1.0";
  }
  Expected<IngestReport> ingest(std::string_view bytes, const std::string& display_name,
                                const IngestOptions& options = {}) {
    UploadContent content;
    content.bytes = bytes;
    content.display_name = display_name;
    return ingestUpload(*store_, meta_, content, options);
  }
  Expected<IngestReport> ingestFile(std::string_view bytes, const std::string& name) {
    const std::string path = dir_->path() + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    UploadContent content;
    content.path = path;
    content.display_name = name;
    return ingestUpload(*store_, meta_, content, IngestOptions{});
  }

  std::optional<TempDir> dir_;
  std::unique_ptr<SymbolStore> store_;
  UploadMeta meta_;
};

constexpr std::string_view kMapping =
    "# compiler: R8\n"
    "com.example.shop.Checkout -> a.b:\n"
    "    1:10:void pay(int):42:51 -> a\n"
    "    11:20:void cancel():60:69 -> b\n";

TEST_F(IngestUnpacking, CompressedAndZippedUploadsStillIngest) {
  const std::string gzip = gzipOf(kMapping), zstd = zstdOf(kMapping);
  const std::string zip = makeZip({deflatedEntry("mapping.txt", kMapping)});
  for (const auto& [name, bytes] :
       {std::pair<std::string, std::string>{"mapping.txt.gz", gzip}, {"mapping.txt.zst", zstd}, {"mapping.zip", zip}}) {
    SCOPED_TRACE(name);
    auto in_message = ingest(bytes, name);
    ASSERT_TRUE(in_message) << in_message.error().message();
    EXPECT_EQ(in_message->kind, SymbolKind::kProguard);
    EXPECT_GT(in_message->records, 0u);
    EXPECT_EQ(in_message->input_bytes, kMapping.size());
    auto from_file = ingestFile(bytes, name);
    ASSERT_TRUE(from_file) << from_file.error().message();
    EXPECT_EQ(from_file->records, in_message->records);
  }
}

TEST_F(IngestUnpacking, BombInAMessageIsRefusedWithoutFillingMemory) {
  const std::string bomb = gzipOfZeros(kGiB);
  Expected<IngestReport> report = IngestReport{};
  uint64_t growth = peakGrowthKib([&] { report = ingest(bomb, "mapping.txt.gz"); });
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), ErrorCode::kTooLarge);
  EXPECT_NE(report.error().message().find("limits.max_decompression_ratio"), std::string::npos)
      << report.error().message();
  EXPECT_LT(growth, kMaxGrowthKib);
}

TEST_F(IngestUnpacking, ZipWithAFileAndAFolderOfOneNameIsAMalformedUpload) {
  // Used to throw std::filesystem_error out of the worker, on every restart.
  const std::string zip = makeZip({storedEntry("a", "1"), storedEntry("a/b", "2")});
  for (auto report : {ingest(zip, "symbols.zip"), ingestFile(zip, "symbols.zip")}) {
    ASSERT_FALSE(report);
    EXPECT_EQ(report.error().code(), ErrorCode::kMalformedInput) << report.error().message();
    EXPECT_NE(report.error().message().find("needs 'a' to be a folder"), std::string::npos) << report.error().message();
  }
  const std::string traversal = makeZip({storedEntry("../../mapping.txt", kMapping)});
  auto report = ingest(traversal, "symbols.zip");
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), ErrorCode::kMalformedInput);
  EXPECT_NE(report.error().message().find("outside the upload folder"), std::string::npos);
}

TEST_F(IngestUnpacking, SourceMapsOverTheirLimitAreRefusedBeforeParsing) {
  const std::string map = R"({"version":3,"file":"main.js","sources":["a.js"],"names":[],"mappings":"AAAA"})";
  IngestOptions options;
  options.max_sourcemap_bytes = map.size() - 1;
  auto refused = ingest(map, "main.js.map", options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kTooLarge);
  EXPECT_NE(refused.error().message().find("exceeds limits.max_sourcemap_bytes (" + std::to_string(map.size() - 1)),
            std::string::npos)
      << refused.error().message();
  // Compressed, the decompressed size counts.
  auto refused_gzip = ingest(gzipOf(map), "main.js.map.gz", options);
  ASSERT_FALSE(refused_gzip);
  EXPECT_EQ(refused_gzip.error().code(), ErrorCode::kTooLarge);
  options.max_sourcemap_bytes = map.size();
  auto accepted = ingest(map, "main.js.map", options);
  ASSERT_TRUE(accepted) << accepted.error().message();
  EXPECT_EQ(accepted->kind, SymbolKind::kSourcemap);
}

}  // namespace
}  // namespace restack
