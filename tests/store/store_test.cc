// The symbol store's own records: schema version, applied offsets, kind detection, unpacking.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "formats/common/archive.h"
#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "symbolstore/native/native_resolver.h"
#include "symbolstore/proguard/proguard_resolver.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"
#include "symbolstore/store.h"
#include "symbolstore/symbol_source.h"
#include "symbolstore/symbolizer.h"

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

namespace restack {
namespace {

std::unique_ptr<SymbolStore> openStore(const std::string& path, bool read_only = false) {
  StoreOptions options;
  options.path = path;
  options.read_only = read_only;
  auto store = SymbolStore::open(options);
  EXPECT_TRUE(store) << (store ? "" : store.error().message());
  return store ? std::move(*store) : nullptr;
}

TEST(SymbolStore, AppliedOffsetsSurviveReopening) {
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  {
    auto store = openStore(dir->path());
    auto none = store->appliedOffset("restack.symbols", 3);
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->has_value());
    rocksdb::WriteBatch batch;
    store->recordAppliedOffset(batch, "restack.symbols", 3, 42);
    store->recordAppliedOffset(batch, "restack.symbols", 4, 7);
    store->recordAppliedOffset(batch, "restack.symbols.shared", 3, 9);
    ASSERT_TRUE(store->write(batch));
  }
  auto store = openStore(dir->path(), /*read_only=*/true);
  EXPECT_EQ(store->appliedOffset("restack.symbols", 3)->value(), 42);
  EXPECT_EQ(store->appliedOffset("restack.symbols", 4)->value(), 7);
  EXPECT_EQ(store->appliedOffset("restack.symbols.shared", 3)->value(), 9);
  // The topic name is a delimited component: a prefix of another topic is a different key.
  EXPECT_FALSE(store->appliedOffset("restack.symbol", 3)->has_value());
}

// A file system that runs out of space on request, as a worker's store volume does: every append
// to a file fails with ENOSPC while `full` is set.
class FillableFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit FillableFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base) : FileSystemWrapper(base) {}
  const char* Name() const override { return "FillableFileSystem"; }
  std::atomic<bool> full{false};

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* debug) override {
    auto status = target()->NewWritableFile(name, options, result, debug);
    if (status.ok()) *result = std::make_unique<File>(std::move(*result), full);
    return status;
  }

 private:
  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> base, const std::atomic<bool>& full)
        : FSWritableFileOwnerWrapper(std::move(base)), full_(full) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* debug) override {
      if (full_) return rocksdb::IOStatus::NoSpace("No space left on device");
      return FSWritableFileOwnerWrapper::Append(data, options, debug);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo& info, rocksdb::IODebugContext* debug) override {
      if (full_) return rocksdb::IOStatus::NoSpace("No space left on device");
      return FSWritableFileOwnerWrapper::Append(data, options, info, debug);
    }

   private:
    const std::atomic<bool>& full_;
  };
};

// A full store volume is an error value, never a crash: RocksDB 7.8 (Debian 12) aborts the process
// on an assertion when a write to its LOG file failed and it logs again (the worker crash-looped
// that way while its volume was full), so the store keeps no LOG file. Opening, writing and
// reopening on a full volume fail with errors that say so; once there is room, it works again.
TEST(SymbolStore, AFullVolumeGivesErrorsNotACrash) {
  auto dir = TempDir::create("store-full-");
  ASSERT_TRUE(dir);
  auto file_system = std::make_shared<FillableFileSystem>(rocksdb::FileSystem::Default());
  StoreOptions options;
  options.path = dir->path() + "/store";
  options.env = rocksdb::NewCompositeEnv(file_system);
  auto put = [](SymbolStore& store, int32_t partition) {
    rocksdb::WriteBatch batch;
    store.recordAppliedOffset(batch, "restack.symbols", partition, 100 + partition);
    return store.write(batch);
  };
  {
    auto opened = SymbolStore::open(options);
    ASSERT_TRUE(opened) << opened.error().message();
    ASSERT_TRUE(put(**opened, 0));
    file_system->full = true;
    for (int32_t partition = 1; partition < 4; ++partition) {
      Status failed = put(**opened, partition);
      ASSERT_FALSE(failed);
      EXPECT_EQ(failed.error().code(), ErrorCode::kIo);
      EXPECT_NE(failed.error().message().find("No space left on device"), std::string::npos)
          << failed.error().message();
    }
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto refused = SymbolStore::open(options);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("No space left on device"), std::string::npos)
        << refused.error().message();
  }
  EXPECT_FALSE(std::filesystem::exists(options.path + "/LOG"));
  file_system->full = false;
  auto reopened = SymbolStore::open(options);
  ASSERT_TRUE(reopened) << reopened.error().message();
  EXPECT_TRUE(put(**reopened, 5));
  auto applied = (*reopened)->appliedOffset("restack.symbols", 0);
  ASSERT_TRUE(applied);
  EXPECT_EQ(**applied, 100);
}

