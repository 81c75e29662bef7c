// Store behaviour: which mapping an event uses (app + build, pg_map_id, r8-map-id-<id> source
// files), re-uploads, missing mappings, record round trips (v1 and v2), the method table, the
// CLOCK cache, errors on bad uploads, concurrency.
#include <atomic>
#include <thread>

#include "formats/proguard/mapping_reader.h"
#include "symbolstore/proguard/clock_cache.h"
#include "symbolstore/proguard/proguard_records.h"
#include "tests/proguard/retrace_harness.h"

namespace restack::testing {
namespace {

const std::string kMapA = lines({"# compiler: R8", "# pg_map_id: aaaa111", "# pg_map_hash: SHA-256 aaaa111ffff",
                                 "org.app.Alpha -> a:", "    1:1:void run():10:10 -> a"});
const std::string kMapB =
    lines({"# compiler: R8", "# pg_map_id: bbbb222", "org.app.Beta -> a:", "    1:1:void run():20:20 -> a"});

TEST(ProguardStore, MissingMappingIsReportedWithTheBuild) {
  RetraceHarness harness;
  auto results = harness.retraceResults("\tat a.a(SourceFile:1)", {"shop", "9", "android", {}});
  ASSERT_TRUE(results);
  EXPECT_EQ((*results)[0].lookup.status, FrameStatus::kMissingSymbols);
  EXPECT_EQ((*results)[0].lookup.missing_id, "shop:9");
  EXPECT_EQ((*results)[0].lookup.reason, FrameReason::kMissingSymbols);
  EXPECT_EQ((*results)[0].lookup.missing_id_kind, MissingIdKind::kAppBuild);
}

TEST(ProguardStore, ReuploadReplacesTheMappingOfABuild) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(kMapA));
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)"), "\tat org.app.Alpha.run(Alpha.java:10)\n");
  ASSERT_TRUE(harness.ingest(kMapB));
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)"), "\tat org.app.Beta.run(Beta.java:20)\n");
  // The old mapping's records and map id are gone: the frame waits for that mapping.
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)", scopeWithMapId("", "", "aaaa111")),
            "\tat a.a(SourceFile:1)  (not restored: missing_symbols pg_map_id aaaa111)\n");
  size_t keys = 0;
  std::unique_ptr<rocksdb::Iterator> it(
      harness.store().db().NewIterator(rocksdb::ReadOptions(), harness.store().family(proguard::kProguardFamily)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++keys;
  EXPECT_EQ(keys, 4u);  // build pointer, map id pointer, map info, one class
}

TEST(ProguardStore, MapIdFromEventOrFramePicksTheMapping) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(kMapA, "shop", "1"));
  ASSERT_TRUE(harness.ingest(kMapB, "shop", "2"));
  // The event names build 1 but pg_map_id bbbb222: the map id wins.
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)", scopeWithMapId("shop", "1", "bbbb222")),
            "\tat org.app.Beta.run(Beta.java:20)\n");
  // No app/build at all, only the map id (or the hash).
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)", scopeWithMapId("", "", "aaaa111")),
            "\tat org.app.Alpha.run(Alpha.java:10)\n");
  EXPECT_EQ(harness.retrace("\tat a.a(SourceFile:1)", scopeWithMapId("", "", "aaaa111ffff")),
            "\tat org.app.Alpha.run(Alpha.java:10)\n");
  // A frame's source file carries the map id (R8 --source-file-template r8-map-id-%MAP_ID).
  EXPECT_EQ(harness.retrace("\tat a.a(r8-map-id-bbbb222:1)", {"shop", "1", "android", {}}),
            "\tat org.app.Beta.run(Beta.java:20)\n");
  // An unknown map id is missing symbols named by that id, with a note on the mismatch.
  auto results = harness.retraceResults("\tat a.a(SourceFile:1)", scopeWithMapId("shop", "1", "cccc333"));
  ASSERT_TRUE(results);
  EXPECT_EQ((*results)[0].lookup.status, FrameStatus::kMissingSymbols);
  EXPECT_EQ((*results)[0].lookup.missing_id, "cccc333");
  EXPECT_EQ((*results)[0].lookup.missing_id_kind, MissingIdKind::kMapId);
  EXPECT_NE((*results)[0].lookup.note.find("aaaa111"), std::string::npos);
  auto frame_results = harness.retraceResults("\tat a.a(r8-map-id-dddd444:1)", {"shop", "1", "android", {}});
  ASSERT_TRUE(frame_results);
  EXPECT_EQ((*frame_results)[0].lookup.missing_id, "dddd444");
  EXPECT_EQ((*frame_results)[0].lookup.reason, FrameReason::kMissingSymbols);
  EXPECT_EQ((*frame_results)[0].lookup.missing_id_kind, MissingIdKind::kMapId);
}

