// The behaviours of R8's retrace specification (doc/retrace.md) and of its reference stack-trace
// tests, on inputs written for Restack: each test is a mapping, an obfuscated trace and the
// trace R8's retrace prints for them.
#include "tests/proguard/retrace_harness.h"

namespace restack::testing {
namespace {

struct SpecCase {
  const char* name;
  std::string mapping;
  std::string trace;
  std::string expected;
};

class RetraceSpecTest : public ::testing::TestWithParam<SpecCase> {};

TEST_P(RetraceSpecTest, RestoresLikeR8) {
  const SpecCase& spec = GetParam();
  RetraceHarness harness;
  auto report = harness.ingest(spec.mapping);
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_EQ(harness.retrace(spec.trace), spec.expected);
}

const SpecCase kCases[] = {
    {"plain_frames_and_unknown_class",
     lines({"org.shop.Cart -> q.a:", "    1:3:void add(org.shop.Item):20:22 -> a", "    4:4:int size():30:30 -> b"}),
     lines({"java.lang.IllegalStateException: full", "\tat q.a.a(SourceFile:2)", "\tat q.a.b(SourceFile:4)",
            "\tat android.os.Handler.dispatchMessage(Handler.java:106)"}),
     lines({"java.lang.IllegalStateException: full", "\tat org.shop.Cart.add(Cart.java:21)",
            "\tat org.shop.Cart.size(Cart.java:30)", "\tat android.os.Handler.dispatchMessage(Handler.java:106)"})},
    {"exception_classes_restored_with_causes_and_more",
     lines({"org.shop.CheckoutError -> q.b:", "org.shop.Pay -> q.c:", "    7:7:void charge():88:88 -> a"}),
     lines({"Exception in thread \"main\" q.b: declined", "\tat q.c.a(SourceFile:7)", "Caused by: q.b: inner",
            "\t... 3 more", "\tSuppressed: q.b", "\t\tat q.c.a(Unknown Source:7)"}),
     lines({"Exception in thread \"main\" org.shop.CheckoutError: declined", "\tat org.shop.Pay.charge(Pay.java:88)",
            "Caused by: org.shop.CheckoutError: inner", "\t... 3 more", "\tSuppressed: org.shop.CheckoutError",
            "\t\tat org.shop.Pay.charge(Pay.java:88)"})},
    {"inline_chain_expands_innermost_first",
     lines({"org.net.Client -> r.a:", "    5:5:void org.net.Codec.encode(byte[]):41:41 -> x",
            "    5:5:void org.net.Frame.write():12 -> x", "    5:5:void send(java.lang.String):77 -> x"}),
     lines({"java.lang.NullPointerException", "\tat r.a.x(SourceFile:5)"}),
     lines({"java.lang.NullPointerException", "\tat org.net.Codec.encode(Codec.java:41)",
            "\tat org.net.Frame.write(Frame.java:12)", "\tat org.net.Client.send(Client.java:77)"})},
    {"inner_class_and_kotlin_file_names_inferred",
     lines({"org.ui.ListView$Adapter -> s.a:", "    3:3:void bind():15:15 -> a", "org.ui.WidgetsKt -> s.b:",
            "    9:9:void draw():50:50 -> b", "org.ui.Screen -> s.c:", "    2:2:void show():8:8 -> c"}),
     lines({"\tat s.a.a(SourceFile:3)", "\tat s.b.b(SourceFile:9)", "\tat s.c.c(Screen.kt:2)"}),
     lines({"\tat org.ui.ListView$Adapter.bind(ListView.java:15)", "\tat org.ui.WidgetsKt.draw(Widgets.kt:50)",
            "\tat org.ui.Screen.show(Screen.kt:8)"})},
    {"source_file_metadata_also_for_frames_inlined_from_other_classes",
     lines({"org.io.Paths -> t.a:", "# {\"id\":\"sourceFile\",\"fileName\":\"PathUtils.kt\"}",
            "org.io.Reader -> t.b:", "# {'id':'sourceFile','fileName':'ReaderImpl.kt'}",
            "    1:1:void org.io.Paths.normalize():14:14 -> r", "    1:1:void read():60 -> r"}),
     lines({"  at t.b.r(Unknown Source:1)"}),
     lines({"  at org.io.Paths.normalize(PathUtils.kt:14)", "  at org.io.Reader.read(ReaderImpl.kt:60)"})},
    {"ambiguous_overloads_without_lines",
     lines({"org.db.Query -> u.a:", "    void run(int) -> a", "    void bind(int,long) -> a"}),
     lines({"java.lang.RuntimeException: x", "    at u.a.a(Unknown Source)", "    at u.a.a(Unknown Source:12)"}),
     lines({"java.lang.RuntimeException: x", "    at org.db.Query.bind(Query.java)",
            "    <OR> at org.db.Query.run(Query.java)", "    at org.db.Query.bind(Query.java:12)",
            "    <OR> at org.db.Query.run(Query.java:12)"})},
    {"ambiguous_original_range_split_per_line", lines({"org.db.Pool -> u.b:", "    void acquire(int):70:72 -> c"}),
     lines({"\tat u.b.c(Unknown Source:1)"}),
     lines({"\tat org.db.Pool.acquire(Pool.java:70)", "\t<OR> at org.db.Pool.acquire(Pool.java:71)",
            "\t<OR> at org.db.Pool.acquire(Pool.java:72)"})},
    {"ambiguous_inline_top_frame_then_shared_callers",
     lines({"org.db.Pool -> u.b:", "    3:3:void check(int):90:91 -> d", "    3:3:void lease():20 -> d",
            "    3:3:void take():5 -> d"}),
     lines({"\tat u.b.d(SourceFile:3)"}),
     lines({"\tat org.db.Pool.check(Pool.java:90)", "\t<OR> at org.db.Pool.check(Pool.java:91)",
            "\tat org.db.Pool.lease(Pool.java:20)", "\tat org.db.Pool.take(Pool.java:5)"})},
    {"overloads_with_different_inline_chains_at_one_position",
     lines({"org.db.Pool -> u.b:", "    6:6:void org.log.L.d(int):3:3 -> e", "    6:6:void put(int):33 -> e",
            "    7:9:void put(int):34:36 -> e", "    6:6:void org.log.L.w(int,int):8:8 -> e",
            "    6:6:void put(int,int):55 -> e"}),
     lines({"\tat u.b.e(SourceFile:6)"}),
     lines({"\tat org.log.L.d(L.java:3)", "\t<OR> at org.log.L.w(L.java:8)", "\tat org.db.Pool.put(Pool.java:33)",
            "\t<OR> at org.db.Pool.put(Pool.java:55)"})},
    {"position_outside_every_range",
     lines({"org.db.Pool -> u.b:", "    void drain():40:40 -> f", "    1:2:void fill():11:12 -> g"}),
     lines({"\tat u.b.f(SourceFile:9)", "\tat u.b.g(SourceFile:7)", "\tat u.b.g(Unknown Source)"}),
     lines({"\tat org.db.Pool.drain(Pool.java:40)", "\tat org.db.Pool.g(Pool.java:7)",
            "\tat org.db.Pool.fill(Pool.java)"})},
    {"unknown_method_keeps_name_restores_class", lines({"org.db.Pool -> u.b:", "    1:1:void fill():11:11 -> g"}),
     lines({"\tat u.b.zz(SourceFile:4)"}), lines({"\tat org.db.Pool.zz(Pool.java:4)"})},
    {"line_zero_and_missing_lines",
     lines({"org.app.Boot -> v.a:", "    1:1:void start():10:10 -> a", "    2:2:void start():12:12 -> a",
            "    void stop():0:0 -> b", "    void halt():0 -> c", "    void wait(long):5:5 -> d"}),
     lines({"\tat v.a.a(SourceFile)", "\tat v.a.a(SourceFile:0)", "\tat v.a.a(SourceFile:2)",
            "\tat v.a.b(SourceFile:9)", "\tat v.a.c(SourceFile:9)", "\tat v.a.d(SourceFile:0)"}),
     lines({"\tat org.app.Boot.start(Boot.java)", "\tat org.app.Boot.start(Boot.java)",
            "\tat org.app.Boot.start(Boot.java:12)", "\tat org.app.Boot.stop(Boot.java)",
            "\tat org.app.Boot.halt(Boot.java)", "\tat org.app.Boot.wait(Boot.java:5)"})},
    {"catch_all_range",
     lines({"org.app.Boot -> v.a:", "    0:65535:void init():44:44 -> e", "    0:65535:void org.app.Env.load():9 -> f",
            "    0:65535:void config():3 -> f"}),
     lines({"\tat v.a.e(SourceFile)", "\tat v.a.e(SourceFile:123)", "\tat v.a.f(Unknown Source)"}),
     lines({"\tat org.app.Boot.init(Boot.java:44)", "\tat org.app.Boot.init(Boot.java:44)",
            "\tat org.app.Env.load(Env.java:9)", "\tat org.app.Boot.config(Boot.java:3)"})},
    {"range_without_original_is_identity_and_single_line_ranges",
     lines({"org.app.Main -> org.app.Main:", "    6:15:void main(java.lang.String[]) -> main",
            "    16:20:void loop():40:40 -> main", "    21:30:void tick():50 -> main"}),
     lines({"\tat org.app.Main.main(SourceFile:11)", "\tat org.app.Main.main(SourceFile:18)",
            "\tat org.app.Main.main(SourceFile:25)"}),
     lines({"\tat org.app.Main.main(Main.java:11)", "\tat org.app.Main.loop(Main.java:40)",
            "\tat org.app.Main.tick(Main.java:50)"})},
    {"inline_chain_without_line_numbers",
     lines({"org.app.Job -> w.a:", "    4:4:void step3():0:0 -> run", "    4:4:void step2():0 -> run",
            "    4:4:void run():0 -> run"}),
     lines({"\tat w.a.run(:4)"}),
     lines({"\tat org.app.Job.step3(Job.java)", "\tat org.app.Job.step2(Job.java)", "\tat org.app.Job.run(Job.java)"})},
    {"no_position_without_range_uses_method_signature",
     lines({"org.app.Job -> w.a:", "    1:1:void a1():0:0 -> go", "    1:1:void go():0 -> go",
            "    2:2:void a2():0:0 -> go", "    2:2:void go():0 -> go"}),
     lines({"\tat w.a.go(Unknown Source)"}), lines({"\tat org.app.Job.go(Job.java)"})},
    {"synthesized_method_frames_removed",
     lines({"# {'id':'com.android.tools.r8.mapping','version':'1.0'}",
            "org.app.Feed -> x.a:", "    8:8:void lambda$load$0():31 -> a", "    3:3:void load():25 -> b",
            "org.app.Feed$$ExternalSyntheticLambda0 -> x.b:", "    void run() -> a",
            "      # {'id':'com.android.tools.r8.synthesized'}",
            "org.app.Feed$$Lambda1 -> x.c:", "    2:2:void org.app.Feed.lambda$load$1():35 -> a",
            "    2:2:void run():0 -> a", "      # {'id':'com.android.tools.r8.synthesized'}"}),
     lines({"java.lang.NullPointerException", "  at x.a.a(SourceFile:8)", "  at x.b.a(Unknown Source)",
            "  at x.c.a(SourceFile:2)", "  at x.a.b(SourceFile:3)"}),
     lines({"java.lang.NullPointerException", "  at org.app.Feed.lambda$load$0(Feed.java:31)",
            "  at org.app.Feed.lambda$load$1(Feed.java:35)", "  at org.app.Feed.load(Feed.java:25)"})},
    {"synthesized_ignored_before_map_version_1",
     lines({"org.app.Feed$$ExternalSyntheticLambda0 -> x.b:", "    void run() -> a",
            "      # {'id':'com.android.tools.r8.synthesized'}"}),
     lines({"  at x.b.a(Unknown Source)"}), lines({"  at org.app.Feed$$ExternalSyntheticLambda0.run(Feed.java)"})},
    {"rewrite_frame_under_matching_exception_only",
     lines(
         {"# { id: 'com.android.tools.r8.mapping', version: '2.0' }",
          "org.app.Repo -> y.a:", "    4:4:void org.app.Dao.check():23:23 -> a", "    4:4:void get(org.app.Dao):7 -> a",
          "    # { id: 'com.android.tools.r8.rewriteFrame', conditions: ['throws(Ljava/lang/NullPointerException;)'], "
          "actions: ['removeInnerFrames(1)'] }"}),
     lines({"Exception in thread \"main\" java.lang.NullPointerException: boom", "\tat y.a.a(:4)", "\tat y.a.a(:4)",
            "java.lang.IllegalStateException", "\tat y.a.a(:4)"}),
     lines({"Exception in thread \"main\" java.lang.NullPointerException: boom", "\tat org.app.Repo.get(Repo.java:7)",
            "\tat org.app.Dao.check(Dao.java:23)", "\tat org.app.Repo.get(Repo.java:7)",
            "java.lang.IllegalStateException", "\tat org.app.Dao.check(Dao.java:23)",
            "\tat org.app.Repo.get(Repo.java:7)"})},
    {"rewrite_frame_on_middle_frame_of_chain",
     lines(
         {"# {'id':'com.android.tools.r8.mapping','version':'2.2'}",
          "org.app.Repo -> y.a:", "    1:5:void touch():90:90 -> b", "    1:5:void list():97 -> b",
          "      # {'id':'com.android.tools.r8.rewriteFrame','conditions':['throws(Ljava/lang/NullPointerException;)'],"
          "'actions':['removeInnerFrames(1)']}",
          "    1:5:void all():107 -> b"}),
     lines({"java.lang.NullPointerException", "\tat y.a.b(SourceFile:3)"}),
     lines({"java.lang.NullPointerException", "\tat org.app.Repo.list(Repo.java:97)",
            "\tat org.app.Repo.all(Repo.java:107)"})},
    {"outline_folded_into_call_site",
     lines({"# { id: 'com.android.tools.r8.mapping', version: '2.0' }", "org.outline.Shared -> z.a:",
            "    1:2:int outline() -> a", "# { 'id':'com.android.tools.r8.outline' }", "org.app.Form -> z.b:",
            "    1:1:void org.app.Util.log():42:42 -> s", "    4:4:int validate(int):98:98 -> s",
            "    5:5:int validate(int):100:100 -> s", "    27:27:int validate(int):0:0 -> s",
            "# { 'id':'com.android.tools.r8.outlineCallsite', 'positions': { '1': 4, '2': 5 } }"}),
     lines({"java.io.IOException: bad", "\tat z.a.a(:2)", "\tat z.b.s(:27)"}),
     lines({"java.io.IOException: bad", "\tat org.app.Form.validate(Form.java:100)"})},
    {"outline_with_inlined_call_site_and_outline_key",
     lines(
         {"# { id: 'com.android.tools.r8.mapping', version: '2.2' }",
          "org.outline.Shared -> z.a:", "    1:2:int some.Inner.compute():75:76 -> a", "    1:2:int outline():0 -> a",
          "# { 'id':'com.android.tools.r8.outline' }",
          "org.app.Form -> z.b:", "    5:5:int org.app.Rules.validate(int):98:98 -> s",
          "    5:5:int submit(int):24 -> s", "    27:27:int submit(int):0:0 -> s",
          "# { 'id':'com.android.tools.r8.outlineCallsite', 'positions': { '1': 4, '2': 5 }, 'outline':'Lz/a;a()I' }"}),
     lines({"java.io.IOException: bad", "\tat z.a.a(:2)", "\tat z.b.s(:27)"}),
     lines({"java.io.IOException: bad", "\tat some.Inner.compute(Inner.java:76)",
            "\tat org.app.Rules.validate(Rules.java:98)", "\tat org.app.Form.submit(Form.java:24)"})},
    {"outline_in_outline",
     lines({"# { id: 'com.android.tools.r8.mapping', version: '2.0' }",
            "org.outline.One -> o1:", "    4:4:int outline():0:0 -> a", "# { 'id':'com.android.tools.r8.outline' }",
            "org.outline.Two -> o2:", "    6:6:int outline():0:0 -> a",
            "# { 'id':'com.android.tools.r8.outlineCallsite', 'positions': { '4': 43 } }",
            "    42:43:int outline():0:0 -> a", "# { 'id':'com.android.tools.r8.outline' }",
            "org.app.Caller -> o3:", "    10:11:int call(int):98:98 -> a", "    28:28:int call(int):0:0 -> a",
            "# { 'id':'com.android.tools.r8.outlineCallsite', 'positions': { '42': 10, '43': 11 } }"}),
     lines({"java.io.IOException: bad", "\tat o1.a(:4)", "\tat o2.a(:6)", "\tat o3.a(:28)"}),
     lines({"java.io.IOException: bad", "\tat org.app.Caller.call(Caller.java:98)"})},
    {"unknown_metadata_and_residual_signature_do_not_change_results",
     lines({"# {'id':'com.android.tools.r8.mapping','version':'2.2'}",
            "org.app.A -> aa:", "# {'id':'com.example.unknown'}", "    org.app.A make(int) -> b",
            "    # { id: 'com.android.tools.r8.residualsignature', signature:'(Z)Laa;' }",
            "    2:2:void go():5:5 -> c"}),
     lines({"\tat aa.c(SourceFile:2)", "\tat aa.b(SourceFile)"}),
     lines({"\tat org.app.A.go(A.java:5)", "\tat org.app.A.make(A.java)"})},
    {"java9_module_and_class_loader_prefixes_kept",  // the behaviour of R8's NamedModuleStackTrace
     lines({"org.boot.Loader -> ld.a:", "org.app.Main -> m:", "    101:101:void main(java.lang.String[]):1:1 -> a",
            "    12:12:void foo():2:2 -> b", "    80:80:void bar():3:3 -> c", "    9:9:void qux():5:5 -> e"}),
     lines({"Boom: x", "\tat ld.a/named_module@9.0/m.a(:101)", "\tat ld.a//m.b(App.java:12)",
            "\tat named_module@2.1/m.c(Lib.java:80)", "\tat app//m.e(MyClass.java:9)",
            "\tat java.base@17/java.lang.Thread.run(Thread.java:833)"}),
     lines({"Boom: x", "\tat org.boot.Loader/named_module@9.0/org.app.Main.main(Main.java:1)",
            "\tat org.boot.Loader//org.app.Main.foo(Main.java:2)",
            "\tat named_module@2.1/org.app.Main.bar(Main.java:3)", "\tat app//org.app.Main.qux(Main.java:5)",
            "\tat java.base@17/java.lang.Thread.run(Thread.java:833)"})},
    {"synthesized_class_frames_removed_inlined_code_kept",
     lines({"# {'id':'com.android.tools.r8.mapping','version':'2.0'}",
            "org.app.Feed -> x.a:", "    3:3:void load():25 -> b",
            "org.app.Feed$$ExternalSyntheticLambda0 -> x.d:", "# {'id':'com.android.tools.r8.synthesized'}",
            "    1:1:void org.app.Feed.lambda$load$0():31:31 -> run", "    1:1:void run():0 -> run",
            "    2:2:void org.app.Feed.access$log():40:40 -> a", "    2:2:void moved():0 -> a"}),
     lines({"java.lang.NullPointerException", "  at x.d.run(SourceFile:1)", "  at x.d.a(SourceFile:2)",
            "  at x.d.unknown(SourceFile:7)", "  at x.a.b(SourceFile:3)"}),
     lines({"java.lang.NullPointerException", "  at org.app.Feed.lambda$load$0(Feed.java:31)",
            "  at org.app.Feed.access$log(Feed.java:40)", "  at org.app.Feed.load(Feed.java:25)"})},
    {"class_names_in_exception_messages",
     lines({"org.shop.Cart -> q.a:", "    org.shop.Item first -> a", "    org.shop.Item last -> b",
            "    int count -> c", "    1:1:org.shop.Item get(int):10:10 -> a",
            "    2:2:org.shop.Item get(int,boolean):11:11 -> b", "    3:3:void clear():12:12 -> b",
            "org.shop.Item -> q.b:", "    4:4:java.lang.String name():20:20 -> a",
            "org.shop.Basket -> q.c:", "org.shop.Mode -> q.d:", "org.shop.Outer$Kind -> org.shop.Outer$a:"}),
     lines({"java.lang.NullPointerException: Attempt to invoke virtual method 'java.lang.String q.b.a()' on a null "
            "object reference",
            "Caused by: java.lang.NullPointerException: Attempt to invoke interface method 'q.b q.a.a(int)' on a null "
            "object reference",
            "Caused by: java.lang.NullPointerException: Attempt to read from field 'q.b q.a.b' on a null object "
            "reference",
            "Caused by: java.lang.NullPointerException: Attempt to invoke virtual method 'void q.a.b()' on a null "
            "object reference",
            "Caused by: java.lang.NullPointerException: Cannot invoke \"q.b.a()\" because the return value of "
            "\"q.a.a(int)\" is null",
            "Caused by: java.lang.ClassCastException: q.a cannot be cast to q.c",
            "Caused by: java.lang.ClassCastException: class q.a cannot be cast to class q.c (q.a and q.c are in "
            "unnamed module of loader 'app')",
            "Caused by: java.lang.ClassCastException: [Lq.a; cannot be cast to q.c[]",
            "Caused by: java.lang.ArrayStoreException: q.a cannot be stored in an array of type q.c[]",
            "Caused by: java.lang.IllegalArgumentException: No enum constant q.d.FAST",
            "Caused by: java.lang.IllegalArgumentException: No enum constant org.shop.Outer.a.BIG",
            "Caused by: java.lang.IllegalArgumentException: No enum constant q.z.FAST",
            "Caused by: java.lang.IllegalStateException: q.a is not a class name here, nor is q.c"}),
     lines({"java.lang.NullPointerException: Attempt to invoke virtual method 'java.lang.String org.shop.Item.name()' "
            "on a null "
            "object reference",
            "Caused by: java.lang.NullPointerException: Attempt to invoke interface method 'org.shop.Item "
            "org.shop.Cart.get(int)' "
            "on a null object reference",
            "Caused by: java.lang.NullPointerException: Attempt to read from field 'org.shop.Item org.shop.Cart.last' "
            "on a null "
            "object reference",
            "Caused by: java.lang.NullPointerException: Attempt to invoke virtual method 'void org.shop.Cart.b()' on a "
            "null object "
            "reference",
            "Caused by: java.lang.NullPointerException: Cannot invoke \"org.shop.Item.name()\" because the return "
            "value of "
            "\"org.shop.Cart.get(int)\" is null",
            "Caused by: java.lang.ClassCastException: org.shop.Cart cannot be cast to org.shop.Basket",
            "Caused by: java.lang.ClassCastException: class org.shop.Cart cannot be cast to class org.shop.Basket "
            "(org.shop.Cart "
            "and org.shop.Basket are in unnamed module of loader 'app')",
            "Caused by: java.lang.ClassCastException: [Lorg.shop.Cart; cannot be cast to org.shop.Basket[]",
            "Caused by: java.lang.ArrayStoreException: org.shop.Cart cannot be stored in an array of type "
            "org.shop.Basket[]",
            "Caused by: java.lang.IllegalArgumentException: No enum constant org.shop.Mode.FAST",
            "Caused by: java.lang.IllegalArgumentException: No enum constant org.shop.Outer.Kind.BIG",
            "Caused by: java.lang.IllegalArgumentException: No enum constant q.z.FAST",
            "Caused by: java.lang.IllegalStateException: q.a is not a class name here, nor is q.c"})},
    // Not R8's: D8's interface desugaring (D8 before ProGuard, or a library desugared before R8)
    // moves a default method to "<interface>$-CC" as "$default$<name>" (the companion keeps the
    // interface's source file); the original ran the interface's method.
    {"desugared_interface_default_method_restored_to_the_interface",
     lines({"org.shop.Shape -> q.s:", "org.shop.Shape$-CC -> q.t:",
            "# {\"id\":\"sourceFile\",\"fileName\":\"Shapes.kt\"}",
            "    1:1:java.lang.String $default$describe(org.shop.Shape):12:12 -> a",
            "    2:2:int area(org.shop.Shape):20:20 -> b"}),
     lines({"java.lang.IllegalStateException: no sides", "\tat q.t.a(SourceFile:1)", "\tat q.t.b(SourceFile:2)"}),
     lines({"java.lang.IllegalStateException: no sides", "\tat org.shop.Shape.describe(Shapes.kt:12)",
            "\tat org.shop.Shape.area(Shapes.kt:20)"})},
    {"native_method_and_module_prefix", lines({"org.app.Jni -> ab:", "    void call() -> a"}),
     lines({"\tat ab.a(Native Method)"}), lines({"\tat org.app.Jni.call(Native Method)"})},
};

INSTANTIATE_TEST_SUITE_P(R8Spec, RetraceSpecTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace restack::testing
