// Exceptions read from trace text, and the grouping decisions that depend on them: the type
// from printStackTrace() output, frames down to the thrower under anonymous app frames, lambdas
// keyed by their position in the enclosing function.
#include "grouping/exception_text.h"
#include "grouping/kinds/java_rules.h"
#include "grouping/kinds/js_rules.h"
#include "grouping/kinds/native_rules.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include "grouping/fingerprint.h"
#include "grouping/normalize.h"
#include "grouping/record_json.h"
#include "tests/grouping/frames.h"

namespace restack::grouping {
namespace {

using testing::crash;
using testing::java;
using testing::js;
using testing::native;

const GroupingConfig kDefaults{};

// What java.lang.Throwable.printStackTrace() printed for a real wrapped exception with a
// suppressed one (JDK 17).
constexpr std::string_view kJavaTrace =
    "java.lang.RuntimeException: load failed for user 42\n"
    "\tat com.shop.cart.Cart.load(Cart.java:31)\n"
    "\tat com.shop.Main.main(Main.java:9)\n"
    "\tSuppressed: java.io.IOException: close failed\n"
    "\t\tat com.shop.cart.Cart.close(Cart.java:40)\n"
    "\t\t... 1 more\n"
    "Caused by: java.lang.IllegalStateException: closed\n"
    "\tat com.shop.db.Db.read(Db.java:12)\n"
    "\t... 2 more\n"
    "Caused by: java.lang.NullPointerException\n"
    "\tat com.shop.db.Row.get(Row.java:3)\n";

TEST(ExceptionText, JavaChainWithCausesAndSuppressed) {
  auto chain = readExceptionsFromText(kJavaTrace);
  ASSERT_EQ(chain.size(), 4u);
  EXPECT_EQ(chain[0].type, "java.lang.RuntimeException");
  EXPECT_EQ(chain[0].message, "load failed for user 42");
  EXPECT_EQ(chain[0].relation, "");
  EXPECT_EQ(chain[1].type, "java.io.IOException");
  EXPECT_EQ(chain[1].relation, "suppressed");
  EXPECT_EQ(chain[2].type, "java.lang.IllegalStateException");
  EXPECT_EQ(chain[2].message, "closed");
  EXPECT_EQ(chain[2].relation, "caused_by");
  EXPECT_EQ(chain[3].type, "java.lang.NullPointerException");
  EXPECT_EQ(chain[3].message, "");

  auto thread = readExceptionsFromText(
      "Exception in thread \"main\" java.lang.ArithmeticException: / by zero\n\tat A.main(A.java:3)\n");
  ASSERT_EQ(thread.size(), 1u);
  EXPECT_EQ(thread[0].type, "java.lang.ArithmeticException");
  EXPECT_EQ(thread[0].message, "/ by zero");
}

TEST(ExceptionText, JavaScriptErrorLine) {
  auto v8 = readExceptionsFromText(
      "TypeError: Cannot read properties of undefined (reading 'amount')\n"
      "    at file:///app/dist/chunks/cart.3f9a1c2b.js:1:204\n"
      "    at Array.forEach (<anonymous>)\n");
  ASSERT_EQ(v8.size(), 1u);
  EXPECT_EQ(v8[0].type, "TypeError");
  EXPECT_EQ(v8[0].message, "Cannot read properties of undefined (reading 'amount')");
  auto uncaught = readExceptionsFromText("Uncaught PaymentError: no coupon for order 17\n    at pay (a.js:1:2)");
  ASSERT_EQ(uncaught.size(), 1u);
  EXPECT_EQ(uncaught[0].type, "PaymentError");
  // A first line that is prose, or a frame, is not an exception.
  EXPECT_TRUE(readExceptionsFromText("Note: the app restarted\n    at a (a.js:1:1)").empty());
  EXPECT_TRUE(readExceptionsFromText("    at a (a.js:1:1)\n").empty());
  EXPECT_TRUE(readExceptionsFromText("").empty());
}

TEST(ExceptionText, NativeReasonLines) {
  auto apple = readExceptionsFromText(
      "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
      "Exception Subtype: KERN_INVALID_ADDRESS at 0x0000000000000010\n"
      "Termination Reason: Namespace SIGNAL, Code 11 Segmentation fault: 11\n"
      "0   Shop   0x0000000100a8c1f4 CartStore.apply + 52\n");
  ASSERT_EQ(apple.size(), 1u);
  EXPECT_EQ(apple[0].type, "EXC_BAD_ACCESS (SIGSEGV)");
  EXPECT_EQ(apple[0].message, "KERN_INVALID_ADDRESS at 0x0000000000000010");
  EXPECT_EQ(nativeReasonKey(apple[0].type), "EXC_BAD_ACCESS");

  auto objc = readExceptionsFromText(
      "Exception Type:  EXC_CRASH (SIGABRT)\n"
      "*** Terminating app due to uncaught exception 'NSRangeException', reason: '*** index 3 beyond bounds'\n");
  ASSERT_EQ(objc.size(), 2u);
  EXPECT_EQ(objc[0].type, "NSRangeException");
  EXPECT_EQ(objc[0].message, "*** index 3 beyond bounds");
  EXPECT_EQ(objc[1].type, "EXC_CRASH (SIGABRT)");
  EXPECT_EQ(objc[1].relation, "signal");

  auto tombstone = readExceptionsFromText(
      "signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0000000000000008\n"
      "Cause: null pointer dereference\n"
      "    #00 pc 000000000001c2a4  /data/app/com.shop/lib/arm64/libshop.so (priceCart+36)\n");
  ASSERT_EQ(tombstone.size(), 1u);
  EXPECT_EQ(tombstone[0].type, "SIGSEGV");
  EXPECT_EQ(tombstone[0].message, "null pointer dereference");

  auto abort = readExceptionsFromText(
      "signal 6 (SIGABRT), code -1 (SI_QUEUE), fault addr --------\n"
      "Abort message: 'bad state 0x7f12'\n");
  ASSERT_EQ(abort.size(), 1u);
  EXPECT_EQ(abort[0].type, "SIGABRT");
  EXPECT_EQ(abort[0].message, "bad state 0x7f12");
}

// A printStackTrace() event carries its exception only in the text.
GroupingInput traceOnly(std::string type, std::string message, std::vector<GroupingFrame> frames) {
  GroupingInput input = crash("android", "", "", std::move(frames));
  input.exceptions.push_back({std::move(type), std::move(message), ""});
  return input;
}

TEST(ExceptionText, TypeFromTraceTextNamesAndSplits) {
  std::vector<GroupingFrame> frames = {java("com.shop.cart.Cart.load"), java("com.shop.Main.onCreate")};
  Fingerprint text = computeFingerprint(traceOnly("java.lang.IllegalStateException", "closed 12", frames), kDefaults);
  EXPECT_EQ(text.title, "java.lang.IllegalStateException: closed <n>");
  EXPECT_EQ(text.exception_type, "java.lang.IllegalStateException");
  // The same crash with the exception in the event's own field groups with it.
  Fingerprint field =
      computeFingerprint(crash("android", "java.lang.IllegalStateException", "closed 7", frames), kDefaults);
  EXPECT_EQ(field.hash, text.hash);
  // Another thrown type through the same app frames is another problem.
  EXPECT_NE(computeFingerprint(traceOnly("java.lang.NullPointerException", "", frames), kDefaults).hash, text.hash);
  EXPECT_EQ(computeFingerprint(crash("android", "", "", frames), kDefaults).title, "Unknown error");
}

TEST(ExceptionText, AppleReasonFromTextGroupsWithTheEventField) {
  std::vector<GroupingFrame> frames = {native("Shop.CartStore.apply(Shop.CartUpdate) -> ()", "Shop")};
  frames[0].in_app = true;
  GroupingInput field = crash("ios", "EXC_BAD_ACCESS", "KERN_INVALID_ADDRESS at 0x10", frames);
  GroupingInput text = crash("ios", "", "", frames);
  text.exceptions = readExceptionsFromText("Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n");
  EXPECT_EQ(computeFingerprint(field, kDefaults).hash, computeFingerprint(text, kDefaults).hash);
  EXPECT_EQ(computeFingerprint(text, kDefaults).title, "EXC_BAD_ACCESS (SIGSEGV)");
}

// Two errors thrown inside the same library, reached from the same anonymous app arrow.
GroupingInput arrowCrash(std::string type, std::string thrower, std::string file) {
  return crash("web", std::move(type), "x",
               {js(std::move(thrower), "node_modules/dayjs/esm/index.js"),
                js("parseDate", "node_modules/dayjs/esm/parse.js"), js("", std::move(file)), js("", "src/main.js")});
}

TEST(FramesToThrower, AnonymousAppFramesTakeInTheThrower) {
  Fingerprint a = computeFingerprint(arrowCrash("RangeError", "toISOString", "src/feed.js"), kDefaults);
  Fingerprint b = computeFingerprint(arrowCrash("RangeError", "startOf", "src/feed.js"), kDefaults);
  EXPECT_EQ(a.source, FingerprintSource::kThrowerFrames);
  EXPECT_EQ(a.frames_used, (std::vector<std::string>{"toISOString", "parseDate", "<anonymous>@src/feed.js",
                                                     "<anonymous>@src/main.js"}));
  EXPECT_NE(a.hash, b.hash);
  EXPECT_EQ(a.hash, computeFingerprint(arrowCrash("RangeError", "toISOString", "src/feed.js"), kDefaults).hash);
  // A named app frame is distinctive: the library below it does not enter.
  auto named = crash("web", "RangeError", "x",
                     {js("toISOString", "node_modules/dayjs/esm/index.js"), js("renderFeed", "src/feed.js")});
  EXPECT_EQ(computeFingerprint(named, kDefaults).source, FingerprintSource::kInAppFrames);
  EXPECT_EQ(computeFingerprint(named, kDefaults).frames_used, std::vector<std::string>{"renderFeed"});
}

TEST(FramesToThrower, JavaStaticLambdasNoLongerMerge) {
  // Every lambda$static$N of a class normalizes to one name; what they call tells them apart.
  auto lambda = [](int index, std::string thrower) {
    return crash("android", "java.lang.IllegalArgumentException", "",
                 {java(std::move(thrower)), java("com.shop.Parsers.lambda$static$" + std::to_string(index)),
                  java("com.shop.Parsers$$ExternalSyntheticLambda" + std::to_string(index) + ".apply"),
                  java("java.util.stream.ReferencePipeline$3$1.accept")});
  };
  Fingerprint date = computeFingerprint(lambda(0, "java.time.LocalDate.parse"), kDefaults);
  Fingerprint number = computeFingerprint(lambda(1, "java.lang.Integer.parseInt"), kDefaults);
  EXPECT_NE(date.hash, number.hash);
  // The compiler's index is not part of the key: renumbering keeps the group.
  EXPECT_EQ(date.hash, computeFingerprint(lambda(4, "java.time.LocalDate.parse"), kDefaults).hash);
  EXPECT_TRUE(std::find(date.rules_applied.begin(), date.rules_applied.end(), "fallback: frames to the thrower") !=
              date.rules_applied.end());
}

TEST(LambdaPosition, KeyedByDistanceToTheEnclosingFrame) {
  auto forEachCrash = [](std::string lambda, uint32_t lambda_line, uint32_t total_line) {
    GroupingFrame inner = java("com.shop.cart.Cart." + lambda, "Cart.java");
    inner.line = lambda_line;
    GroupingFrame outer = java("com.shop.cart.Cart.total", "Cart.java");
    outer.line = total_line;
    return crash("android", "java.lang.NullPointerException", "",
                 {inner, java("java.util.ArrayList.forEach"), outer, java("com.shop.Main.onCreate")});
  };
  Fingerprint first = computeFingerprint(forEachCrash("lambda$total$0", 12, 11), kDefaults);
  EXPECT_EQ(first.frames_used.front(), "com.shop.cart.Cart.lambda$total@+1");
  // Build 2: code added above total (every line +5) and the lambda renumbered.
  EXPECT_EQ(computeFingerprint(forEachCrash("lambda$total$3", 17, 16), kDefaults).hash, first.hash);
  // Another lambda of total, two lines further down.
  EXPECT_NE(computeFingerprint(forEachCrash("lambda$total$1", 14, 11), kDefaults).hash, first.hash);
  EXPECT_EQ(enclosingFunction("a.B.lambda$static", javaRules()), "a.B.<clinit>");
  EXPECT_EQ(enclosingFunction("a.B.load$lambda", javaRules()), "a.B.load");
  EXPECT_EQ(enclosingFunction("shop::priceCart::{lambda}::operator()", nativeRules()), "shop::priceCart");
  EXPECT_EQ(enclosingFunction("closure in Shop.Feed.load", nativeRules()), "Shop.Feed.load");
  EXPECT_EQ(enclosingFunction("a.B.load", javaRules()), "");
}

TEST(JsKeys, UnknownNamesAreKeyedByOriginalPosition) {
  // The same frame from two bundlers' maps without names: other minified names, same original
  // position; never hashed by the minified name.
  auto unnamed = [](std::string minified, uint32_t line) {
    GroupingFrame frame = js(std::move(minified), "webpack:///./src/cart.js");
    frame.name_unknown = true;
    frame.line = line;
    return frame;
  };
  auto esbuild = crash("web", "TypeError", "x", {unnamed("a", 6), unnamed("Qe", 3)});
  auto terser = crash("web", "TypeError", "x", {unnamed("t", 6), unnamed("n", 3)});
  Fingerprint one = computeFingerprint(esbuild, kDefaults);
  EXPECT_EQ(one.frames_used, (std::vector<std::string>{"<unnamed>@src/cart.js:6", "<unnamed>@src/cart.js:3"}));
  EXPECT_EQ(one.hash, computeFingerprint(terser, kDefaults).hash);
  // Another site of the same file is another key (a file-only key would merge them).
  auto other = crash("web", "TypeError", "x", {unnamed("a", 9), unnamed("Qe", 3)});
  EXPECT_NE(computeFingerprint(other, kDefaults).hash, one.hash);
}

TEST(ExceptionText, RecordCarriesTheChainAndTheSource) {
  GroupingInput input = traceOnly("java.lang.RuntimeException", "wrapped", {java("com.shop.cart.Cart.load")});
  input.exceptions.push_back({"java.io.IOException", "reset by peer", "caused_by"});
  Fingerprint fp = computeFingerprint(input, kDefaults);
  const std::string json = fingerprintRecordJson(input, fp);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  std::string_view value;
  ASSERT_EQ(root["exception_type"].get(value), simdjson::SUCCESS);
  EXPECT_EQ(value, "java.lang.RuntimeException");
  simdjson::dom::array chain;
  ASSERT_EQ(root["exceptions"].get(chain), simdjson::SUCCESS) << json;
  ASSERT_EQ(chain.size(), 2u);
  ASSERT_EQ(chain.at(1)["relation"].get(value), simdjson::SUCCESS);
  EXPECT_EQ(value, "caused_by");
  ASSERT_EQ(chain.at(1)["type"].get(value), simdjson::SUCCESS);
  EXPECT_EQ(value, "java.io.IOException");
  EXPECT_EQ(chain.at(0)["relation"].error(), simdjson::NO_SUCH_FIELD);
}

}  // namespace
}  // namespace restack::grouping