// A mapped class whose method at that line the mapping lacks: the class is restored, the method
// kept as printed, and the frame says so.
TEST(ProguardStore, AMethodTheMappingLacksIsPartlyRestored) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(lines({"org.app.Gamma -> g:", "    3:3:void run():30 -> a"})));
  auto results = harness.retraceResults("\tat g.q(SourceFile:3)");
  ASSERT_TRUE(results);
  const FrameLookup& lookup = (*results)[0].lookup;
  EXPECT_EQ(lookup.status, FrameStatus::kSymbolicated);
  ASSERT_EQ(lookup.frames.size(), 1u);
  EXPECT_EQ(lookup.frames[0].function, "org.app.Gamma.q");
  EXPECT_EQ(lookup.reason, FrameReason::kMethodNotMapped);
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
  EXPECT_EQ(inlined.reason, FrameReason::kNone);
  const FrameLookup& ambiguous = (*results)[2].lookup;
  ASSERT_EQ(ambiguous.alternatives.size(), 1u);
  EXPECT_EQ(ambiguous.frames[0].function, "org.app.Gamma.x");
  EXPECT_EQ(ambiguous.alternatives[0][0].function, "org.app.Gamma.y");
  EXPECT_EQ(ambiguous.reason, FrameReason::kAmbiguous);
  EXPECT_EQ(ambiguous.status, FrameStatus::kSymbolicated);
  // A class the mapping does not have was not obfuscated: as printed, and fully restored.
  EXPECT_EQ((*results)[3].lookup.note, "not in mapping");
  EXPECT_EQ((*results)[3].lookup.reason, FrameReason::kNone);
  auto exception_type = harness.resolver().deobfuscateClass({"app", "1", "android", {}}, "g");
  ASSERT_TRUE(exception_type);
  EXPECT_EQ(**exception_type, "org.app.Gamma");
}

// ProGuard's class merging writes one block per merged class, all under the surviving class's
// obfuscated name. Every block is kept (not only the last one), frames restore to the class
// that declared the method, and an exception line picks the class its frames point to.
TEST(ProguardStore, ClassesMergedUnderOneNameAreAllKeptAndExceptionsChooseByFrames) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(
      lines({"com.example.io.ParseError -> a.a:", "    1:1:void <init>(java.lang.String):4:4 -> <init>",
             "com.example.io.Reader -> a.c:", "    1:2:void read():20:21 -> a",  // between the merged blocks
             "com.example.net.HttpError -> a.a:", "    1:1:void <init>(java.lang.String):7:7 -> <init>",
             "    5:6:com.example.net.HttpError fromStatus(int):30:31 -> a",  //
             "com.example.net.Client -> a.b:", "    1:3:void send(int):10:12 -> a"})));
  auto results = harness.retraceResults(lines({"a.a: bad input", "\tat a.c.a(SourceFile:2)",  // 0-1: thrown in io
                                               "Caused by: a.a: 500", "\tat a.a.a(SourceFile:5)",
                                               "\tat a.b.a(SourceFile:2)",  // 2-4: HttpError's own code
                                               "a.a: unknown", "\tat x.y.Z.run(Z.java:3)"}));  // 5-6: nothing tells
  ASSERT_TRUE(results);
  ASSERT_EQ(results->size(), 7u);
  EXPECT_EQ((*results)[0].exception_class, "com.example.io.ParseError");
  EXPECT_TRUE((*results)[0].exception_class_alternatives.empty());
  EXPECT_EQ((*results)[2].exception_class, "com.example.net.HttpError");
  EXPECT_TRUE((*results)[2].exception_class_alternatives.empty());
  ASSERT_EQ((*results)[3].lookup.frames.size(), 1u);
  EXPECT_EQ((*results)[3].lookup.frames[0].function, "com.example.net.HttpError.fromStatus");
  EXPECT_EQ((*results)[3].lookup.frames[0].file, "HttpError.java");
  EXPECT_EQ((*results)[3].lookup.frames[0].line, 30u);
  EXPECT_EQ((*results)[5].exception_class, "com.example.io.ParseError");
  EXPECT_EQ((*results)[5].exception_class_alternatives, std::vector<std::string>{"com.example.net.HttpError"});
  EXPECT_EQ(harness.retrace(lines({"a.a: 500", "\tat a.a.a(SourceFile:6)"})),
            lines({"com.example.net.HttpError: 500", "\tat com.example.net.HttpError.fromStatus(HttpError.java:31)"}));
  // The merged record round-trips, and a class without merged names keeps the v2 layout.
  proguard::ClassMapping plain;
  plain.original_name = "p.Plain";
  plain.obfuscated_name = "b";
  EXPECT_EQ(proguard::encodeClassRecord(plain)[0], static_cast<char>(proguard::kClassRecordVersion));
  plain.merged_names = {"p.Other", "p.Third"};
  auto decoded = proguard::decodeClassRecord(proguard::encodeClassRecord(plain));
  ASSERT_TRUE(decoded) << decoded.error().describe();
  ASSERT_EQ(decoded->merged_names.size(), 2u);
  EXPECT_EQ(decoded->merged_names[1], "p.Third");
  proguard::ClassRecord moved = std::move(*decoded);
  EXPECT_EQ(moved.merged_names[0], "p.Other");
}

