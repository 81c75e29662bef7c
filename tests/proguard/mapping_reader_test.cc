// The streaming mapping reader: header, metadata scoping by map version, warnings, and clear
// errors on malformed input.
#include <gtest/gtest.h>

#include "formats/proguard/lenient_json.h"
#include "formats/proguard/mapping_reader.h"

namespace restack::proguard {
namespace {

std::vector<ClassMapping> readAll(std::string_view text, MappingReader& reader) {
  std::vector<ClassMapping> classes;
  ClassMapping mapping;
  while (true) {
    auto more = reader.next(mapping);
    EXPECT_TRUE(more) << more.error().describe();
    if (!more || !*more) break;
    classes.push_back(mapping);
  }
  return classes;
}

TEST(MappingReader, ReadsHeaderClassesFieldsAndMethods) {
  const std::string text =
      "# compiler: R8\n# compiler_version: 8.2.42\n# min_api: 24\n# pg_map_id: 5b4f2a1\n"
      "# pg_map_hash: SHA-256 5b4f2a1e0d\n"
      "# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}\n"
      "com.example.Foo -> a.b:\r\n"
      "# {\"id\":\"sourceFile\",\"fileName\":\"Foo.kt\"}\n"
      "    int count -> a\n"
      "    1:4:void bar(int, java.lang.String):10:13 -> c\n"
      "    5:5:void com.example.Util.log():7 -> c\n"
      "    void baz() -> d\n"
      "\n"
      "com.example.Bar -> a.c:\n";
  MappingReader reader(text);
  auto classes = readAll(text, reader);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(reader.header().compiler, "R8");
  EXPECT_EQ(reader.header().pg_map_id, "5b4f2a1");
  EXPECT_EQ(reader.header().pg_map_hash, "SHA-256 5b4f2a1e0d");
  EXPECT_EQ(reader.header().map_version, "2.2");
  const ClassMapping& foo = classes[0];
  EXPECT_EQ(foo.original_name, "com.example.Foo");
  EXPECT_EQ(foo.obfuscated_name, "a.b");
  EXPECT_EQ(foo.source_file, "Foo.kt");
  ASSERT_EQ(foo.fields.size(), 1u);
  EXPECT_EQ(foo.fields[0].name, "count");
  ASSERT_EQ(foo.methods.size(), 3u);
  EXPECT_EQ(foo.methods[0].minified, (LineRange{1, 4}));
  EXPECT_EQ(foo.methods[0].original, (LineRange{10, 13}));
  EXPECT_EQ(foo.methods[0].signature.params, "int,java.lang.String");
  EXPECT_EQ(foo.methods[1].signature.holder, "com.example.Util");
  EXPECT_EQ(foo.methods[1].original, (LineRange{7, 7}));
  EXPECT_FALSE(foo.methods[2].minified.has_value());
  EXPECT_FALSE(foo.methods[2].original.has_value());
  EXPECT_EQ(classes[1].line_number, 14u);
  EXPECT_TRUE(reader.warnings().empty());
}

TEST(MappingReader, MetadataIsScopedByMapVersion) {
  const std::string text =
      "a.A -> a:\n"
      "    void f() -> a\n"
      "# {'id':'com.android.tools.r8.synthesized'}\n"  // version 0: ignored
      "# { id: 'com.android.tools.r8.mapping', version: '1.0' }\n"
      "b.B -> b:\n"
      "    void g() -> a\n"
      "# {'id':'com.android.tools.r8.synthesized'}\n"
      "    void h() -> b\n"
      "# {'id':'com.android.tools.r8.outline'}\n"  // needs 2.0: ignored
      "# {'id':'com.android.tools.r8.mapping','version':'2.0'}\n"
      "c.C -> c:\n"
      "    void i() -> a\n"
      "# {'id':'com.android.tools.r8.outline'}\n"
      "    1:1:int j():3:3 -> b\n"
      "# {'id':'com.android.tools.r8.outlineCallsite','positions':{'1':4,'2':'5'},'outline':'La;a()I'}\n";
  MappingReader reader(text);
  auto classes = readAll(text, reader);
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_FALSE(classes[0].methods[0].synthesized);
  EXPECT_TRUE(classes[1].methods[0].synthesized);
  EXPECT_FALSE(classes[1].methods[1].outline);
  EXPECT_TRUE(classes[2].methods[0].outline);
  ASSERT_TRUE(classes[2].methods[1].outline_callsite.has_value());
  EXPECT_EQ(classes[2].methods[1].outline_callsite->positions.size(), 2u);
  EXPECT_EQ(classes[2].methods[1].outline_callsite->outline, "");  // the key is 2.2
  EXPECT_EQ(reader.warnings().size(), 2u);                         // synthesized before 1.0, outline before 2.0
}

TEST(MappingReader, WarnsOnUnknownIdsAndNewerVersionsButKeepsReading) {
  const std::string text =
      "# {'id':'com.android.tools.r8.mapping','version':'9.1'}\n"
      "a.A -> a:\n"
      "# {'id':'com.example.future'}\n"
      "# {'id':'com.example.future'}\n"
      "    1:1:void f():3:3 -> a\n"
      "# {not json at all\n";
  MappingReader reader(text);
  auto classes = readAll(text, reader);
  ASSERT_EQ(classes.size(), 1u);
  ASSERT_EQ(reader.warnings().size(), 2u);
  EXPECT_NE(reader.warnings()[0].find("9.1"), std::string::npos);
  EXPECT_NE(reader.warnings()[1].find("com.example.future"), std::string::npos);
}

TEST(MappingReader, RewriteFrameRules) {
  const std::string text =
      "# {'id':'com.android.tools.r8.mapping','version':'2.0'}\n"
      "a.A -> a:\n"
      "    1:1:void f():3:3 -> a\n"
      "    # {'id':'com.android.tools.r8.rewriteFrame','conditions':['throws(Ljava/lang/NullPointerException;)'],"
      "'actions':['removeInnerFrames(2)']}\n"
      "    # "
      "{'id':'com.android.tools.r8.rewriteFrame','conditions':['catches(X)'],'actions':['removeInnerFrames(1)']}\n";
  MappingReader reader(text);
  auto classes = readAll(text, reader);
  ASSERT_EQ(classes.size(), 1u);
  ASSERT_EQ(classes[0].methods[0].rewrite_rules.size(), 1u);
  EXPECT_EQ(classes[0].methods[0].rewrite_rules[0].throws_descriptors[0], "Ljava/lang/NullPointerException;");
  EXPECT_EQ(classes[0].methods[0].rewrite_rules[0].remove_inner_frames, 2u);
  EXPECT_EQ(reader.warnings().size(), 1u);
}

// ProGuard's "name$<hash of the original descriptor>" (the mapping of a real ProGuard 7 build of
// tests/proguard/java with every optimization on holds "castToCart$5d527804", the hex of
// "(Ljava/lang/Object;)I".hashCode()); javac's and Kotlin's own '$' names stay as they are.
TEST(MappingReader, RestoresProguardSpecializedMethodNames) {
  EXPECT_EQ(restoreSpecializedName("castToCart$5d527804"), "castToCart");
  EXPECT_EQ(restoreSpecializedName("run$1a2b3"), "run");
  EXPECT_EQ(restoreSpecializedName("run$ffffffff80000000"), "run");
  EXPECT_EQ(restoreSpecializedName("run$5d527804$3c1d0e2f"), "run");
  EXPECT_EQ(restoreSpecializedName("lambda$main$0$5d527804"), "lambda$main$0");
  for (const char* kept :
       {"run", "lambda$main$0", "lambda$main$12345", "access$000", "access$decade", "access$getFoo$p", "run$default",
        "run$1a2b", "run$0a2b3c4d", "run$123456789", "run$5D527804", "$5d527804"}) {
    EXPECT_EQ(restoreSpecializedName(kept), kept);
  }
  const std::string proguard =
      "org.restack.demo.Main -> org.restack.demo.Main:\n"
      "    3040:3040:int castToStage$5d527804(org.restack.demo.Cart):40:40 -> c\n"
      "    34:34:void lambda$messageScenarios$6() -> c\n";
  MappingReader reader(proguard);
  auto classes = readAll(proguard, reader);
  ASSERT_EQ(classes.size(), 1u);
  ASSERT_EQ(classes[0].methods.size(), 2u);
  EXPECT_EQ(classes[0].methods[0].signature.name, "castToStage");
  EXPECT_EQ(classes[0].methods[1].signature.name, "lambda$messageScenarios$6");
  // R8 keeps source names in its mappings: a '$' name there is the method's real name.
  const std::string r8 = "# compiler: R8\n" + proguard;
  MappingReader r8_reader(r8);
  auto r8_classes = readAll(r8, r8_reader);
  ASSERT_EQ(r8_classes.size(), 1u);
  EXPECT_EQ(r8_classes[0].methods[0].signature.name, "castToStage$5d527804");
  MappingReaderOptions keep;
  keep.restore_specialized_names = false;
  MappingReader kept_reader(proguard, keep);
  auto kept_classes = readAll(proguard, kept_reader);
  ASSERT_EQ(kept_classes.size(), 1u);
  EXPECT_EQ(kept_classes[0].methods[0].signature.name, "castToStage$5d527804");
}

// Lambda classes of desugarers are hidden frames' classes: marked synthesized in mappings other
// than R8's (which marks its own, and whose unmarked ones the R8 specification prints).
TEST(MappingReader, DesugaredLambdaClassesAreSynthesized) {
  EXPECT_TRUE(isDesugaredLambdaClass("org.app.Main$$ExternalSyntheticLambda2", ""));
  EXPECT_TRUE(isDesugaredLambdaClass("org.app.-$$Lambda$Main$3xYz", ""));
  EXPECT_TRUE(isDesugaredLambdaClass("org.app.Main$$Lambda$0", ""));
  EXPECT_TRUE(isDesugaredLambdaClass("org.app.Whatever", "D8$$SyntheticClass"));
  EXPECT_FALSE(isDesugaredLambdaClass("org.app.Main$1", "Main.java"));
  EXPECT_FALSE(isDesugaredLambdaClass("org.app.LambdaRunner", ""));
  const std::string proguard =
      "org.restack.demo.Main$$ExternalSyntheticLambda2 -> org.restack.demo.d:\n"
      "# {\"fileName\":\"D8$$SyntheticClass\",\"id\":\"sourceFile\"}\n"
      "    void run() -> run\n"
      "org.restack.demo.Main -> org.restack.demo.Main:\n";
  MappingReader reader(proguard);
  auto classes = readAll(proguard, reader);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_TRUE(classes[0].synthesized);
  EXPECT_FALSE(classes[1].synthesized);
  // R8 marks the synthetics it makes; one whose source file D8 named was made by D8 before R8
  // ran, which R8 leaves unmarked. A lambda class of R8's own without a marker stays as R8
  // treats it (its markers count only from map version 1.0).
  const std::string r8 = "# compiler: R8\n" + proguard +
                         "org.restack.demo.Cart$$ExternalSyntheticLambda0 -> org.restack.demo.e:\n"
                         "# {\"fileName\":\"Cart.java\",\"id\":\"sourceFile\"}\n"
                         "    void run() -> run\n";
  MappingReader r8_reader(r8);
  auto r8_classes = readAll(r8, r8_reader);
  ASSERT_EQ(r8_classes.size(), 3u);
  EXPECT_TRUE(r8_classes[0].synthesized);
  EXPECT_FALSE(r8_classes[1].synthesized);
  EXPECT_FALSE(r8_classes[2].synthesized);
}

// D8's forwarders to a private lambda body ("$r8$lambda$<hash>", every Kotlin lambda after D8)
// are synthesized whoever wrote the mapping.
TEST(MappingReader, DesugaredLambdaForwardersAreSynthesized) {
  EXPECT_TRUE(isDesugaredLambdaForwarder("$r8$lambda$3I5YQ6VVlv5xpTP89Uzz0MrgrfI"));
  EXPECT_FALSE(isDesugaredLambdaForwarder("scenarios$lambda$0"));
  EXPECT_FALSE(isDesugaredLambdaForwarder("lambda$main$0"));
  for (const std::string compiler : {"", "# compiler: R8\n"}) {
    const std::string text = compiler +
                             "org.app.MainKt -> a:\n"
                             "    1:1:void $r8$lambda$3I5YQ6VVlv5xpTP89Uzz0MrgrfI():0:0 -> b\n"
                             "    2:2:void scenarios$lambda$0():27:27 -> c\n";
    MappingReader reader(text);
    auto classes = readAll(text, reader);
    ASSERT_EQ(classes.size(), 1u);
    ASSERT_EQ(classes[0].methods.size(), 2u);
    EXPECT_TRUE(classes[0].methods[0].synthesized) << compiler;
    EXPECT_FALSE(classes[0].methods[1].synthesized) << compiler;
  }
}

// Lines of R8 8.5.35's and 9.5.28's mappings of tests/proguard/kotlin (accuracy_corpus_test.cc):
// each chain's first line is a frame R8 took from the Kotlin class's own line map, at the line of
// the frame below it; the original run never printed it.
// The methods listed before the first dropped frame keep their names and ranges: a mapping of
// R8 9.5.28 for a Kotlin `main` whose lambda R8 inlined, where `MainKt.a(SourceFile:42)` is
// `main(Main.kt:21)` (R8's retrace says the same).
TEST(MappingReader, MethodsBeforeADroppedLineMapFrameKeepTheirNames) {
  const std::string r8 =
      "# compiler: R8\n# compiler_version: 9.5.28\n# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}\n"
      "probe.kt.MainKt -> probe.kt.MainKt:\n"
      "# {\"id\":\"sourceFile\",\"fileName\":\"Main.kt\"}\n"
      "    40:45:void main():19:24 -> a\n"
      "    46:46:void main():11:11 -> a\n"  // added by the Kotlin line map: dropped
      "    46:46:int main$lambda$6$0(int):11 -> a\n";
  MappingReader reader(r8);
  auto classes = readAll(r8, reader);
  ASSERT_EQ(classes.size(), 1u);
  ASSERT_EQ(classes[0].methods.size(), 2u);
  const MethodMapping& main = classes[0].methods[0];
  EXPECT_EQ(main.obfuscated_name, "a");
  EXPECT_EQ(main.signature.name, "main");
  EXPECT_EQ(main.signature.return_type, "void");
  ASSERT_TRUE(main.minified && main.original);
  EXPECT_EQ(main.minified->from, 40u);
  EXPECT_EQ(main.original->from, 19u);
  EXPECT_EQ(classes[0].methods[1].obfuscated_name, "a");
  EXPECT_EQ(classes[0].methods[1].signature.name, "main$lambda$6$0");
}

TEST(MappingReader, FramesR8AddsFromAKotlinClassLineMapAreDropped) {
  const std::string kotlin_class =
      "org.restack.kotlin.MainKt -> org.restack.kotlin.MainKt:\n"
      "# {\"id\":\"sourceFile\",\"fileName\":\"Main.kt\"}\n"
      "    1:1:void main():27:27 -> c\n"  // 9.5: added
      "    1:1:kotlin.Unit scenarios$lambda$0():27 -> c\n"
      "    11:11:kotlin.Unit scenarios$lambda$1():28:28 -> f\n"  // 8.5: added
      "    11:11:java.util.List org.restack.kotlin.Configs.tokenize(java.lang.String):28 -> f\n"
      "    11:11:kotlin.Unit scenarios$lambda$11():40 -> f\n"
      "    2:2:void org.restack.kotlin.Item.<init>(java.lang.String,long,int,int):5:5 -> D\n"  // inlined: kept
      "    2:2:kotlin.Unit scenarios$lambda$5():32 -> D\n"
      "    3:3:java.lang.Object invoke(java.lang.Throwable):371:371 -> e\n"  // a bridge: kept
      "    3:3:java.lang.Object invoke(java.lang.Object):371 -> e\n"
      "    4:4:void copy():0:0 -> g\n"  // no line: kept
      "    4:4:void copy$default():0 -> g\n"
      "    8:8:void copy():5:5 -> j\n"  // a default-arguments stub calling its function: kept
      "    8:8:void copy$default():5 -> j\n"
      "    9:9:int getCount():7:7 -> k\n"  // an accessor: kept
      "    9:9:int access$getCount$p():7 -> k\n"
      "    5:5:void main():30:30 -> h\n"  // a rewriteFrame rule counts it: kept
      "    5:5:kotlin.Unit scenarios$lambda$3():30 -> h\n"
      "      # {\"id\":\"com.android.tools.r8.rewriteFrame\",\"conditions\":"
      "[\"throws(Ljava/lang/NullPointerException;)\"],\"actions\":[\"removeInnerFrames(1)\"]}\n"
      "    6:6:void main():31:31 -> i\n"  // a range of its own, no chain: kept
      "    7:7:kotlin.Unit scenarios$lambda$4():31:31 -> i\n";
  auto names = [](const ClassMapping& mapping) {
    std::vector<std::string> out;
    for (const MethodMapping& method : mapping.methods)
      out.push_back(method.obfuscated_name + " " + method.signature.name);
    return out;
  };
  const std::string header =
      "# compiler: R8\n# compiler_version: 9.5.28\n# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}\n";
  const std::string r8 = header + kotlin_class;
  MappingReader reader(r8);
  auto classes = readAll(r8, reader);
  ASSERT_EQ(classes.size(), 1u);
  EXPECT_EQ(names(classes[0]),
            (std::vector<std::string>{"c scenarios$lambda$0", "f tokenize", "f scenarios$lambda$11", "D <init>",
                                      "D scenarios$lambda$5", "e invoke", "e invoke", "g copy", "g copy$default",
                                      "j copy", "j copy$default", "k getCount", "k access$getCount$p", "h main",
                                      "h scenarios$lambda$3", "i main", "i scenarios$lambda$4"}));
  // The caller's line is now the chain's innermost line.
  ASSERT_TRUE(classes[0].methods[0].original.has_value());
  EXPECT_EQ(classes[0].methods[0].original->from, 27u);
  // A Java class has no Kotlin line map, and the option turns the rule off.
  std::string java_class = kotlin_class;
  java_class.replace(java_class.find("Main.kt"), 7, "Main.java");
  const std::string java_text = header + java_class;
  MappingReader java_reader(java_text);
  auto java = readAll(java_text, java_reader);
  ASSERT_EQ(java.size(), 1u);
  EXPECT_EQ(java[0].methods.size(), 19u);
  MappingReaderOptions off;
  off.drop_kotlin_line_map_frames = false;
  MappingReader unchanged(r8, off);
  auto all = readAll(r8, unchanged);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].methods.size(), 19u);
}

