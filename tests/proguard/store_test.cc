// Store behaviour: which mapping an event uses (app + build, pg_map_id, r8-map-id-<id> source
// files), re-uploads, missing mappings, record round trips, errors on bad uploads, concurrency.
#include <thread>

#include "formats/proguard/mapping_reader.h"
#include "symbolstore/proguard/proguard_records.h"
#include "tests/proguard/retrace_harness.h"

namespace restack::testing {
namespace {

const std::string kMapA = lines({"# compiler: R8", "# pg_map_id: aaaa111", "# pg_map_hash: SHA-256 aaaa111ffff",
                                 "org.app.Alpha -> a:", "    1:1:void run():10:10 -> a"});
const std::string kMapB = lines({"# compiler: R8", "# pg_map_id: bbbb222", "org.app.Beta -> a:",
                                 "    1:1:void run():20:20 -> a"});

TEST(ProguardStore, MissingMappingIsReportedWithTheBuild) {
  RetraceHarness harness;
  auto results = harness.retraceResults("\tat a.a(SourceFile:1)", {"shop", "9", "android", ""});
  ASSERT_TRUE(results);
  EXPECT_EQ((*results)[0].lookup.status, FrameStatus::kMissingSymbols);
  EXPECT_EQ((*results)[0].lookup.missing_id, "shop:9");
}

TEST(ProguardStore, ReuploadReplacesTheMappingOfABuild) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(kMapA));
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)"), "\tat org.app.Alpha.run(Alpha.java:10)\n");
  ASSERT_TRUE(harness.ingest(kMapB));
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)"), "\tat org.app.Beta.run(Beta.java:20)\n");
  // The old mapping's records and map id are gone.
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)", {"", "", "android", "aaaa111"}), "\tat a.a(SourceFile:1)\n");
  size_t keys = 0;
  std::unique_ptr<rocksdb::Iterator> it(
      harness.store().db().NewIterator(rocksdb::ReadOptions(), harness.store().family(SymbolFamily::kProguard)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++keys;
  EXPECT_EQ(keys, 4u);  // build pointer, map id pointer, map info, one class
}

TEST(ProguardStore, MapIdFromEventOrFramePicksTheMapping) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(kMapA, "shop", "1"));
  ASSERT_TRUE(harness.ingest(kMapB, "shop", "2"));
  // The event names build 1 but pg_map_id bbbb222: the map id wins.
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)", {"shop", "1", "android", "bbbb222"}),
            "\tat org.app.Beta.run(Beta.java:20)\n");
  // No app/build at all, only the map id (or the hash).
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)", {"", "", "android", "aaaa111"}),
            "\tat org.app.Alpha.run(Alpha.java:10)\n");
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)", {"", "", "android", "aaaa111ffff"}),
            "\tat org.app.Alpha.run(Alpha.java:10)\n");
  // A frame's source file carries the map id (R8 --source-file-template r8-map-id-%MAP_ID).
  EXPECT_EQ(harness.retrace("\tat a.a(r8-map-id-bbbb222:1)", {"shop", "1", "android", ""}),
            "\tat org.app.Beta.run(Beta.java:20)\n");
  // An unknown map id is missing symbols named by that id, with a note on the mismatch.
  auto results = harness.retraceResults("\tat a.a(SourceFile:1)", {"shop", "1", "android", "cccc333"});
  ASSERT_TRUE(results);
  EXPECT_EQ((*results)[0].lookup.status, FrameStatus::kMissingSymbols);
  EXPECT_EQ((*results)[0].lookup.missing_id, "cccc333");
  EXPECT_NE((*results)[0].lookup.note.find("aaaa111"), std::string::npos);
  auto frame_results = harness.retraceResults("\tat a.a(r8-map-id-dddd444:1)", {"shop", "1", "android", ""});
  ASSERT_TRUE(frame_results);
  EXPECT_EQ((*frame_results)[0].lookup.missing_id, "dddd444");
}

TEST(ProguardStore, StructuredResultsOfAFrame) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(lines({"org.app.Gamma -> g:", "    3:3:void org.app.Util.a():5:5 -> a",
                                    "    3:3:void run():30 -> a", "    void x(int) -> b", "    void y(long) -> b"})));
  auto results = harness.retraceResults(lines({"java.lang.Error", "\tat g.a(SourceFile:3)", "\tat g.b(SourceFile:7)",
                                               "\tat java.lang.Thread.run(Thread.java:1)"}));
  ASSERT_TRUE(results);
  ASSERT_EQ(results->size(), 4u);
  const FrameLookup& inlined = (*results)[1].lookup;
  EXPECT_EQ(inlined.status, FrameStatus::kSymbolicated);
  EXPECT_EQ(inlined.tier, "mapping");
  ASSERT_EQ(inlined.frames.size(), 2u);
  EXPECT_EQ(inlined.frames[0].function, "org.app.Util.a");
  EXPECT_TRUE(inlined.frames[0].inlined);
  EXPECT_EQ(inlined.frames[1].function, "org.app.Gamma.run");
  EXPECT_EQ(inlined.frames[1].line, 30u);
  EXPECT_FALSE(inlined.frames[1].inlined);
  const FrameLookup& ambiguous = (*results)[2].lookup;
  ASSERT_EQ(ambiguous.alternatives.size(), 1u);
  EXPECT_EQ(ambiguous.frames[0].function, "org.app.Gamma.x");
  EXPECT_EQ(ambiguous.alternatives[0][0].function, "org.app.Gamma.y");
  EXPECT_EQ((*results)[3].lookup.note, "not in mapping");
  auto exception_type = harness.resolver().deobfuscateClass({"app", "1", "android", ""}, "g");
  ASSERT_TRUE(exception_type);
  EXPECT_EQ(**exception_type, "org.app.Gamma");
}