// "... N more" counts the elided frames of the obfuscated run; restored, those frames may print
// more lines (an inline chain) or none (a dropped lambda proxy), and the count follows.
TEST(ProguardStore, MoreLinesCountTheRestoredFrames) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(
      lines({"org.app.Main -> a:", "    1:1:void inner():5:5 -> a", "    1:1:void outer():9 -> a",
             "    3:3:void main():20:20 -> b", "org.app.Main$$ExternalSyntheticLambda0 -> c:",
             "# {\"fileName\":\"D8$$SyntheticClass\",\"id\":\"sourceFile\"}", "    void run() -> run"})));
  EXPECT_EQ(
      harness.retrace(lines({"java.lang.IllegalStateException: top", "\tat a.b(SourceFile:3)", "\tat c.run(SourceFile)",
                             "\tat a.a(SourceFile:1)", "Caused by: java.lang.RuntimeException: cause",
                             "\tat a.b(SourceFile:3)", "\t... 1 more"})),
      lines({"java.lang.IllegalStateException: top", "\tat org.app.Main.main(Main.java:20)",
             "\tat org.app.Main.inner(Main.java:5)", "\tat org.app.Main.outer(Main.java:9)",
             "Caused by: java.lang.RuntimeException: cause", "\tat org.app.Main.main(Main.java:20)", "\t... 2 more"}));
  auto results = harness.retraceResults(
      lines({"java.lang.IllegalStateException: top", "\tat a.b(SourceFile:3)", "\tat c.run(SourceFile)",
             "Caused by: java.lang.RuntimeException: x", "\tat a.b(SourceFile:3)", "\t... 1 more"}));
  ASSERT_TRUE(results);
  EXPECT_EQ((*results)[5].more_count, std::optional<uint32_t>(0));  // only the dropped proxy was elided
  EXPECT_FALSE((*results)[4].more_count.has_value());
  EXPECT_EQ(harness.retrace(lines({"java.lang.Error", "\tat a.b(SourceFile:3)", "\tat c.run(SourceFile)",
                                   "Caused by: java.lang.Error", "\tat a.b(SourceFile:3)", "\t... 1 more"})),
            lines({"java.lang.Error", "\tat org.app.Main.main(Main.java:20)", "Caused by: java.lang.Error",
                   "\tat org.app.Main.main(Main.java:20)"}));
}