TEST(SymbolStore, RefusesAnotherSchemaVersion) {
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  {
    auto store = openStore(dir->path());
    rocksdb::WriteBatch batch;
    batch.Put(store->family(kMetaFamily), "schema_version", std::string("\x63\x00\x00\x00", 4));
    ASSERT_TRUE(store->write(batch));
  }
  StoreOptions options;
  options.path = dir->path();
  auto reopened = SymbolStore::open(options);
  ASSERT_FALSE(reopened);
  EXPECT_NE(reopened.error().message().find("schema version 99"), std::string::npos) << reopened.error().message();
}

TEST(SymbolStore, OpenFailsClearlyOnAFile) {
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  std::string file = dir->path() + "/not-a-folder";
  std::ofstream(file) << "x";
  StoreOptions options;
  options.path = file;
  auto store = SymbolStore::open(options);
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().message().find(file), std::string::npos);
}

// A store as the code before StoreFamily wrote it: the five families of the old SymbolFamily
// enum, created with RocksDB directly so that this test does not depend on who declares what.
void writeStoreWithTheOriginalFamilies(const std::string& path, const std::vector<std::string>& extra = {}) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors{{rocksdb::kDefaultColumnFamilyName, {}}};
  std::vector<std::string> names = {"meta", "native", "proguard", "sourcemap", "pending"};
  names.insert(names.end(), extra.begin(), extra.end());
  for (const std::string& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, path, descriptors, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteBatch batch;
  batch.Put(handles[1], "schema_version", std::string("\x01\x00\x00\x00", 4));
  for (size_t i = 1; i < handles.size(); ++i) batch.Put(handles[i], "key", "value of " + names[i - 1]);
  ASSERT_TRUE(db->Write(rocksdb::WriteOptions(), &batch).ok());
  for (auto* handle : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(handle).ok());
  ASSERT_TRUE(db->Close().ok());
}

std::string valueIn(const SymbolStore& store, const StoreFamily& family) {
  auto value = store.get(family, "key");
  EXPECT_TRUE(value) << value.error().message();
  return value && value->has_value() ? **value : "";
}

TEST(SymbolStore, OpensAStoreWrittenWithTheOriginalFamilyNames) {
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  const std::string path = dir->path() + "/db";
  // "later" stands for a family a newer build declared and this one does not know.
  writeStoreWithTheOriginalFamilies(path, {"later"});
  const StoreFamily native("native"), proguard("proguard"), sourcemap("sourcemap");
  for (bool read_only : {true, false}) {
    auto store = openStore(path, read_only);
    ASSERT_TRUE(store);
    EXPECT_EQ(valueIn(*store, native), "value of native");
    EXPECT_EQ(valueIn(*store, proguard), "value of proguard");
    EXPECT_EQ(valueIn(*store, sourcemap), "value of sourcemap");
    // pending and later are declared by no layer of this test: opened all the same (RocksDB
    // refuses to open a database without all of its families). Read-only opens what is on disk.
    if (read_only) EXPECT_EQ(store->families().size(), 6u);
  }
  // A family declared now reads back what the old code wrote under that name.
  const StoreFamily pending("pending");
  auto store = openStore(path, /*read_only=*/true);
  ASSERT_TRUE(store);
  EXPECT_EQ(valueIn(*store, pending), "value of pending");
}

