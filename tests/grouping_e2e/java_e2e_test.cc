// Grouping across two Android Java builds, end to end through Restack's own restorer.
//
// The same classes (javac 17, compiled once) are obfuscated twice by ProGuard 7 with different
// -obfuscationdictionary / -classobfuscationdictionary / -packageobfuscationdictionary files, so
// every app class, method and package gets another name. Both obfuscated jars are run and crash
// for real; the printStackTrace() text each prints is sent as a raw event (docs/design.md §3) through
// EventProcessor::process against a store where both builds' mapping.txt were ingested with
// ingestUpload. The fingerprints read back from the restack.fingerprints records must ignore the
// obfuscation, and still tell crash sites apart.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "tests/grouping_e2e/e2e_support.h"

namespace restack::grouping_e2e {
namespace {

// com.shop: a crash inside a lambda of Cart.total reached from two screens (feed, search), an
// app exception class thrown at checkout (its name is obfuscated too), the same helper reached
// from another call site (quick), and the feed crash wrapped in a RuntimeException.
const std::map<std::string, std::string> kSources = {
    {"com/shop/cart/Cart.java", R"(package com.shop.cart;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;
public class Cart {
  private final List<Integer> prices = new ArrayList<>();
  public Cart() { prices.add(100); prices.add(250); }
  public int total(String coupon) {
    IntUnaryOperator discount = p -> p - coupon.length();
    int sum = 0;
    for (int p : prices) sum += discount.applyAsInt(p);
    return sum;
  }
}
)"},
    {"com/shop/cart/CartPresenter.java", R"(package com.shop.cart;
public class CartPresenter {
  private final Cart cart = new Cart();
  private int shown;
  private void doRefresh(String coupon) { shown = cart.total(coupon); }
  public void refresh(final String coupon) {
    Runnable task = new Runnable() {
      @Override public void run() { doRefresh(coupon); }
    };
    task.run();
  }
}
)"},
    {"com/shop/checkout/PaymentException.java", R"(package com.shop.checkout;
public class PaymentException extends RuntimeException {
  public PaymentException(String message) { super(message); }
}
)"},
    {"com/shop/checkout/Checkout.java", R"(package com.shop.checkout;
import com.shop.cart.Cart;
public class Checkout {
  public void pay(String coupon) {
    if (coupon == null) throw new PaymentException("no coupon for order " + System.nanoTime());
  }
  public int quickTotal(String coupon) { return new Cart().total(coupon); }
}
)"},
    {"com/shop/Main.java", R"(package com.shop;
import com.shop.cart.CartPresenter;
import com.shop.checkout.Checkout;
public class Main {
  static void feedScreen(String c) { new CartPresenter().refresh(c); }
  static void searchScreen(String c) { searchResults(c); }
  static void searchResults(String c) { new CartPresenter().refresh(c); }
  static void scenario(String name) {
    switch (name) {
      case "feed": feedScreen(null); break;
      case "search": searchScreen(null); break;
      case "pay": new Checkout().pay(null); break;
      case "quick": new Checkout().quickTotal(null); break;
      case "wrapped":
        try { feedScreen(null); } catch (RuntimeException e) { throw new RuntimeException("screen failed", e); }
        break;
      default: throw new IllegalArgumentException(name);
    }
  }
  public static void main(String[] args) {
    try { scenario(args[0]); } catch (Throwable t) { t.printStackTrace(System.out); }
  }
}
)"},
};

const char* kDictionaries[] = {
    "alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\njuliet\n",
    "zulu\nyankee\nxray\nwhiskey\nvictor\nuniform\ntango\nsierra\nromeo\nquebec\n",
};

struct JavaCrash {
  std::string trace;  // what the obfuscated app printed
  Outcome outcome;
};

class JavaEndToEnd : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    for (const char* tool : {"javac", "java", "jar"}) {
      if (!requireTool(tool)) return;
    }
    const std::string proguard = kDepsDir + "/proguard/lib";
    if (!std::filesystem::exists(proguard)) {
      ADD_FAILURE() << proguard << " is missing: run scripts/setup.sh (scripts/setup.d/proguard.sh)";
      return;
    }
    auto dir = TempDir::create("restack-grouping-e2e-java-");
    ASSERT_TRUE(dir) << dir.error().message();
    dir_ = new TempDir(std::move(*dir));
    const std::string root = dir_->path();
    for (const auto& [path, text] : kSources) writeFile(root + "/src/" + path, text);
    ASSERT_TRUE(
        runOrFail(root, "javac --release 17 -g -d classes $(find src -name '*.java') && jar cf in.jar -C classes ."));