// ProGuard writes a class's bridge methods one after the other with the same lines and no
// original range (from Jackson's MapDeserializer): two methods, not an inline chain of two frames.
// ProGuard 6 merged Jackson's InvalidFormatException into MismatchedInputException and listed no
// block for it, only its constructor and factory among the target's methods (lines from that
// mapping): the header follows the factory frame below it.
TEST(ProguardStore, ClassMergedWithoutABlockOfItsOwnIsChosenByItsFrames) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(lines(
      {"com.fasterxml.jackson.databind.exc.MismatchedInputException -> com.fasterxml.jackson.databind.d.d:",
       "    47:48:void <init>(com.fasterxml.jackson.core.JsonParser,java.lang.String):47:48 -> <init>",
       "    1060:1062:void com.fasterxml.jackson.databind.exc.InvalidFormatException.<init>(com.fasterxml.jackson.core."
       "JsonParser,java.lang.String,java.lang.Class):60:62 -> <init>",
       "    1067:1067:com.fasterxml.jackson.databind.exc.InvalidFormatException com.fasterxml.jackson.databind.exc."
       "InvalidFormatException.from(com.fasterxml.jackson.core.JsonParser,java.lang.String,java.lang.Object,java."
       "lang.Class):67:67 -> d",
       "    63:63:com.fasterxml.jackson.databind.exc.MismatchedInputException from(com.fasterxml.jackson.core."
       "JsonParser,java.lang.String):63:63 -> e"})));
  auto results = harness.retraceResults(lines(
      {"com.fasterxml.jackson.databind.d.d: bad",
       " at [Source: UNKNOWN; byte offset: #UNKNOWN]",  // the message goes on
       "\tat com.fasterxml.jackson.databind.d.d.d(SourceFile:1067)", "com.fasterxml.jackson.databind.d.d: worse",
       "\tat com.fasterxml.jackson.databind.d.d.e(SourceFile:63)", "com.fasterxml.jackson.databind.d.d: unknown"}));
  ASSERT_TRUE(results);
  EXPECT_EQ((*results)[0].exception_class, "com.fasterxml.jackson.databind.exc.InvalidFormatException");
  EXPECT_TRUE((*results)[0].exception_class_alternatives.empty());
  EXPECT_EQ((*results)[3].exception_class, "com.fasterxml.jackson.databind.exc.MismatchedInputException");
  EXPECT_TRUE((*results)[3].exception_class_alternatives.empty());
  EXPECT_EQ((*results)[5].exception_class, "com.fasterxml.jackson.databind.exc.MismatchedInputException");
  EXPECT_EQ((*results)[5].exception_class_alternatives,
            std::vector<std::string>{"com.fasterxml.jackson.databind.exc.InvalidFormatException"});
}

TEST(ProguardStore, RangesWithoutOriginalLinesAreNotInlineCallers) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(lines(
      {"org.app.MapDeser -> s:", "    32:32:java.lang.Object deserialize(org.app.P,org.app.C,java.lang.Object) -> d",
       "    32:32:java.lang.Object deserialize(org.app.P,org.app.C) -> d", "    5:5:void org.app.Util.log():7:7 -> e",
       "    5:5:void run():14 -> e"})));
  EXPECT_EQ(harness.retrace(lines({"\tat s.d(SourceFile:32)", "\tat s.e(SourceFile:5)"})),
            lines({"\tat org.app.MapDeser.deserialize(MapDeser.java:32)", "\tat org.app.Util.log(Util.java:7)",
                   "\tat org.app.MapDeser.run(MapDeser.java:14)"}));
}

TEST(ProguardStore, BadUploadsFailClearlyAndLeaveNothingBehind) {
  RetraceHarness harness;
  auto empty = harness.ingest("# just a comment\n");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message().find("no class mappings"), std::string::npos);
  auto broken = harness.ingest(lines({"a.A -> a:", "    1:1:void f():3:3 -> a", "b.B -> b", "    void g() -> a"}));
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find("mapping.txt: mapping line 3"), std::string::npos)
      << broken.error().message();
  std::unique_ptr<rocksdb::Iterator> it(
      harness.store().db().NewIterator(rocksdb::ReadOptions(), harness.store().family(proguard::kProguardFamily)));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
}

TEST(ProguardStore, ClassRecordRoundTripAndCorruptionIsAnError) {
  const std::string text =
      lines({"# {'id':'com.android.tools.r8.mapping','version':'2.2'}",
             "a.A -> q:", "# {'id':'sourceFile','fileName':'A.kt'}", "    1:2:int a.B.f(int,long):3:4 -> a",
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
  ASSERT_NE(method->ranges[2].callsite, nullptr);
  EXPECT_EQ(method->ranges[2].callsite->outline, "Lb;a()V");
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(proguard::decodeClassRecord(std::string_view(bytes).substr(0, cut))) << cut;
  }
  std::string newer = bytes;
  newer[0] = 9;
  auto refused = proguard::decodeClassRecord(newer);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kMalformedInput);
  EXPECT_NE(refused.error().message().find("format version 9"), std::string::npos) << refused.error().message();
}

