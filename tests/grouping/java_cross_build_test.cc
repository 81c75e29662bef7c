// Cross-build grouping on real Java builds: the same app compiled twice (javac --release 8 with
// synthetic accessors vs --release 17 with nestmates, an extra lambda and an extra anonymous
// class that shift the compiler's numbering), obfuscated by ProGuard with two different
// dictionaries, crashed for real, and retraced with ProGuard's own ReTrace (the reference
// restorer). The frames are fed to grouping exactly as retrace printed them.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "grouping/fingerprint.h"
#include "grouping/kinds/java_rules.h"
#include "grouping/kinds/js_rules.h"
#include "grouping/kinds/native_rules.h"
#include "tests/grouping/tool_support.h"

namespace restack::grouping {
namespace {

using testing::run;
using testing::TempDir;
using testing::writeFile;

const std::string kDeps = RESTACK_DEPS_DIR;

// @EXTRA_LAMBDA@ / @EXTRA_ANON@ are filled only in build 2: code added above the crash site.
const char* kCart = R"(package com.shop.cart;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;
public class Cart {
  private final List<Integer> prices = new ArrayList<>();
  public Cart() { prices.add(100); prices.add(250); }
  @EXTRA_LAMBDA@
  public int total(String coupon) {
    IntUnaryOperator discount = p -> p - coupon.length();
    int sum = 0;
    for (int p : prices) sum += discount.applyAsInt(p);
    return sum;
  }
}
)";

const char* kPresenter = R"(package com.shop.cart;
public class CartPresenter {
  private final Cart cart = new Cart();
  private int shown;
  @EXTRA_ANON@
  private void doRefresh(String coupon) { shown = cart.total(coupon); }
  public void refresh(final String coupon) {
    Runnable task = new Runnable() {
      @Override public void run() { doRefresh(coupon); }
    };
    task.run();
  }
}
)";

const char* kCheckout = R"(package com.shop.checkout;
import com.shop.cart.Cart;
public class Checkout {
  public void pay(String coupon) {
    if (coupon == null) throw new IllegalStateException("no coupon for order " + System.nanoTime());
  }
  public int quickTotal(String coupon) { return new Cart().total(coupon); }
}
)";

const char* kMain = R"(package com.shop;
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
)";

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
  return text;
}

constexpr char kSeparator[] = "----";

// Puts a separator line after every line of a trace, so that the lines ReTrace prints for one
// obfuscated line (ambiguous candidates, each as its own "at" line) can be told apart.
std::string separateLines(const std::string& trace) {
  std::string out;
  size_t start = 0;
  while (start < trace.size()) {
    size_t end = trace.find('\n', start);
    if (end == std::string::npos) end = trace.size();
    out += trace.substr(start, end - start) + "\n" + kSeparator + "\n";
    start = end + 1;
  }
  return out;
}

// Parses retraced printStackTrace text (with separators) into a grouping input: the top
// exception's frames on the crashed thread, every "Caused by:" as a cause. Several frames
// between two separators are ReTrace's candidates for one obfuscated frame: the first is the
// frame, the others its alternatives, as the restorer reports them (docs/design.md §5).
GroupingInput parseRetraced(const std::string& text) {
  GroupingInput input;
  input.app = "shop";
  input.platform = "android";
  input.kind = "crash";
  input.threads.push_back({"main", true, true, {}});
  std::vector<GroupingFrame>* frames = &input.threads[0].frames;
  static const std::regex kFrame(R"(^\s*at\s+([^\s(]+)\((.*)\)\s*$)");
  static const std::regex kAlternative(R"(^\s+([^\s(]+)\((.*)\)\s*$)");
  static const std::regex kException(R"(^(Caused by: )?([\w$.]+)(: (.*))?$)");
  size_t start = 0;
  bool first = true;
  bool frame_open = false;  // a frame of the current separator group was already added
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    std::smatch match;
    if (line == kSeparator) {
      frame_open = false;
    } else if (std::regex_match(line, match, kFrame) && frame_open) {
      frames->back().alternatives.push_back(match[1]);
    } else if (std::regex_match(line, match, kFrame)) {
      frame_open = true;
      GroupingFrame frame;
      frame.kind = &javaRules();
      frame.function = match[1];
      frame.file = match[2];
      frames->push_back(std::move(frame));
    } else if (std::regex_match(line, match, kAlternative) && !frames->empty()) {
      frames->back().alternatives.push_back(match[1]);
    } else if (std::regex_match(line, match, kException)) {
      if (first) {
        input.exception_type = match[2];
        input.exception_message = match[4];
        first = false;
      } else if (match[1].matched) {
        input.causes.push_back({match[2], match[4], {}});
        frames = &input.causes.back().frames;
      }
    }
  }
  return input;
}