    pipeline_ = Pipeline::create().release();
    ASSERT_NE(pipeline_, nullptr);
    for (int build : {1, 2}) {
      const std::string folder = root + "/build" + std::to_string(build);
      writeFile(folder + "/dictionary.txt", kDictionaries[build - 1]);
      writeFile(folder + "/proguard.pro",
                "-injars ../in.jar\n-outjars out.jar\n"
                "-libraryjars <java.home>/jmods/java.base.jmod(!**.jar;!module-info.class)\n"
                "-keep class com.shop.Main { public static void main(java.lang.String[]); }\n"
                "-dontoptimize\n-keepattributes SourceFile,LineNumberTable\n"
                "-renamesourcefileattribute SourceFile\n-printmapping mapping.txt\n"
                "-obfuscationdictionary dictionary.txt\n-classobfuscationdictionary dictionary.txt\n"
                "-packageobfuscationdictionary dictionary.txt\n");
      ASSERT_TRUE(runOrFail(folder, "java -cp '" + proguard + "/*' proguard.ProGuard @proguard.pro"));
      UploadMeta meta;
      meta.app = "shop";
      meta.build_id = std::to_string(build);
      ASSERT_TRUE(pipeline_->ingest(meta, folder + "/mapping.txt"));
    }
  }
  static void TearDownTestSuite() {
    delete pipeline_;
    pipeline_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  // Runs `scenario` on the obfuscated jar of `build` and restores what it printed as an event.
  // Without `exception_field`, the event carries the exception only in its printStackTrace() text.
  static JavaCrash crash(int build, const std::string& scenario, bool exception_field = true) {
    JavaCrash out;
    if (dir_ == nullptr || pipeline_ == nullptr) {
      ADD_FAILURE() << "the builds were not made";
      return out;
    }
    const std::string folder = dir_->path() + "/build" + std::to_string(build);
    CommandResult ran = run(folder, "java -cp out.jar com.shop.Main " + scenario);
    EXPECT_EQ(ran.exit_code, 0) << ran.output;
    out.trace = ran.output;
    // The first line is "<obfuscated or JDK class>[: message]", as the SDK reports it.
    const std::string first = out.trace.substr(0, out.trace.find('\n'));
    const size_t colon = first.find(": ");
    const std::string type = first.substr(0, colon);
    const std::string message = colon == std::string::npos ? "" : first.substr(colon + 2);
    const std::string id = "java-" + std::to_string(build) + "-" + scenario + (exception_field ? "" : "-text");
    const std::string exception =
        R"("exception":{"type":)" + jsonString(type) + R"(,"message":)" + jsonString(message) + "},";
    const std::string event = R"({"event_id":")" + id + R"(","kind":"crash","platform":"android","app":"shop",)" +
                              R"("build_id":")" + std::to_string(build) + R"(","timestamp_ms":1700000000000,)" +
                              (exception_field ? exception : "") +
                              R"("threads":[{"name":"main","crashed":true,"stack":)" + jsonString(out.trace) + "}]}";
    out.outcome = pipeline_->process("shop:" + std::to_string(build), event);
    return out;
  }

  static TempDir* dir_;
  static Pipeline* pipeline_;
};

TempDir* JavaEndToEnd::dir_ = nullptr;
Pipeline* JavaEndToEnd::pipeline_ = nullptr;

std::string describe(const JavaCrash& crash) {
  return "trace:\n" + crash.trace + crash.outcome.describe();
}

// Every frame the hash used is a restored app name, not an obfuscated one.
void expectRestoredAppFrames(const JavaCrash& crash) {
  EXPECT_EQ(crash.outcome.quality, "complete") << describe(crash);
  EXPECT_EQ(crash.outcome.source, "in_app") << describe(crash);
  EXPECT_EQ(crash.outcome.symbolication, "complete") << describe(crash);
  EXPECT_EQ(crash.outcome.event_fingerprint, crash.outcome.fingerprint) << describe(crash);
  ASSERT_FALSE(crash.outcome.frames.empty()) << describe(crash);
  for (const std::string& frame : crash.outcome.frames) {
    EXPECT_TRUE(frame.starts_with("com.shop.")) << frame << "\n" << describe(crash);
  }
}

TEST_F(JavaEndToEnd, SameCrashSameFingerprintInBothObfuscations) {
  for (const char* scenario : {"feed", "search", "pay", "quick", "wrapped"}) {
    SCOPED_TRACE(scenario);
    JavaCrash one = crash(1, scenario);
    JavaCrash two = crash(2, scenario);
    // The builds really differ: every app frame carries another obfuscated name.
    ASSERT_NE(one.trace, two.trace);
    expectRestoredAppFrames(one);
    expectRestoredAppFrames(two);
    EXPECT_EQ(one.outcome.fingerprint, two.outcome.fingerprint) << describe(one) << "\n" << describe(two);
    EXPECT_EQ(one.outcome.frames, two.outcome.frames);
  }
}

TEST_F(JavaEndToEnd, ObfuscatedAppExceptionTypeIsRestoredBeforeHashing) {
  JavaCrash one = crash(1, "pay");
  JavaCrash two = crash(2, "pay");
  // ProGuard renamed the exception class differently in each build.
  EXPECT_EQ(one.trace.find("PaymentException"), std::string::npos) << one.trace;
  EXPECT_NE(one.trace.substr(0, one.trace.find(':')), two.trace.substr(0, two.trace.find(':')));
  EXPECT_EQ(one.outcome.exception_type, "com.shop.checkout.PaymentException") << describe(one);
  EXPECT_EQ(two.outcome.exception_type, "com.shop.checkout.PaymentException") << describe(two);
  EXPECT_EQ(one.outcome.culprit, "com.shop.checkout.Checkout.pay") << describe(one);
}

TEST_F(JavaEndToEnd, DifferentCrashSitesDiffer) {
  for (int build : {1, 2}) {
    SCOPED_TRACE(build);
    JavaCrash feed = crash(build, "feed");
    JavaCrash pay = crash(build, "pay");
    JavaCrash quick = crash(build, "quick");  // the same helper as feed, reached from checkout
    EXPECT_NE(feed.outcome.fingerprint, pay.outcome.fingerprint) << describe(feed) << describe(pay);
    EXPECT_NE(feed.outcome.fingerprint, quick.outcome.fingerprint) << describe(feed) << describe(quick);
    EXPECT_NE(pay.outcome.fingerprint, quick.outcome.fingerprint) << describe(pay) << describe(quick);
  }
}

TEST_F(JavaEndToEnd, DifferentCallPathsAboveTheAppFramesGroupTogether) {
  for (int build : {1, 2}) {
    SCOPED_TRACE(build);
    JavaCrash feed = crash(build, "feed");
    JavaCrash search = crash(build, "search");
    JavaCrash wrapped = crash(build, "wrapped");  // the same crash as a "Caused by:"
    EXPECT_NE(feed.trace, search.trace);
    EXPECT_EQ(feed.outcome.fingerprint, search.outcome.fingerprint) << describe(feed) << describe(search);
    EXPECT_EQ(feed.outcome.fingerprint, wrapped.outcome.fingerprint) << describe(feed) << describe(wrapped);
  }
}

// printStackTrace() output alone: the exception is read from the (deobfuscated) trace text,
// named in the title and hashed as if the event had stated it.
TEST_F(JavaEndToEnd, ExceptionReadFromTraceTextOnly) {
  for (int build : {1, 2}) {
    SCOPED_TRACE(build);
    JavaCrash field = crash(build, "pay");
    JavaCrash text = crash(build, "pay", false);
    EXPECT_EQ(text.outcome.exception_type, "com.shop.checkout.PaymentException") << describe(text);
    EXPECT_EQ(text.outcome.fingerprint, field.outcome.fingerprint) << describe(text) << describe(field);
    EXPECT_NE(text.outcome.record.find(R"("title":"com.shop.checkout.PaymentException)"), std::string::npos)
        << describe(text);
    EXPECT_NE(text.outcome.record.find(R"("exceptions":[{"type":"com.shop.checkout.PaymentException")"),
              std::string::npos)
        << describe(text);
  }
}

}  // namespace
}  // namespace restack::grouping_e2e