TEST(ProguardStore, CorruptClassRecordLeavesItsFramesNotFoundWithWhy) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(lines(
      {"org.app.Alpha -> a.a:", "    1:1:void run():10 -> a", "org.app.Beta -> a.b:", "    1:1:void go():20 -> b"})));
  std::string key;
  std::unique_ptr<rocksdb::Iterator> it(
      harness.store().db().NewIterator(rocksdb::ReadOptions(), harness.store().family(proguard::kProguardFamily)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().ToStringView().ends_with(std::string_view("\0C\0a.a", 6))) key = it->key().ToString();
  }
  ASSERT_FALSE(key.empty());
  rocksdb::WriteBatch batch;
  batch.Put(harness.store().family(proguard::kProguardFamily), key, std::string("\x02\x40", 2));
  ASSERT_TRUE(harness.store().write(batch));
  auto results = harness.retraceResults("\tat a.a.a(SourceFile:1)\n\tat a.b.b(SourceFile:1)");
  ASSERT_TRUE(results) << results.error().describe();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].lookup.status, FrameStatus::kNotFound);
  EXPECT_NE((*results)[0].lookup.note.find("corrupt proguard class record L"), std::string::npos)
      << (*results)[0].lookup.note;
  EXPECT_NE((*results)[0].lookup.note.find("re-ingest the mapping"), std::string::npos);
  EXPECT_EQ((*results)[0].lookup.reason, FrameReason::kMalformedSymbols);
  // The other class of the mapping still restores.
  EXPECT_EQ((*results)[1].lookup.status, FrameStatus::kSymbolicated);
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

// A run looks each of its classes up once and keeps the records for the run
// (ProguardResolver::retrace, RunClasses, one table per thread reused run after run): runs
// retraced while the build's mapping is uploaded again and again each use one mapping for all
// their frames (a frame whose record went with the replaced upload stays as printed), and once
// the uploads stop every frame restores from the last one. The cache holds a few records only,
// so lookups keep going to the store.
TEST(ProguardStore, RunsRetracedWhileTheBuildIsReuploadedUseOneMappingEach) {
  RetraceHarness harness;
  auto mappingOf = [](const std::string& package, const std::string& method) {
    std::string mapping;
    for (int c = 0; c < 40; ++c) {
      mapping += package + ".C" + std::to_string(c) + " -> c" + std::to_string(c) + ":\n";
      mapping += "    1:9:void " + method + "():100:108 -> a\n";
    }
    return mapping;
  };
  const std::string first = mappingOf("org.first", "m");
  const std::string second = mappingOf("org.second", "n");
  ASSERT_TRUE(harness.ingest(first));
  // 40 frames over 10 classes: the run's own table answers most of them.
  std::string trace = "java.lang.IllegalStateException: boom\n";
  for (int i = 0; i < 40; ++i) trace += "\tat c" + std::to_string((i * 3) % 10) + ".a(SourceFile:3)\n";
  const auto lines = stack::parseStack(trace);
  ProguardResolverOptions options;
  options.cache_bytes = 16u << 10;
  ProguardResolver resolver(harness.store(), options);
  std::atomic<bool> done{false};
  std::atomic<int> runs{0}, mixed{0}, failed{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!done.load()) {
        auto results = resolver.retrace({"app", "1", "android", {}}, lines);
        if (!results) {
          ++failed;
          continue;
        }
        bool saw_first = false, saw_second = false;
        for (const JavaLineResult& result : *results) {
          if (result.lookup.frames.empty()) continue;
          const std::string_view function = result.lookup.frames[0].function;
          saw_first = saw_first || function.starts_with("org.first.");
          saw_second = saw_second || function.starts_with("org.second.");
        }
        if (saw_first && saw_second) ++mixed;
        ++runs;
      }
    });
  }
  int uploaded = 0;
  for (int upload = 0; upload < 20; ++upload) uploaded += harness.ingest(upload % 2 == 0 ? second : first) ? 1 : 0;
  const int runs_before_end = runs.load();
  while (runs.load() < runs_before_end + 6) std::this_thread::yield();  // some runs after the last upload too
  done = true;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(uploaded, 20);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(mixed.load(), 0);
  auto last = resolver.retrace({"app", "1", "android", {}}, lines);
  ASSERT_TRUE(last) << last.error().describe();
  for (size_t i = 1; i < lines.size(); ++i) {
    const int c = (static_cast<int>(i - 1) * 3) % 10;
    ASSERT_FALSE((*last)[i].lookup.frames.empty()) << lines[i].raw;
    EXPECT_EQ((*last)[i].lookup.frames[0].function, "org.first.C" + std::to_string(c) + ".m") << lines[i].raw;
  }
}

}  // namespace
}  // namespace restack::testing