TEST(SymbolStore, CreatesDeclaredFamiliesAndReadsMissingOnesAsEmptyWhenReadOnly) {
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  const std::string path = dir->path() + "/db";
  writeStoreWithTheOriginalFamilies(path);
  static const StoreFamily added("store-test-added");
  {
    auto store = openStore(path, /*read_only=*/true);
    ASSERT_TRUE(store);
    EXPECT_EQ(valueIn(*store, added), "");
  }
  {
    auto store = openStore(path);
    ASSERT_TRUE(store);
    rocksdb::WriteBatch batch;
    batch.Put(store->family(added), "key", "new");
    ASSERT_TRUE(store->write(batch));
  }
  auto store = openStore(path, /*read_only=*/true);
  ASSERT_TRUE(store);
  EXPECT_EQ(valueIn(*store, added), "new");
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  EXPECT_NE(std::find(names.begin(), names.end(), "store-test-added"), names.end());
  const std::vector<std::string> registered = registeredStoreFamilies();
  EXPECT_NE(std::find(registered.begin(), registered.end(), "meta"), registered.end());
}

UploadContent inMemory(std::string_view bytes) {
  UploadContent content;
  content.bytes = bytes;
  return content;
}

TEST(Ingest, DetectsKindsFromContent) {
  EXPECT_EQ(*detectSymbolKind(inMemory(std::string("\x7f"
                                                   "ELF\x02\x01\x01",
                                                   7))),
            SymbolKind::kElf);
  EXPECT_EQ(*detectSymbolKind(inMemory(std::string("\xcf\xfa\xed\xfe", 4))), SymbolKind::kMachO);
  EXPECT_EQ(*detectSymbolKind(inMemory(std::string("\xca\xfe\xba\xbe", 4))), SymbolKind::kMachO);
  EXPECT_EQ(*detectSymbolKind(inMemory("  {\"version\":3,\"mappings\":\"\"}")), SymbolKind::kSourcemap);
  EXPECT_EQ(*detectSymbolKind(inMemory("# compiler: R8\n# {\"id\":\"com.android.tools.r8.mapping\"}\n"
                                       "com.example.Main -> a.a:\n    void main() -> a\n")),
            SymbolKind::kProguard);
  auto unknown = detectSymbolKind(inMemory("hello"));
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("pass the kind"), std::string::npos);
}

TEST(Ingest, KindsComeFromTheRegistryOfSources) {
  EXPECT_EQ(symbolKindList(", ", " or "), "dsym, macho, elf, proguard, sourcemap or breakpad");
  for (const SymbolSource& source : symbolSources()) {
    auto parsed = parseSymbolKind(source.name);
    ASSERT_TRUE(parsed) << source.name;
    EXPECT_EQ(*parsed, source.kind());
    EXPECT_STREQ(symbolKindName(*parsed), source.name);
  }
  EXPECT_EQ(*parseSymbolKind("macho"), SymbolKind::kMachO);
  auto unknown = parseSymbolKind("pdb");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message(),
            "unknown symbol kind 'pdb' (expected dsym, macho, elf, proguard, sourcemap or breakpad)");
}

TEST(Ingest, AtMostOneSourceClaimsAnUpload) {
  // Detection does not depend on the registry's order: no two detectors claim the same bytes,
  // including a JSON object whose first line also reads like a mapping's class line.
  const std::vector<std::pair<std::string, const char*>> samples = {
      {std::string("\x7f"
                   "ELF\x02\x01\x01",
                   7),
       "elf"},
      {std::string("\xcf\xfa\xed\xfe", 4), "macho"},
      {std::string("\xca\xfe\xba\xbe", 4), "macho"},
      {"\xef\xbb\xbf{\"version\":3}", "sourcemap"},
      {"{\"x\": \"a -> b\", \"y\":\n3}", "sourcemap"},
      {"\n\xef\xbb\xbf{\"a -> b\":\n", "sourcemap"},
      {"# comment\ncom.example.Main -> a.a:\n", "proguard"},
      {"\xef\xbb\xbf"
       "com.example.Main -> a.a:\n",
       "proguard"},
      {"!function(){\"use strict\";var e=function(t){return t.a.b}}();\n//# sourceMappingURL=main.js.map\n",
       "sourcemap"},
      {"MODULE Linux x86_64 3D2CE8D6E0C1F8AB1C9F3D2A4B5C6D7E0 libapp.so\nINFO CODE_ID D6E82C3DC1E0ABF8\n", "breakpad"},
      {"hello", nullptr},
      {"this is not a symbol file", nullptr},
      {"", nullptr},
  };
  for (const auto& [bytes, expected] : samples) {
    std::vector<std::string> claimed;
    for (const SymbolSource& source : symbolSources()) {
      if (source.matches_file != nullptr && source.matches_file(bytes)) claimed.push_back(source.name);
    }
    if (expected == nullptr) {
      EXPECT_TRUE(claimed.empty()) << bytes;
    } else {
      ASSERT_EQ(claimed.size(), 1u) << bytes;
      EXPECT_EQ(claimed[0], expected) << bytes;
    }
  }
}