TEST(ProguardStore, BadUploadsFailClearlyAndLeaveNothingBehind) {
  RetraceHarness harness;
  auto empty = harness.ingest("# just a comment\n");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message().find("no class mappings"), std::string::npos);
  auto broken = harness.ingest(lines({"a.A -> a:", "    1:1:void f():3:3 -> a", "b.B -> b", "    void g() -> a"}));
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find("mapping.txt: mapping line 3"), std::string::npos) << broken.error().message();
  std::unique_ptr<rocksdb::Iterator> it(
      harness.store().db().NewIterator(rocksdb::ReadOptions(), harness.store().family(SymbolFamily::kProguard)));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
}

TEST(ProguardStore, ClassRecordRoundTripAndCorruptionIsAnError) {
  const std::string text = lines({"# {'id':'com.android.tools.r8.mapping','version':'2.2'}", "a.A -> q:",
                                        "# {'id':'sourceFile','fileName':'A.kt'}", "    1:2:int a.B.f(int,long):3:4 -> a",
                                        "    1:2:int g():9 -> a",
                                        "    # {'id':'com.android.tools.r8.rewriteFrame','conditions':['throws(La;)'],"
                                        "'actions':['removeInnerFrames(1)']}",
                                        "    3:3:int g():0:0 -> a",
                                        "    # {'id':'com.android.tools.r8.outlineCallsite','positions':{'1':2},'outline':'Lb;a()V'}"});
  proguard::MappingReader reader(text);  // reads `text` in place: it must outlive the reader
  proguard::ClassMapping mapping;
  auto more = reader.next(mapping);
  ASSERT_TRUE(more) << more.error().describe();
  ASSERT_TRUE(*more);
  std::string bytes = proguard::encodeClassRecord(mapping);
  auto record = proguard::decodeClassRecord(bytes);
  ASSERT_TRUE(record) << record.error().describe();
  EXPECT_EQ(record->original_name, "a.A");
  EXPECT_EQ(record->source_file, "A.kt");
  const proguard::MethodRecord* method = record->findMethod("a");
  ASSERT_NE(method, nullptr);
  ASSERT_EQ(method->ranges.size(), 3u);
  EXPECT_EQ(record->holderOf(method->ranges[0]), "a.B");
  EXPECT_EQ(record->strings[method->ranges[0].params], "int,long");
  ASSERT_EQ(method->ranges[1].rules.size(), 1u);
  ASSERT_TRUE(method->ranges[2].callsite.has_value());
  EXPECT_EQ(method->ranges[2].callsite->outline, "Lb;a()V");
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(proguard::decodeClassRecord(std::string_view(bytes).substr(0, cut))) << cut;
  }
  std::string newer = bytes;
  newer[0] = 9;
  auto refused = proguard::decodeClassRecord(newer);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnsupported);
}

TEST(ProguardStore, ConcurrentRetraceFromManyThreads) {
  RetraceHarness harness;
  std::string mapping;
  for (int c = 0; c < 200; ++c) {
    mapping += "org.app.C" + std::to_string(c) + " -> c" + std::to_string(c) + ":\n";
    mapping += "    1:9:void m():100:108 -> a\n";
  }
  ASSERT_TRUE(harness.ingest(mapping));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        int c = (i * 7 + t) % 200;
        std::string frame = "\tat c" + std::to_string(c) + ".a(SourceFile:3)";
        std::string expected = "\tat org.app.C" + std::to_string(c) + ".m(C" + std::to_string(c) + ".java:102)\n";
        if (harness.retrace(frame) != expected) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace restack::testing

namespace restack::testing {
namespace {

// The worked example at the top of symbolstore/proguard/proguard_records.h, byte for byte.
TEST(ProguardStore, ClassRecordMatchesTheDocumentedExample) {
  const std::string text = lines({"com.example.Foo -> a.b:", "    1:1:void com.example.Util.log():7:7 -> c",
                                  "    1:1:void bar(int):14 -> c"});
  proguard::MappingReader reader(text);
  proguard::ClassMapping mapping;
  auto more = reader.next(mapping);
  ASSERT_TRUE(more && *more);
  std::string expected = std::string("\x01\x0F") + "com.example.Foo" + std::string("\x00\x00", 2) +
                         std::string("\x06\x00\x04", 3) + "void" + "\x10" + "com.example.Util" + "\x03" + "log" +
                         "\x03" + "bar" + "\x03" + "int" + "\x01\x01" + "c" + "\x02" +
                         std::string("\x03\x01\x01\x07\x07\x01\x02\x03\x00", 9) +
                         std::string("\x03\x01\x01\x0E\x0E\x01\x00\x04\x05", 9);
  EXPECT_EQ(proguard::encodeClassRecord(mapping), expected);
}

}  // namespace
}  // namespace restack::testing