namespace restack::testing {
namespace {

// The worked example at the top of symbolstore/proguard/proguard_records.h, byte for byte.
TEST(ProguardStore, ClassRecordMatchesTheDocumentedExample) {
  const std::string text = lines(
      {"com.example.Foo -> a.b:", "    1:1:void com.example.Util.log():7:7 -> c", "    1:1:void bar(int):14 -> c"});
  proguard::MappingReader reader(text);
  proguard::ClassMapping mapping;
  auto more = reader.next(mapping);
  ASSERT_TRUE(more && *more);
  std::string expected = std::string("\x02\x0F") + "com.example.Foo" + std::string("\x00\x00", 2) +
                         std::string("\x06\x00\x04", 3) + "void" + "\x10" + "com.example.Util" + "\x03" + "log" +
                         "\x03" + "bar" + "\x03" + "int" + "\x01\x01" + "c" + "\x02" +
                         std::string("\x03\x01\x01\x07\x07\x01\x02\x03\x00", 9) +
                         std::string("\x03\x01\x01\x0E\x0E\x01\x00\x04\x05", 9) + std::string("\x00", 1);
  EXPECT_EQ(proguard::encodeClassRecord(mapping), expected);
}

}  // namespace
}  // namespace restack::testing

namespace restack::testing {
namespace {

// Records written by the previous format (v1: no field section) are still read.
TEST(ProguardStore, ClassRecordVersion1IsStillRead) {
  const std::string text = lines({"com.example.Foo -> a.b:", "    int count -> x",
                                  "    1:1:void com.example.Util.log():7:7 -> c", "    1:1:void bar(int):14 -> c"});
  proguard::MappingReader reader(text);
  proguard::ClassMapping mapping;
  auto more = reader.next(mapping);
  ASSERT_TRUE(more && *more);
  std::string v2 = proguard::encodeClassRecord(mapping);
  auto current = proguard::decodeClassRecord(v2);
  ASSERT_TRUE(current) << current.error().describe();
  ASSERT_EQ(current->fields.size(), 1u);
  EXPECT_EQ(current->fields[0].obfuscated_name, "x");
  EXPECT_EQ(current->strings[current->fields[0].name], "count");
  EXPECT_EQ(current->strings[current->fields[0].type], "int");
  // The v1 bytes of the same class: version 1, the field's strings not in the table, no field
  // section (the documented example of the previous format).
  mapping.fields.clear();
  std::string v1 = proguard::encodeClassRecord(mapping);
  v1[0] = 1;
  ASSERT_EQ(v1.back(), '\0');  // the empty field section
  v1.pop_back();
  auto old = proguard::decodeClassRecord(v1);
  ASSERT_TRUE(old) << old.error().describe();
  EXPECT_TRUE(old->fields.empty());
  const proguard::MethodRecord* method = old->findMethod("c");
  ASSERT_NE(method, nullptr);
  EXPECT_EQ(method->chains.size(), 1u);
  EXPECT_EQ(old->holderOf(method->ranges[0]), "com.example.Util");
  EXPECT_EQ(old->findMethod("d"), nullptr);
}

// Many methods: every one is found through the decoded hash table, absent names are not.
TEST(ProguardStore, MethodTableFindsEveryMethod) {
  std::string text = "org.app.Big -> b:\n";
  for (int m = 0; m < 300; ++m) {
    text += "    " + std::to_string(m + 1) + ":" + std::to_string(m + 1) + ":void m" + std::to_string(m) +
            "():" + std::to_string(m + 100) + " -> n" + std::to_string(m) + "\n";
  }
  proguard::MappingReader reader(text);
  proguard::ClassMapping mapping;
  auto more = reader.next(mapping);
  ASSERT_TRUE(more && *more);
  std::string bytes = proguard::encodeClassRecord(mapping);
  auto record = proguard::decodeClassRecord(bytes);
  ASSERT_TRUE(record);
  for (int m = 0; m < 300; ++m) {
    const proguard::MethodRecord* method = record->findMethod("n" + std::to_string(m));
    ASSERT_NE(method, nullptr) << m;
    EXPECT_EQ(record->strings[method->ranges[0].name], "m" + std::to_string(m));
    EXPECT_EQ(record->findMethod("x" + std::to_string(m)), nullptr);
  }
}

// The CLOCK cache stays within its budget, keeps every entry it still has findable after
// evictions (backward-shift deletion), and prefers recently used entries.
TEST(ProguardStore, ClockCacheEvictsWithinBudget) {
  constexpr size_t kCapacity = 64u << 10;
  proguard::ClockCache<std::string> cache(kCapacity, 4);
  auto value = [](int i) { return std::make_shared<const std::string>("value" + std::to_string(i)); };
  const uint64_t space = 7;
  for (int i = 0; i < 5000; ++i) {
    std::string name = "c" + std::to_string(i);
    cache.put(space, name, cache.hashOf(space, name), value(i), 100);
    // Entry 0 is used all the time: it must survive.
    std::shared_ptr<const std::string> hot;
    if (i > 0) {
      ASSERT_TRUE(cache.get(space, "c0", cache.hashOf(space, "c0"), hot)) << i;
      EXPECT_EQ(*hot, "value0");
    }
    ASSERT_LE(cache.bytes(), kCapacity);
  }
  size_t present = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string name = "c" + std::to_string(i);
    std::shared_ptr<const std::string> got;
    if (cache.get(space, name, cache.hashOf(space, name), got)) {
      ++present;
      EXPECT_EQ(*got, "value" + std::to_string(i));
    }
    // Another space never sees this one's entries.
    EXPECT_FALSE(cache.get(space + 1, name, cache.hashOf(space + 1, name), got));
  }
  EXPECT_GT(present, 10u);
  EXPECT_LT(present, 5000u);
}

// Classes org.app.C<c> -> c<c>, each with methods m0..m9 -> a..j: minified lines m*10+1 ..
// m*10+9 map to original lines 100+m*10 ...
std::string tenMethodsPerClass(int classes) {
  std::string mapping;
  for (int c = 0; c < classes; ++c) {
    mapping += "org.app.C" + std::to_string(c) + " -> c" + std::to_string(c) + ":\n";
    for (int m = 0; m < 10; ++m) {
      mapping += "    " + std::to_string(m * 10 + 1) + ":" + std::to_string(m * 10 + 9) + ":void m" +
                 std::to_string(m) + "():" + std::to_string(100 + m * 10) + ":" + std::to_string(108 + m * 10) +
                 " -> " + std::string(1, static_cast<char>('a' + m)) + "\n";
    }
  }
  return mapping;
}

// A resolver whose class cache holds only a few records still answers right (records are
// evicted and read again while traces keep coming).
TEST(ProguardStore, TinyCacheStillRetracesCorrectly) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(tenMethodsPerClass(300)));
  ProguardResolverOptions options;
  options.cache_bytes = 48u << 10;
  ProguardResolver resolver(harness.store(), options);
  int wrong = 0;
  for (int i = 0; i < 3000; ++i) {
    int c = (i * 37) % 300, m = i % 10, offset = i % 9;
    auto lines = stack::parseStack("\tat c" + std::to_string(c) + "." + std::string(1, static_cast<char>('a' + m)) +
                                   "(SourceFile:" + std::to_string(m * 10 + 1 + offset) + ")");
    auto results = resolver.retrace({"app", "1", "android", {}}, lines);
    ASSERT_TRUE(results) << results.error().describe();
    const auto& frames = (*results)[0].lookup.frames;
    if (frames.size() != 1 || frames[0].function != "org.app.C" + std::to_string(c) + ".m" + std::to_string(m) ||
        frames[0].line != static_cast<uint32_t>(100 + m * 10 + offset)) {
      ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0);
}