// A source map behind a UTF-8 byte order mark (Windows toolchains) or behind the XSSI guard line
// ")]}'" that the format allows is a source map, and is read.
TEST(Ingest, SourceMapsBehindAByteOrderMarkOrTheXssiGuardAreRead) {
  const std::string map =
      R"({"version":3,"file":"app.min.js","sources":["app.js"],"names":["run"],"mappings":"AAAAA"})";
  for (const std::string& upload : {"\xef\xbb\xbf" + map, ")]}'\n" + map, "\xef\xbb\xbf)]}'\r\n" + map}) {
    auto kind = detectSymbolKind(inMemory(upload));
    ASSERT_TRUE(kind) << kind.error().message();
    EXPECT_EQ(*kind, SymbolKind::kSourcemap);
    auto dir = TempDir::create("store-test-");
    ASSERT_TRUE(dir);
    StoreOptions options;
    options.path = dir->path();
    auto store = SymbolStore::open(options);
    ASSERT_TRUE(store) << store.error().message();
    UploadMeta meta;
    meta.app = "web";
    meta.build_id = "1";
    auto report = ingestUpload(**store, meta, inMemory(upload), IngestOptions{});
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(report->kind, SymbolKind::kSourcemap);
  }
}

TEST(Ingest, DetectionMessagesListTheSources) {
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  UploadContent folder;
  folder.path = dir->path();
  auto not_bundle = detectSymbolKind(folder);
  ASSERT_FALSE(not_bundle);
  EXPECT_EQ(not_bundle.error().message(),
            dir->path() + " is a folder but not a .dSYM bundle (Contents/Resources/DWARF) or a folder of them");
  std::filesystem::create_directories(dir->path() + "/Contents/Resources/DWARF");
  EXPECT_EQ(*detectSymbolKind(folder), SymbolKind::kDsym);

  UploadContent text = inMemory("hello");
  text.display_name = "notes.txt";
  auto unknown = detectSymbolKind(text);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message(),
            "cannot tell what kind of symbol file notes.txt is (not Mach-O, ELF, a ProGuard mapping, a source map "
            "or the minified file it serves or a Breakpad symbol file); pass the kind explicitly");
}

TEST(Ingest, RefusesOversizedAndCorruptCompressedUploads) {
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  auto store = openStore(dir->path() + "/db");
  // A gzip bomb: 64 MiB of zeros compress to ~64 KiB.
  std::string zeros(64 << 20, '\0');
  uLongf size = compressBound(zeros.size());
  std::string deflated(size, '\0');
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(deflated.data()), &size, reinterpret_cast<const Bytef*>(zeros.data()),
                      zeros.size(), 9),
            Z_OK);
  // compress2 writes zlib, not gzip: wrap through the gzip file API instead.
  std::string gz_path = dir->path() + "/bomb.gz";
  gzFile gz = gzopen(gz_path.c_str(), "wb9");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, zeros.data(), static_cast<unsigned>(zeros.size())), static_cast<int>(zeros.size()));
  gzclose(gz);
  UploadMeta meta;
  meta.app = "a";
  meta.build_id = "1";
  UploadContent content;
  content.path = gz_path;
  IngestOptions options;
  options.max_input_bytes = 1 << 20;
  auto report = ingestUpload(*store, meta, content, options);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), ErrorCode::kTooLarge) << report.error().message();

  std::string truncated = "\x1f\x8b\x08\x00\x00\x00";
  auto corrupt = ingestUpload(*store, meta, inMemory(truncated), IngestOptions{});
  ASSERT_FALSE(corrupt);
  EXPECT_EQ(corrupt.error().code(), ErrorCode::kMalformedInput) << corrupt.error().message();
}