// R8 8.0 and later record every class's source file: a class without one had none, and its
// frames read "Unknown Source" (mappings of R8 9.5.28 and 4.0.48, checked with a class compiled
// with and without javac's SourceFile attribute).
TEST(MappingReader, ClassesWithoutASourceFileEntryAreUnknownSourceInMappingsThatRecordEveryFile) {
  const std::string classes =
      "# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}\n"
      "kotlinx.coroutines.BuildersKt -> r.h:\n"
      "    1:1:java.lang.Object runBlockingK(kotlin.coroutines.CoroutineContext):1 -> a\n"
      "kotlinx.coroutines.BuildersKt__BuildersKt -> r.i:\n"
      "# {\"id\":\"sourceFile\",\"fileName\":\"Builders.kt\"}\n"
      "    1:1:java.lang.Object runBlocking(kotlin.coroutines.CoroutineContext):30:30 -> a\n";
  struct Case {
    std::string header;
    std::string facade_file;
  };
  for (const Case& c :
       {Case{"# compiler: R8\n# compiler_version: 9.5.28\n", "Unknown Source"},
        Case{"# compiler: R8\n# compiler_version: 8.0.40\n", "Unknown Source"},
        Case{"# compiler: R8\n# compiler_version: 4.0.48\n", ""}, Case{"# compiler: R8\n", ""}, Case{"", ""}}) {
    const std::string text = c.header + classes;
    MappingReader reader(text);
    auto read = readAll(text, reader);
    ASSERT_EQ(read.size(), 2u) << c.header;
    EXPECT_EQ(read[0].source_file, c.facade_file) << c.header;
    EXPECT_EQ(read[1].source_file, "Builders.kt") << c.header;
  }
  const std::string text = "# compiler: R8\n# compiler_version: 9.5.28\n" + classes;
  MappingReaderOptions off;
  off.unknown_source_without_file_entry = false;
  MappingReader reader(text, off);
  auto read = readAll(text, reader);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].source_file, "");
}