// A run longer than the resolver's look-ahead window (frames of mapped and unmapped classes,
// repeats of one class, exception lines between) restores every frame as it does alone; a cache
// too small for the run evicts records the look-ahead still holds.
TEST(ProguardStore, LongRunRetracesLikeEachFrameAlone) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(tenMethodsPerClass(300)));
  std::string trace = "java.lang.IllegalStateException: c7\n";
  for (int i = 0; i < 300; ++i) {
    if (i % 97 == 50) trace += "Caused by: c" + std::to_string(i % 300) + ": boom\n";
    if (i % 11 == 3) trace += "\tat android.os.Handler.dispatchMessage(Handler.java:" + std::to_string(i) + ")\n";
    int c = (i * 37) % 300, m = i % 10;
    for (int repeat = 0; repeat < (i % 5 == 0 ? 2 : 1); ++repeat) {
      trace += "\tat c" + std::to_string(c) + "." + std::string(1, static_cast<char>('a' + m)) +
               "(SourceFile:" + std::to_string(m * 10 + 1 + (i + repeat) % 9) + ")\n";
    }
  }
  trace += "\t... 12 more\n";
  const auto lines = stack::parseStack(trace);
  ASSERT_GT(lines.size(), 300u);
  for (size_t cache_bytes : {size_t{48} << 10, size_t{64} << 20}) {
    ProguardResolverOptions options;
    options.cache_bytes = cache_bytes;
    ProguardResolver resolver(harness.store(), options);
    auto whole = resolver.retrace({"app", "1", "android", {}}, lines);
    ASSERT_TRUE(whole) << whole.error().describe();
    ASSERT_EQ(whole->size(), lines.size());
    size_t frames = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].kindName() != "java_frame") continue;
      ++frames;
      auto alone = resolver.retrace({"app", "1", "android", {}}, std::span(lines).subspan(i, 1));
      ASSERT_TRUE(alone) << alone.error().describe();
      const FrameLookup& expected = (*alone)[0].lookup;
      const FrameLookup& got = (*whole)[i].lookup;
      ASSERT_EQ(got.frames.size(), expected.frames.size()) << lines[i].raw;
      ASSERT_FALSE(got.frames.empty()) << lines[i].raw;
      for (size_t f = 0; f < got.frames.size(); ++f) {
        EXPECT_EQ(got.frames[f].function, expected.frames[f].function) << lines[i].raw;
        EXPECT_EQ(got.frames[f].file, expected.frames[f].file) << lines[i].raw;
        EXPECT_EQ(got.frames[f].line, expected.frames[f].line) << lines[i].raw;
      }
      EXPECT_EQ(got.note, expected.note) << lines[i].raw;
    }
    EXPECT_GT(frames, 300u);
    // Spot checks against the mapping itself, not only against the single-frame path.
    EXPECT_EQ((*whole)[0].exception_class, "java.lang.IllegalStateException");
    EXPECT_EQ((*whole)[1].lookup.frames[0].function, "org.app.C0.m0");
    EXPECT_EQ((*whole)[1].lookup.frames[0].line, 100u);
    EXPECT_EQ((*whole)[1].lookup.frames[0].file, "C0.java");
  }
}

// The event's exception.message goes through the same restoration as exception lines.
TEST(ProguardStore, DeobfuscateMessageForTheEventField) {
  RetraceHarness harness;
  ASSERT_TRUE(harness.ingest(lines({"org.shop.Cart -> q.a:", "org.shop.Basket -> q.c:"})));
  auto restored = harness.resolver().deobfuscateMessage({"app", "1", "android", {}}, "q.a cannot be cast to q.c");
  ASSERT_TRUE(restored);
  ASSERT_TRUE(restored->has_value());
  EXPECT_EQ(**restored, "org.shop.Cart cannot be cast to org.shop.Basket");
  auto unchanged = harness.resolver().deobfuscateMessage({"app", "1", "android", {}}, "boom");
  ASSERT_TRUE(unchanged);
  EXPECT_FALSE(unchanged->has_value());
  auto no_mapping = harness.resolver().deobfuscateMessage({"app", "2", "android", {}}, "q.a cannot be cast to q.c");
  ASSERT_TRUE(no_mapping);
  EXPECT_FALSE(no_mapping->has_value());
}

}  // namespace
}  // namespace restack::testing