TEST(Archive, GzipFromMemoryOrFileWithConcatenatedMembers) {
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  std::string path = dir->path() + "/two.gz";
  for (const char* part : {"first member\n", "second member\n"}) {
    gzFile gz = gzopen(path.c_str(), "ab");
    gzputs(gz, part);
    gzclose(gz);
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(detectCompression(bytes), Compression::kGzip);
  UnpackLimits limits;
  limits.max_bytes = 1 << 20;
  for (const PackedInput& input : {PackedInput{"", bytes}, PackedInput{path, {}}}) {
    std::string target = dir->path() + (input.path.empty() ? "/from-memory" : "/from-file");
    Status status = decompressToFile(input, Compression::kGzip, target, limits);
    ASSERT_TRUE(status) << status.error().message();
    std::ifstream result(target);
    std::string text((std::istreambuf_iterator<char>(result)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "first member\nsecond member\n");
  }
}

TEST(Archive, ZipEntriesCannotEscapeTheFolder) {
  // A zip whose single entry is "../evil" (stored, no compression), built byte by byte.
  const std::string name = "../evil";
  const std::string data = "x";
  auto u16 = [](uint16_t v) { return std::string{static_cast<char>(v & 0xff), static_cast<char>(v >> 8)}; };
  auto u32 = [&](uint32_t v) { return u16(v & 0xffff) + u16(v >> 16); };
  uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), 1));
  std::string local = u32(0x04034b50) + u16(20) + u16(0) + u16(0) + u16(0) + u16(0) + u32(crc) + u32(1) + u32(1) +
                      u16(static_cast<uint16_t>(name.size())) + u16(0) + name + data;
  std::string central = u32(0x02014b50) + u16(20) + u16(20) + u16(0) + u16(0) + u16(0) + u16(0) + u32(crc) + u32(1) +
                        u32(1) + u16(static_cast<uint16_t>(name.size())) + u16(0) + u16(0) + u16(0) + u16(0) + u32(0) +
                        u32(0) + name;
  std::string end = u32(0x06054b50) + u16(0) + u16(0) + u16(1) + u16(1) + u32(static_cast<uint32_t>(central.size())) +
                    u32(static_cast<uint32_t>(local.size())) + u16(0);
  std::string zip = local + central + end;
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  std::filesystem::create_directories(dir->path() + "/inner");
  Status status = extractZip(PackedInput{"", zip}, dir->path() + "/inner", UnpackLimits{});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kMalformedInput);
  EXPECT_NE(status.error().message().find("outside"), std::string::npos) << status.error().message();
  EXPECT_FALSE(std::filesystem::exists(dir->path() + "/evil"));
}

TEST(Symbolizer, HoldsOneResolverPerRegisteredTypeAndKindsFindTheirOwn) {
  auto dir = TempDir::create("store-test-");
  ASSERT_TRUE(dir);
  auto store = openStore(dir->path());
  ASSERT_TRUE(store);
  SymbolizerOptions options;
  config::Cache defaults;
  for (const ResolverType& type : resolverTypes()) {
    // Every registered resolver has its cache knob in the config (config.h, `cache.<name>_mb`).
    auto mb = defaults.megabytesFor(type.name);
    ASSERT_TRUE(mb.has_value()) << type.name;
    options.cache_bytes[type.name] = *mb << 20;
  }
  EXPECT_FALSE(defaults.megabytesFor("dart").has_value());
  Symbolizer symbolizer(*store, options);
  const auto types = resolverTypes();
  ASSERT_EQ(types.size(), 3u);
  for (size_t slot = 0; slot < types.size(); ++slot) {
    EXPECT_EQ(resolverSlot(types[slot].name), slot);
    EXPECT_NE(&symbolizer.resolver(slot), nullptr);
  }
  // The typed accessors answer the registered slot's object, and each slot a different one.
  Resolver* native = &nativeResolver(symbolizer);
  Resolver* proguard = &proguardResolver(symbolizer);
  Resolver* sourcemap = &sourcemapResolver(symbolizer);
  EXPECT_EQ(native, &symbolizer.resolver(resolverSlot("native")));
  EXPECT_EQ(proguard, &symbolizer.resolver(resolverSlot("proguard")));
  EXPECT_EQ(sourcemap, &symbolizer.resolver(resolverSlot("sourcemap")));
  EXPECT_NE(native, proguard);
  EXPECT_NE(proguard, sourcemap);
  EXPECT_EQ(nativeResolver(symbolizer).cachedBytes(), 0u);
  symbolizer.forgetId("0123456789abcdef0123456789abcdef");  // a no-op where nothing is cached
  EXPECT_EQ(options.cacheBytes("native", 1), defaults.native_mb << 20);
  EXPECT_EQ(options.cacheBytes("dart", 7), 7u);
}

}  // namespace
}  // namespace restack