struct MalformedCase {
  const char* text;
  const char* message;
};

TEST(MappingReader, MalformedInputGivesLineNumberedErrors) {
  const MalformedCase cases[] = {
      {"    void f() -> a\n", "line 1: member line before any class line"},
      {"a.A -> a\n", "line 1: expected a class line"},
      {"a.A -> a:\n    1:x:void f() -> a\n", "line 2: bad minified line range"},
      {"a.A -> a:\n    9:1:void f() -> a\n", "line 2: bad minified line range"},
      {"a.A -> a:\n    void f(int -> a\n", "line 2: malformed method signature"},
      {"a.A -> a:\n    void f():7:3 -> a\n", "line 2: bad original line range"},
      {"a.A -> a:\n    1:1:void f():99999999999 -> a\n", "line 2: bad original line range"},
      {"a.A -> a:\n    void f() -> \n", "line 2: expected 'member -> obfuscatedName'"},
      {"a.A -> a:\n    int -> a\n", "line 2: expected 'type name'"},
  };
  for (const MalformedCase& c : cases) {
    MappingReader reader(c.text);
    ClassMapping mapping;
    Expected<bool> result = true;
    while (result && *result) result = reader.next(mapping);
    ASSERT_FALSE(result) << c.text;
    EXPECT_EQ(result.error().code(), ErrorCode::kMalformedInput);
    EXPECT_NE(result.error().message().find(c.message), std::string::npos)
        << result.error().message() << " (wanted " << c.message << ")";
  }
}

TEST(LenientJson, AcceptsR8sStrictAndRelaxedForms) {
  auto strict = parseLenientJson(R"({"id":"sourceFile","fileName":"A\"b\u00e9.kt"})");
  ASSERT_TRUE(strict);
  EXPECT_EQ(strict->stringMember("fileName"), "A\"b\xC3\xA9.kt");
  auto relaxed = parseLenientJson("{ id: 'x', positions: { '1': 4, 2: 5, }, list: [1, 'a', true, null] }");
  ASSERT_TRUE(relaxed);
  EXPECT_EQ(relaxed->stringMember("id"), "x");
  ASSERT_NE(relaxed->find("positions"), nullptr);
  EXPECT_EQ(relaxed->find("positions")->member_names.size(), 2u);
  EXPECT_EQ(relaxed->find("list")->items.size(), 4u);
  EXPECT_FALSE(parseLenientJson("{ id: 'x' "));
  EXPECT_FALSE(parseLenientJson("{ id: 'x' } trailing"));
  EXPECT_FALSE(parseLenientJson(std::string(200, '[')));  // nesting bound
}

}  // namespace
}  // namespace restack::proguard