class JavaCrossBuild : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    for (const char* tool : {"javac", "java", "jar"}) {
      ASSERT_TRUE(testing::haveCommand(tool)) << tool << " is missing: run scripts/setup.sh (openjdk-17-jdk-headless)";
    }
    for (const char* folder : {"/proguard/lib/proguard-base-7.7.0.jar", "/proguard/retrace"}) {
      ASSERT_TRUE(std::filesystem::exists(kDeps + folder))
          << kDeps << folder << " is missing: run scripts/setup.sh (scripts/setup.d/proguard.sh)";
    }
    dir_ = new TempDir("restack-grouping-java-");
    build(1, "8", "alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\n", "", "");
    build(2, "17", "zulu\nyankee\nxray\nwhiskey\nvictor\nuniform\ntango\nsierra\n",
          "public int count() { Runnable r = () -> prices.clear(); r.run(); return prices.size(); }",
          "private final Runnable early = new Runnable() { public void run() { shown = -1; } };");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static void build(int number, const std::string& release, const std::string& dictionary,
                    const std::string& extra_lambda, const std::string& extra_anon) {
    const auto root = dir_->path() / ("build" + std::to_string(number));
    writeFile(root / "src/com/shop/cart/Cart.java", replaceAll(kCart, "@EXTRA_LAMBDA@", extra_lambda));
    writeFile(root / "src/com/shop/cart/CartPresenter.java", replaceAll(kPresenter, "@EXTRA_ANON@", extra_anon));
    writeFile(root / "src/com/shop/checkout/Checkout.java", kCheckout);
    writeFile(root / "src/com/shop/Main.java", kMain);
    writeFile(root / "dictionary.txt", dictionary);
    writeFile(root / "proguard.pro",
              "-injars in.jar\n-outjars out.jar\n"
              "-libraryjars <java.home>/jmods/java.base.jmod(!**.jar;!module-info.class)\n"
              "-keep class com.shop.Main { public static void main(java.lang.String[]); }\n"
              "-dontoptimize\n-keepattributes SourceFile,LineNumberTable\n"
              "-renamesourcefileattribute SourceFile\n-printmapping mapping.txt\n"
              "-obfuscationdictionary dictionary.txt\n-classobfuscationdictionary dictionary.txt\n"
              "-packageobfuscationdictionary dictionary.txt\n");
    auto compiled = run(
        root, "javac --release " + release + " -g -d classes $(find src -name '*.java') && jar cf in.jar -C classes .");
    ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
    auto obfuscated = run(root, "java -cp '" + kDeps + "/proguard/lib/*' proguard.ProGuard @proguard.pro");
    ASSERT_EQ(obfuscated.exit_code, 0) << obfuscated.output;
  }

  struct Crash {
    std::string obfuscated;
    std::string retraced;
    Fingerprint fingerprint;
  };

  static Crash crash(int number, const std::string& scenario) {
    const auto root = dir_->path() / ("build" + std::to_string(number));
    Crash out;
    auto ran = run(root, "java -cp out.jar com.shop.Main " + scenario);
    EXPECT_EQ(ran.exit_code, 0) << ran.output;
    out.obfuscated = ran.output;
    writeFile(root / ("trace-" + scenario + ".txt"), separateLines(ran.output));
    auto retraced =
        run(root, "java -cp '" + kDeps + "/proguard/retrace/*' proguard.retrace.ReTrace mapping.txt trace-" + scenario +
                      ".txt");
    EXPECT_EQ(retraced.exit_code, 0) << retraced.output;
    out.retraced = retraced.output;
    GroupingInput input = parseRetraced(retraced.output);
    input.build_id = std::to_string(number);
    out.fingerprint = computeFingerprint(input, GroupingConfig{});
    return out;
  }

  static TempDir* dir_;
};

