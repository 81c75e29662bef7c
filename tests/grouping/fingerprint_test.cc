// Fingerprints on realistic restored stacks, written the way the restorers output them.
#include "grouping/fingerprint.h"

#include <gtest/gtest.h>

#include "tests/grouping/frames.h"

namespace restack::grouping {
namespace {

using testing::crash;
using testing::java;
using testing::js;
using testing::native;

const GroupingConfig kDefaults{};

bool hasRule(const Fingerprint& fp, const std::string& rule) {
  return std::find(fp.rules_applied.begin(), fp.rules_applied.end(), rule) != fp.rules_applied.end();
}

// The same NPE in two builds: javac 8 vs D8 desugaring, lambda and anonymous numbering shifted
// by unrelated code changes, a synthetic accessor present in one build only.
GroupingInput javaCartCrash(int build) {
  std::vector<GroupingFrame> frames = {
      java("java.util.Objects.requireNonNull"),
      java(build == 1 ? "com.shop.cart.CartPresenter.lambda$onLoad$0" : "com.shop.cart.CartPresenter.lambda$onLoad$3"),
      java(build == 1 ? "com.shop.cart.CartPresenter$$Lambda$12/0x0000000800c02a00.run"
                      : "com.shop.cart.CartPresenter$$ExternalSyntheticLambda2.run"),
      java("android.os.Handler.handleCallback"),
  };
  if (build == 1) frames.insert(frames.begin() + 2, java("com.shop.cart.CartPresenter.access$000"));
  frames.push_back(
      java(build == 1 ? "com.shop.cart.CartPresenter$1.onResult" : "com.shop.cart.CartPresenter$2.onResult"));
  frames.push_back(java("com.shop.net.Api.deliver"));
  frames.push_back(java("android.os.Looper.loop"));
  frames.push_back(java("android.app.ActivityThread.main"));
  return crash("android", "java.lang.NullPointerException",
               build == 1 ? "Attempt to invoke virtual method on a null object reference (id 1234)"
                          : "Attempt to invoke virtual method on a null object reference (id 99)",
               frames);
}

TEST(Fingerprint, JavaSameCrashAcrossBuilds) {
  Fingerprint one = computeFingerprint(javaCartCrash(1), kDefaults);
  Fingerprint two = computeFingerprint(javaCartCrash(2), kDefaults);
  EXPECT_EQ(one.hash, two.hash);
  EXPECT_EQ(one.hash.size(), 32u);
  EXPECT_EQ(one.algorithm, "v2");
  EXPECT_EQ(one.quality, Quality::kComplete);
  EXPECT_EQ(one.source, FingerprintSource::kInAppFrames);
  EXPECT_EQ(one.frames_used,
            (std::vector<std::string>{"com.shop.cart.CartPresenter.lambda$onLoad",
                                      "com.shop.cart.CartPresenter$_.onResult", "com.shop.net.Api.deliver"}));
  EXPECT_EQ(one.culprit, "com.shop.cart.CartPresenter.lambda$onLoad");
  EXPECT_EQ(one.title.rfind("java.lang.NullPointerException: Attempt to invoke", 0), 0u);
  EXPECT_TRUE(hasRule(one, "java:lambda-number"));
  EXPECT_TRUE(hasRule(one, "ignore: synthetic accessor"));
  EXPECT_TRUE(hasRule(one, "ignore: lambda trampoline"));
  // Decisions are recorded on every frame.
  const auto& decisions = one.thread_frames[0];
  ASSERT_EQ(decisions.size(), javaCartCrash(1).threads[0].frames.size());
  EXPECT_FALSE(decisions[0].in_app);
  EXPECT_EQ(decisions[0].in_app_reason, "java package java.");
  EXPECT_TRUE(decisions[1].in_app);
  EXPECT_TRUE(decisions[1].used);
  EXPECT_TRUE(decisions[2].ignored);
}

TEST(Fingerprint, DifferentCrashSitesAndTypesDiffer) {
  GroupingInput base = javaCartCrash(1);
  GroupingInput other_site = base;
  other_site.threads[0].frames[1] = java("com.shop.cart.CartPresenter.lambda$onSave$0");
  GroupingInput other_type = base;
  other_type.exception_type = "java.lang.IllegalStateException";
  GroupingInput other_caller = base;  // same helper, reached from a different in-app caller
  other_caller.threads[0].frames[5] = java("com.shop.cart.CheckoutPresenter$1.onResult");
  const std::string hash = computeFingerprint(base, kDefaults).hash;
  EXPECT_NE(computeFingerprint(other_site, kDefaults).hash, hash);
  EXPECT_NE(computeFingerprint(other_type, kDefaults).hash, hash);
  EXPECT_NE(computeFingerprint(other_caller, kDefaults).hash, hash);
}

TEST(Fingerprint, DifferentCallPathsAboveTheCrashSiteGroupTogether) {
  auto stack = [](std::vector<GroupingFrame> callers) {
    std::vector<GroupingFrame> frames = {java("com.shop.img.Decoder.decode"), java("com.shop.img.Cache.load"),
                                         java("android.graphics.BitmapFactory.decodeStream"),
                                         java("com.shop.img.Loader.fetch")};
    frames.insert(frames.end(), callers.begin(), callers.end());
    return crash("android", "java.lang.IllegalArgumentException", "bad bitmap", frames);
  };
  auto from_feed =
      stack({java("com.shop.feed.FeedAdapter.bind"), java("androidx.recyclerview.widget.RecyclerView.layout")});
  auto from_cart = stack({java("com.shop.cart.CartView.render"), java("com.shop.cart.CartActivity.onResume"),
                          java("android.app.Activity.performResume")});
  auto direct = stack({java("java.lang.Thread.run")});
  const std::string hash = computeFingerprint(from_feed, kDefaults).hash;
  EXPECT_EQ(computeFingerprint(from_cart, kDefaults).hash, hash);
  EXPECT_EQ(computeFingerprint(direct, kDefaults).hash, hash);
}

// iOS: objc_exception_throw and CoreFoundation on top, clone/block/outlined decorations that
// differ between builds, an app image whose name the restorer marked in-app.
GroupingInput iosCrash(int build) {
  auto app = [](std::string name) {
    GroupingFrame frame = native(std::move(name), "Shop");
    frame.in_app = true;
    return frame;
  };
  std::vector<GroupingFrame> frames = {
      native("__exceptionPreprocess", "CoreFoundation"),
      native("objc_exception_throw", "libobjc.A.dylib"),
      native("-[__NSArrayM objectAtIndex:]", "CoreFoundation"),
      app(build == 1 ? "__41-[CartViewController reloadItems:]_block_invoke_2"
                     : "__41-[CartViewController reloadItems:]_block_invoke_3"),
      app(build == 1 ? "_OUTLINED_FUNCTION_12" : "_OUTLINED_FUNCTION_40"),
      app(build == 1 ? "Shop.CartStore.apply(Shop.CartUpdate) -> ()"
                     : "Shop.CartStore.apply(Shop.CartUpdate) -> () [clone .cold]"),
      native("_dispatch_call_block_and_release", "libdispatch.dylib"),
      app("closure #1 in Shop.AppDelegate.start() -> ()"),
      native("UIApplicationMain", "UIKitCore"),
      app("main"),
      native("start", "dyld"),
  };
  return crash("ios", "NSRangeException", "*** -[__NSArrayM objectAtIndex:]: index 7 beyond bounds [0 .. 3]", frames);
}

TEST(Fingerprint, IosSameCrashAcrossBuilds) {
  Fingerprint one = computeFingerprint(iosCrash(1), kDefaults);
  Fingerprint two = computeFingerprint(iosCrash(2), kDefaults);
  EXPECT_EQ(one.hash, two.hash);
  EXPECT_EQ(one.frames_used, (std::vector<std::string>{"-[CartViewController reloadItems:]_block_invoke",
                                                       "Shop.CartStore.apply", "closure in Shop.AppDelegate.start"}));
  EXPECT_EQ(one.thread_frames[0][4].ignore_reason, "outlined function");
  EXPECT_EQ(one.thread_frames[0][9].ignore_reason, "noise: throw, abort or thread entry");
  EXPECT_FALSE(one.thread_frames[0][2].in_app);
}

TEST(Fingerprint, AndroidNativeAcrossNdkVersionsAndRecursionDepth) {
  auto stack = [](const char* ns, int depth) {
    std::vector<GroupingFrame> frames = {
        native("abort", "/apex/com.android.runtime/lib64/bionic/libc.so"), native("__cxa_throw", "libc++_shared.so"),
        native(std::string("json::Value::at(std::") + ns + "::basic_string<char> const&) const", "libshop.so")};
    for (int i = 0; i < depth; ++i) frames.push_back(native("json::Parser::parseValue(json::Reader&)", "libshop.so"));
    frames.push_back(native(std::string("shop::Config::load(std::") + ns + "::vector<char> const&)", "libshop.so"));
    frames.push_back(native("Java_com_shop_NativeBridge_loadConfig", "libshop.so"));
    frames.push_back(native("art_quick_generic_jni_trampoline", "/apex/com.android.art/lib64/libart.so"));
    return crash("android", "SIGABRT", "", frames);
  };
  const std::string hash = computeFingerprint(stack("__ndk1", 1), kDefaults).hash;
  EXPECT_EQ(computeFingerprint(stack("__1", 7), kDefaults).hash, hash);
  EXPECT_EQ(computeFingerprint(stack("__ndk1", 1), kDefaults).frames_used,
            (std::vector<std::string>{"json::Value::at", "json::Parser::parseValue", "shop::Config::load"}));
}

// The same lambda run by std::for_each, crashed in three aarch64 builds of one file (as
// tests/grouping_e2e/native_corpus_test.cc restores them): GCC -O0 (mangled names), Clang -O0
// ("$_0" for the closure) and GCC -O2, whose DWARF names the inlined call operator and the
// std::for_each instance without their scopes.
TEST(Fingerprint, NativeLambdaAcrossCompilersAndInlining) {
  auto frame = [](std::string function, const char* file, uint32_t line, const char* module = "shop") {
    GroupingFrame out = native(std::move(function), module);
    out.file = file;
    out.line = line;
    out.in_app = std::string_view(module) == "shop";
    return out;
  };
  const char* app = "/src/app.cc";
  const char* algo = "/usr/aarch64-linux-gnu/include/c++/12/bits/stl_algo.h";
  auto stack = [&](const std::string& lambda, const std::string& for_each) {
    return crash("android", "SIGSEGV", "",
                 {frame(lambda, app, 41), frame(for_each, algo, 3788), frame("shop::feature0::site60(int)", app, 40),
                  frame("shop::feature0::step60(int)", app, 45), frame("shop::feature0::entry60(int)", app, 48),
                  frame("__libc_start_main", "", 0, "libc.so.6")});
  };
  const Fingerprint gcc = computeFingerprint(
      stack("shop::feature0::site60(int)::'lambda'(int)::operator()(int) const",
            "'lambda'(int) std::for_each<int*, shop::feature0::site60(int)::'lambda'(int)>(int*, int*, "
            "shop::feature0::site60(int)::'lambda'(int))"),
      kDefaults);
  EXPECT_EQ(gcc.frames_used, (std::vector<std::string>{"shop::feature0::site60::'lambda'::operator()@+1",
                                                       "shop::feature0::site60", "shop::feature0::step60"}));
  const Fingerprint clang = computeFingerprint(
      stack("shop::feature0::site60(int)::$_0::operator()(int) const",
            "shop::feature0::site60(int)::$_0 std::for_each<int*, shop::feature0::site60(int)::$_0>(int*, int*, "
            "shop::feature0::site60(int)::$_0)"),
      kDefaults);
  EXPECT_EQ(clang.hash, gcc.hash);
  const Fingerprint inlined =
      computeFingerprint(stack("operator()",
                               "for_each<__gnu_cxx::__normal_iterator<int*, std::vector<int> >, "
                               "shop::feature0::site60(int)::<lambda(int)> >"),
                         kDefaults);
  EXPECT_EQ(inlined.hash, gcc.hash);
  EXPECT_EQ(inlined.frames_used, gcc.frames_used);
}

// A lambda run on its own thread: the enclosing function is not on the stack. GCC's inlined
// copy restores as a bare "operator()"; the restorer's scope (the enclosing function, from
// DWARF) names it as GCC -O0's mangled name and Clang's "$_0" do.
TEST(Fingerprint, NativeThreadLambdaNamedByItsScope) {
  auto stack = [](const std::string& lambda, const std::string& scope, const std::string& thrower) {
    GroupingFrame top = native(lambda, "shop");
    top.file = "/src/app.cc";
    top.line = 77;
    top.in_app = true;
    top.scope = scope;
    GroupingFrame libc = native(thrower, "libc.so.6");
    libc.in_app = false;
    GroupingFrame run = native("std::thread::_State_impl<T>::_M_run()", "shop");
    run.file = "/usr/aarch64-linux-gnu/include/c++/12/bits/std_thread.h";
    GroupingFrame entry = native("start_thread", "libc.so.6");
    entry.in_app = false;
    return crash("android", "SIGSEGV", "", {libc, top, run, entry});
  };
  const Fingerprint inlined =
      computeFingerprint(stack("operator()", "shop::Cart::total(char const*)", "strchr"), kDefaults);
  auto uses = [](const Fingerprint& fingerprint, const std::string& name) {
    return std::find(fingerprint.frames_used.begin(), fingerprint.frames_used.end(), name) !=
           fingerprint.frames_used.end();
  };
  EXPECT_TRUE(uses(inlined, "shop::Cart::total::'lambda'::operator()"))
      << ::testing::PrintToString(inlined.frames_used);
  EXPECT_NE(std::find(inlined.rules_applied.begin(), inlined.rules_applied.end(), "native:lambda-scope"),
            inlined.rules_applied.end());
  const Fingerprint gcc_o0 = computeFingerprint(
      stack("shop::Cart::total(char const*)::'lambda'()::operator()() const", "", "strchr"), kDefaults);
  const Fingerprint clang =
      computeFingerprint(stack("shop::Cart::total(char const*)::$_0::operator()() const", "", "strchr"), kDefaults);
  EXPECT_EQ(inlined.hash, gcc_o0.hash);
  EXPECT_EQ(inlined.hash, clang.hash);
  // Another enclosing function, or another libc call below the same lambda, is another group.
  EXPECT_NE(computeFingerprint(stack("operator()", "shop::Cart::clear()", "strchr"), kDefaults).hash, inlined.hash);
  const Fingerprint strlen_lambda =
      computeFingerprint(stack("operator()", "shop::Cart::total(char const*)", "strlen"), kDefaults);
  EXPECT_NE(strlen_lambda.hash, inlined.hash)
      << ::testing::PrintToString(strlen_lambda.frames_used) << ::testing::PrintToString(strlen_lambda.components);
  // Without a scope the bare name stays bare (nothing deeper names it here).
  EXPECT_TRUE(uses(computeFingerprint(stack("operator()", "", "strchr"), kDefaults), "operator()"));
}

TEST(Fingerprint, WebJsAcrossChunkHashes) {
  auto stack = [](const char* hash) {
    std::string chunk = std::string("https://shop.com/static/js/main.") + hash + ".js";
    return crash("web", "TypeError", "Cannot read properties of undefined (reading 'price')",
                 {js("async Object.computeTotal [as total]", "webpack:///src/cart/total.ts"),
                  js("Array.map", "[native code]"), js("renderCart", "webpack:///src/cart/Cart.tsx"),
                  js("", chunk),  // unrestored anonymous frame: named by its hash-free file
                  js("commitRoot", std::string("https://shop.com/static/js/vendors~main.") + hash + ".js"),
                  js("invokeGuardedCallback", "webpack:///node_modules/react-dom/cjs/react-dom.development.js")});
  };
  Fingerprint one = computeFingerprint(stack("e017fea1"), kDefaults);
  Fingerprint two = computeFingerprint(stack("9b2c41d0"), kDefaults);
  EXPECT_EQ(one.hash, two.hash);
  EXPECT_EQ(one.frames_used, (std::vector<std::string>{"computeTotal", "renderCart", "<anonymous>@static/js/main.js"}));
  EXPECT_EQ(one.thread_frames[0][4].in_app_reason, "vendor chunk");
  EXPECT_EQ(one.thread_frames[0][5].in_app_reason, "node_modules");
}

TEST(Fingerprint, AnrUsesTheMainThread) {
  GroupingInput anr;
  anr.app = "shop";
  anr.platform = "android";
  anr.kind = "anr";
  anr.exception_type = "ANR";
  anr.exception_message = "Input dispatching timed out (Waiting 5000ms for FocusEvent)";
  GroupingThread worker{"pool-1", true, false, {java("com.shop.sync.Syncer.run")}};
  GroupingThread main{"main",
                      false,
                      false,
                      {java("java.io.FileInputStream.read"), java("com.shop.db.Store.readAll"),
                       java("com.shop.home.HomeActivity.onCreate"), java("android.app.Activity.performCreate")}};
  anr.threads = {worker, main};
  Fingerprint fp = computeFingerprint(anr, kDefaults);
  EXPECT_EQ(fp.stack, "thread 1 (main)");
  EXPECT_EQ(fp.frames_used,
            (std::vector<std::string>{"com.shop.db.Store.readAll", "com.shop.home.HomeActivity.onCreate"}));
  EXPECT_EQ(fp.title, "ANR in com.shop.db.Store.readAll");
  // The ANR type or message does not split: another ANR message with the same main stack groups.
  GroupingInput other = anr;
  other.exception_message = "Broadcast of Intent { act=android.intent.action.TIME_TICK }";
  EXPECT_EQ(computeFingerprint(other, kDefaults).hash, fp.hash);
  // The same frames as a crash are a different problem.
  GroupingInput as_crash = anr;
  as_crash.kind = "crash";
  as_crash.threads = {main};
  EXPECT_NE(computeFingerprint(as_crash, kDefaults).hash, fp.hash);
}

GroupingSample sample(uint64_t t, std::vector<GroupingFrame> frames) {
  return {t, std::move(frames)};
}

TEST(Fingerprint, LagPicksTheStackMostSamplesShow) {
  GroupingInput lag;
  lag.app = "shop";
  lag.platform = "android";
  lag.kind = "lag";
  auto base = [](std::vector<GroupingFrame> top) {
    top.push_back(java("com.shop.feed.FeedParser.parse"));
    top.push_back(java("com.shop.feed.FeedActivity.onDataLoaded"));
    top.push_back(java("android.os.Handler.dispatchMessage"));
    top.push_back(java("android.os.Looper.loop"));
    return top;
  };
  lag.samples = {
      sample(0, base({java("org.json.JSONTokener.nextValue"), java("com.shop.feed.FeedParser.readItem")})),
      sample(50, base({java("com.shop.feed.FeedParser.readItem")})),
      sample(100, base({java("java.lang.String.substring"), java("com.shop.feed.FeedParser.readPrice")})),
      sample(150, base({java("com.shop.feed.FeedParser.readItem")})),
      sample(200, {java("android.os.MessageQueue.nativePollOnce"), java("android.os.Looper.loop")}),
  };
  Fingerprint fp = computeFingerprint(lag, kDefaults);
  // Hot path: onDataLoaded -> parse (4/5) -> readItem (3/5); readPrice (1/5) is not a majority.
  EXPECT_EQ(fp.frames_used,
            (std::vector<std::string>{"com.shop.feed.FeedParser.readItem", "com.shop.feed.FeedParser.parse",
                                      "com.shop.feed.FeedActivity.onDataLoaded"}));
  EXPECT_DOUBLE_EQ(fp.lag_share, 0.6);
  EXPECT_EQ(fp.lag_samples, 5u);
  EXPECT_EQ(fp.stack, "samples");
  EXPECT_EQ(fp.title, "Lag in com.shop.feed.FeedParser.readItem (60% of 5 samples)");
  EXPECT_TRUE(fp.sample_frames[1][0].used);
  EXPECT_FALSE(fp.sample_frames[2][1].used);

  // Sample order and leaf noise do not matter.
  GroupingInput shuffled = lag;
  std::reverse(shuffled.samples.begin(), shuffled.samples.end());
  shuffled.samples[0].frames.insert(shuffled.samples[0].frames.begin(), java("java.util.HashMap.get"));
  EXPECT_EQ(computeFingerprint(shuffled, kDefaults).hash, fp.hash);
}

TEST(Fingerprint, FallsBackToAllFramesThenMessage) {
  auto system_only = crash("android", "java.lang.IllegalStateException", "Fragment not attached",
                           {java("androidx.fragment.app.Fragment.requireContext"),
                            java("androidx.fragment.app.FragmentManager.execPendingActions"),
                            java("android.os.Handler.handleCallback"), java("android.os.Looper.loop")});
  Fingerprint all = computeFingerprint(system_only, kDefaults);
  EXPECT_EQ(all.source, FingerprintSource::kAllFrames);
  EXPECT_EQ(all.frames_used.size(), 2u);  // the Handler/Looper entry frames are noise
  EXPECT_TRUE(hasRule(all, "fallback: all frames"));

  auto unrestored =
      crash("ios", "EXC_BAD_ACCESS (SIGSEGV)", "KERN_INVALID_ADDRESS at 0x0000000000000010 order 52",
            {native("", "Shop", FrameState::kMissingSymbols), native("", "Shop", FrameState::kMissingSymbols)});
  Fingerprint provisional = computeFingerprint(unrestored, kDefaults);
  EXPECT_EQ(provisional.source, FingerprintSource::kMessage);
  EXPECT_EQ(provisional.quality, Quality::kProvisional);
  EXPECT_EQ(provisional.components.back(), "KERN_INVALID_ADDRESS at <hex> order <n>");
  EXPECT_EQ(provisional.thread_frames[0][0].ignore_reason, "missing symbols");

  // Once symbols arrive, the final fingerprint names the provisional one it replaces.
  auto restored = unrestored;
  restored.threads[0].frames = {native("Shop.Cart.total() -> Swift.Int", "Shop"),
                                native("Shop.CartView.render()", "Shop")};
  restored.provisional_fingerprint = provisional.hash;
  Fingerprint final_fp = computeFingerprint(restored, kDefaults);
  EXPECT_EQ(final_fp.quality, Quality::kComplete);
  EXPECT_EQ(final_fp.replaces, provisional.hash);
  EXPECT_NE(final_fp.hash, provisional.hash);

  GroupingInput nothing;
  nothing.kind = "crash";
  nothing.exception_type = "SIGSEGV";
  EXPECT_EQ(computeFingerprint(nothing, kDefaults).source, FingerprintSource::kTypeOnly);
}

TEST(Fingerprint, PartialOnlyWhenMissingSymbolsCouldChangeIt) {
  auto app = [](const char* name) { return native(name, "libshop.so"); };
  // Missing frame deeper than the three used ones: cannot change the result.
  auto deep = crash(
      "android", "SIGSEGV", "",
      {app("a::one()"), app("a::two()"), app("a::three()"), native("", "libshop.so", FrameState::kMissingSymbols)});
  EXPECT_EQ(computeFingerprint(deep, kDefaults).quality, Quality::kComplete);
  // Missing frame on top: once restored it becomes the culprit.
  auto top = crash(
      "android", "SIGSEGV", "",
      {native("", "libshop.so", FrameState::kMissingSymbols), app("a::one()"), app("a::two()"), app("a::three()")});
  EXPECT_EQ(computeFingerprint(top, kDefaults).quality, Quality::kPartial);
}

TEST(Fingerprint, InnermostCauseWithAppFramesWins) {
  auto input =
      crash("android", "java.lang.RuntimeException", "Unable to start activity ComponentInfo{com.shop/com.shop.Main}",
            {java("android.app.ActivityThread.performLaunchActivity"),
             java("android.app.ActivityThread.handleLaunchActivity")});
  input.causes.push_back({"java.lang.IllegalStateException",
                          "Config missing key 42",
                          {java("com.shop.config.Config.require"), java("com.shop.Main.onCreate"),
                           java("android.app.Activity.performCreate")}});
  input.causes.push_back({"java.io.IOException", "closed", {java("java.io.FileInputStream.read")}});
  Fingerprint fp = computeFingerprint(input, kDefaults);
  EXPECT_EQ(fp.stack, "cause 0");
  EXPECT_EQ(fp.components[3], "java.lang.IllegalStateException");
  EXPECT_EQ(fp.title, "java.lang.IllegalStateException: Config missing key <n>");  // masked
  EXPECT_EQ(fp.cause_frames.size(), 2u);
}

TEST(Fingerprint, AmbiguousRestorationDoesNotDependOnCandidateOrder) {
  GroupingFrame ambiguous = java("com.shop.a.Repo.load");
  ambiguous.alternatives = {"com.shop.a.Repo.save"};
  GroupingFrame swapped = java("com.shop.a.Repo.save");
  swapped.alternatives = {"com.shop.a.Repo.load"};
  auto one = crash("android", "E", "", {ambiguous, java("com.shop.a.Ui.click")});
  auto two = crash("android", "E", "", {swapped, java("com.shop.a.Ui.click")});
  EXPECT_EQ(computeFingerprint(one, kDefaults).hash, computeFingerprint(two, kDefaults).hash);
}

TEST(Fingerprint, HashIsUnambiguousAndDeterministic) {
  EXPECT_NE(hashComponents({"ab", "c"}), hashComponents({"a", "bc"}));
  EXPECT_EQ(hashComponents({"v1", "x"}), hashComponents({"v1", "x"}));
  auto input = javaCartCrash(1);
  EXPECT_EQ(computeFingerprint(input, kDefaults).hash, computeFingerprint(input, kDefaults).hash);
  EXPECT_EQ(fingerprintKey(input, computeFingerprint(input, kDefaults)),
            "shop:" + computeFingerprint(input, kDefaults).hash);
}

TEST(Fingerprint, OptionsBoundTheWork) {
  GroupingConfig config;
  config.options.max_frames_per_stack = 2;
  config.options.in_app_frames = 1;
  auto input = javaCartCrash(1);
  Fingerprint fp = computeFingerprint(input, config);
  // The one in-app frame allowed is a lambda, but nothing below it threw (requireNonNull is a
  // throw helper: its caller is the thrower).
  EXPECT_EQ(fp.source, FingerprintSource::kInAppFrames);
  EXPECT_EQ(fp.frames_used, std::vector<std::string>{"com.shop.cart.CartPresenter.lambda$onLoad"});
  EXPECT_EQ(fp.thread_frames[0][3].ignore_reason, "beyond max_frames_per_stack");
}

}  // namespace
}  // namespace restack::grouping