TempDir* JavaCrossBuild::dir_ = nullptr;

std::string describe(const JavaCrossBuild::Crash& crash) {
  std::string text = "obfuscated:\n" + crash.obfuscated + "retraced:\n" + crash.retraced + "frames used:";
  for (const auto& frame : crash.fingerprint.frames_used) text += " | " + frame;
  return text;
}

TEST_F(JavaCrossBuild, SameCrashSameFingerprintInBothBuilds) {
  Crash one = crash(1, "feed");
  Crash two = crash(2, "feed");
  // The builds really differ: obfuscated names and the compiler's numbering.
  ASSERT_NE(one.obfuscated, two.obfuscated);
  ASSERT_NE(one.retraced.find("lambda$total$0"), std::string::npos) << one.retraced;
  ASSERT_EQ(two.retraced.find("lambda$total$0"), std::string::npos) << two.retraced;
  ASSERT_NE(one.retraced.find("access$"), std::string::npos) << one.retraced;
  ASSERT_EQ(two.retraced.find("access$"), std::string::npos) << two.retraced;
  EXPECT_EQ(one.fingerprint.hash, two.fingerprint.hash) << describe(one) << "\n" << describe(two);
  EXPECT_EQ(one.fingerprint.quality, Quality::kComplete);
  // The crashing frame is ambiguous in the mapping (total and lambda$total$0 share an
  // obfuscated name and line 10): the smallest candidate is used, in both builds alike.
  EXPECT_EQ(one.fingerprint.frames_used,
            (std::vector<std::string>{"com.shop.cart.Cart.lambda$total", "com.shop.cart.Cart.total",
                                      "com.shop.cart.CartPresenter.doRefresh"}))
      << describe(one);
}

TEST_F(JavaCrossBuild, DifferentCallPathsAboveTheAppFramesGroupTogether) {
  for (int number : {1, 2}) {
    Crash feed = crash(number, "feed");
    Crash search = crash(number, "search");
    EXPECT_EQ(feed.fingerprint.hash, search.fingerprint.hash) << describe(feed) << "\n" << describe(search);
  }
}

TEST_F(JavaCrossBuild, DifferentCrashSitesDiffer) {
  for (int number : {1, 2}) {
    const std::string feed = crash(number, "feed").fingerprint.hash;
    const std::string pay = crash(number, "pay").fingerprint.hash;
    const std::string quick = crash(number, "quick").fingerprint.hash;  // same helper, other call site
    EXPECT_NE(feed, pay);
    EXPECT_NE(feed, quick);
    EXPECT_NE(pay, quick);
    // The pay crash's message carries a timestamp; the fingerprint ignores it.
    EXPECT_EQ(pay, crash(number == 1 ? 2 : 1, "pay").fingerprint.hash);
  }
}

TEST_F(JavaCrossBuild, WrappedExceptionGroupsWithItsCause) {
  Crash wrapped = crash(2, "wrapped");
  EXPECT_EQ(wrapped.fingerprint.stack, "cause 0") << describe(wrapped);
  EXPECT_EQ(wrapped.fingerprint.hash, crash(1, "feed").fingerprint.hash) << describe(wrapped);
}

}  // namespace
}  // namespace restack::grouping
