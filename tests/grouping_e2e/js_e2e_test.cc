// Grouping across two Web builds, end to end through Restack's own restorer.
//
// The same app is bundled twice by esbuild (--minify --splitting --format=esm, one lazily
// imported chunk per screen and a shared chunk for the cart code). Build 2 has a code change
// elsewhere (a new function above the crash site and a new scenario in the entry) and another
// output layout (chunk and entry names), so every chunk has another content hash, file name and
// column, and the minifier picks other short names. Both builds run in node and throw for real;
// the V8 stacks are sent as raw web events (docs/design.md §3) through EventProcessor::process
// against a store where every chunk's source map was ingested under its minified file name.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>

#include "tests/grouping_e2e/e2e_support.h"

namespace restack::grouping_e2e {
namespace {

// @COUNT@ (build 2 only): a new function above the crash site, shifting its columns.
const char* kCart = R"(// Cart pricing.
@COUNT@
export function total(items, coupon) {
  let sum = 0;
  items.forEach((item) => {
    sum += item.price.amount - coupon.length;
  });
  return sum;
}
)";

const char* kPresenter = R"(import { total } from "./cart.js";
function priceCart(items, coupon) {
  return total(items, coupon) + 1;
}
export function refresh(coupon) {
  return priceCart([{ name: "shoe" }], coupon);
}
)";

const char* kFeed = R"(import { refresh } from "../presenter.js";
export function feedScreen(coupon) {
  return refresh(coupon) * 2;
}
)";

const char* kSearch = R"(import { refresh } from "../presenter.js";
function searchResults(coupon) {
  return refresh(coupon) * 3;
}
export function searchScreen(coupon) {
  return searchResults(coupon) + 4;
}
)";

const char* kCheckout = R"(import { total } from "./cart.js";
class PaymentError extends Error {
  constructor(message) {
    super(message);
    this.name = "PaymentError";
  }
}
export function pay(coupon) {
  if (!coupon) throw new PaymentError("no coupon for order " + Date.now());
  return coupon.length;
}
export function quickTotal(coupon) {
  return total([{ name: "hat" }], coupon) + 2;
}
)";

// Prints the thrown error as one JSON line: {"name", "message", "stack"}.
// @EXTRA_SCENARIO@ (build 2 only): the entry changed too.
const char* kMain = R"(const scenarios = {
  feed: async () => (await import("./screens/feed.js")).feedScreen("SAVE"),
  search: async () => (await import("./screens/search.js")).searchScreen("SAVE"),
  pay: async () => (await import("./checkout.js")).pay(""),
  quick: async () => (await import("./checkout.js")).quickTotal("SAVE"),
  @EXTRA_SCENARIO@
};
async function main(name) {
  try {
    await scenarios[name]();
    console.log(JSON.stringify({ name: "", message: "no error", stack: "" }));
  } catch (error) {
    console.log(JSON.stringify({ name: error.name, message: error.message, stack: error.stack }));
  }
}
main(process.argv[2]);
)";

struct BuildLayout {
  const char* entry_names;
  const char* chunk_names;
  const char* count_function;
  const char* extra_scenario;
  bool sources_content = true;
};

const BuildLayout kLayouts[] = {
    {"[name].[hash]", "chunks/[name].[hash]", "", ""},
    {"static/js/[name]-[hash]", "static/js/chunk-[name]-[hash]",
     "export function count(items) {\n  return items.filter((item) => item.price).length;\n}\n",
     "count: async () => (await import(\"./cart.js\")).count([]),"},
    // Build 3: build 1's code and layout, maps without sourcesContent (no function names).
    {"[name].[hash]", "chunks/[name].[hash]", "", "", false},
};

struct JsCrash {
  std::string stack;  // the V8 frames sent
  Outcome outcome;
};

class JsEndToEnd : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    if (!requireTool("node")) return;
    const std::string esbuild = kDepsDir + "/node/node_modules/.bin/esbuild";
    if (!std::filesystem::exists(esbuild)) {
      ADD_FAILURE() << esbuild << " is missing: run scripts/setup.sh";
      return;
    }
    auto dir = TempDir::create("restack-grouping-e2e-js-");
    ASSERT_TRUE(dir) << dir.error().message();
    dir_ = new TempDir(std::move(*dir));
    pipeline_ = Pipeline::create().release();
    ASSERT_NE(pipeline_, nullptr);
    for (int number : {1, 2, 3}) {
      const BuildLayout& layout = kLayouts[number - 1];
      const std::string folder = dir_->path() + "/build" + std::to_string(number);
      writeFile(folder + "/src/cart.js", replaceAll(kCart, "@COUNT@", layout.count_function));
      writeFile(folder + "/src/presenter.js", kPresenter);
      writeFile(folder + "/src/screens/feed.js", kFeed);
      writeFile(folder + "/src/screens/search.js", kSearch);
      writeFile(folder + "/src/checkout.js", kCheckout);
      writeFile(folder + "/src/main.js", replaceAll(kMain, "@EXTRA_SCENARIO@", layout.extra_scenario));
      ASSERT_TRUE(runOrFail(folder, "'" + esbuild +
                                        "' src/main.js --bundle --minify --splitting --format=esm "
                                        "--sourcemap --outdir=dist --out-extension:.js=.mjs --log-level=error "
                                        "'--entry-names=" +
                                        layout.entry_names + "' '--chunk-names=" + layout.chunk_names + "'" +
                                        (layout.sources_content ? "" : " --sources-content=false")));
      size_t maps = 0;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(folder + "/dist")) {
        const std::string path = entry.path().string();
        if (!path.ends_with(".mjs.map")) continue;
        UploadMeta meta;
        meta.app = "shop";
        meta.build_id = "web-" + std::to_string(number);
        meta.name = entry.path().filename().string();
        meta.name.resize(meta.name.size() - 4);  // "feed.7FPTK7PD.mjs" serves feed.7FPTK7PD.mjs
        ASSERT_TRUE(pipeline_->ingest(meta, path));
        ++maps;
      }
      ASSERT_GE(maps, 4u) << "esbuild made fewer chunks than expected";
      for (const auto& entry : std::filesystem::recursive_directory_iterator(folder + "/dist")) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with("main") && name.ends_with(".mjs")) entries_[number - 1] = entry.path().string();
      }
      ASSERT_FALSE(entries_[number - 1].empty());
    }
  }
  static void TearDownTestSuite() {
    delete pipeline_;
    pipeline_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  // Runs `scenario` on the bundle of build `number`, then restores the error as a web event.
  static JsCrash crash(int number, const std::string& scenario) {
    JsCrash out;
    if (pipeline_ == nullptr || entries_[number - 1].empty()) {
      ADD_FAILURE() << "the builds were not made";
      return out;
    }
    CommandResult ran = run(dir_->path(), "node '" + entries_[number - 1] + "' " + scenario);
    EXPECT_EQ(ran.exit_code, 0) << ran.output;
    simdjson::dom::parser parser;
    simdjson::dom::element error;
    if (parser.parse(ran.output).get(error) != simdjson::SUCCESS) {
      ADD_FAILURE() << "node printed no JSON: " << ran.output;
      return out;
    }
    const std::string name = std::string(std::string_view(error["name"]));
    const std::string message = std::string(std::string_view(error["message"]));
    const std::string stack = std::string(std::string_view(error["stack"]));
    // Browser SDKs send the frame lines; type and message travel in "exception".
    const size_t first_frame = stack.find("\n    at ");
    out.stack = first_frame == std::string::npos ? "" : stack.substr(first_frame + 1);
    EXPECT_FALSE(out.stack.empty()) << ran.output;
    const std::string build_id = "web-" + std::to_string(number);
    const std::string event = R"({"event_id":")" + build_id + "-" + scenario +
                              R"(","kind":"error","platform":"web","app":"shop","build_id":")" + build_id +
                              R"(","timestamp_ms":1700000000000,"exception":{"type":)" + jsonString(name) +
                              R"(,"message":)" + jsonString(message) +
                              R"(},"threads":[{"name":"main","crashed":true,"stack":)" + jsonString(out.stack) + "}]}";
    out.outcome = pipeline_->process("shop:" + build_id, event);
    return out;
  }

  static TempDir* dir_;
  static Pipeline* pipeline_;
  static std::string entries_[3];
};

TempDir* JsEndToEnd::dir_ = nullptr;
Pipeline* JsEndToEnd::pipeline_ = nullptr;
std::string JsEndToEnd::entries_[3];

std::string describe(const JsCrash& crash) {
  return "stack:\n" + crash.stack + "\n" + crash.outcome.describe();
}

// The chunk files a stack ran through, by name ("chunk.LWSWVTI7.mjs").
std::vector<std::string> scriptNames(const std::string& stack) {
  std::vector<std::string> names;
  for (size_t at = 0; (at = stack.find(".mjs:", at)) != std::string::npos; ++at) {
    size_t start = stack.rfind('/', at);
    names.push_back(stack.substr(start + 1, at + 4 - start - 1));
  }
  return names;
}

void expectRestoredAppFrames(const JsCrash& crash) {
  EXPECT_EQ(crash.outcome.source, "in_app") << describe(crash);
  EXPECT_EQ(crash.outcome.quality, "complete") << describe(crash);
  EXPECT_EQ(crash.outcome.event_fingerprint, crash.outcome.fingerprint) << describe(crash);
  ASSERT_FALSE(crash.outcome.frames.empty()) << describe(crash);
}

TEST_F(JsEndToEnd, SameErrorSameFingerprintAcrossChunkHashesAndCodeChanges) {
  for (const char* scenario : {"feed", "search", "pay", "quick"}) {
    SCOPED_TRACE(scenario);
    JsCrash one = crash(1, scenario);
    JsCrash two = crash(2, scenario);
    // The builds really differ: no script name of one build appears in the other's stack.
    for (const std::string& name : scriptNames(one.stack)) {
      EXPECT_EQ(two.stack.find(name), std::string::npos) << name << "\n" << describe(two);
    }
    expectRestoredAppFrames(one);
    expectRestoredAppFrames(two);
    EXPECT_EQ(one.outcome.fingerprint, two.outcome.fingerprint) << describe(one) << "\n" << describe(two);
    EXPECT_EQ(one.outcome.frames, two.outcome.frames);
  }
}

TEST_F(JsEndToEnd, RestoredNamesNotMinifiedOnesAreHashed) {
  JsCrash feed = crash(1, "feed");
  // The original names of the call chain, as the source maps give them back.
  const std::vector<std::string>& frames = feed.outcome.frames;
  ASSERT_EQ(frames.size(), 3u) << describe(feed);
  EXPECT_EQ(frames[1], "total") << describe(feed);
  EXPECT_EQ(frames[2], "priceCart") << describe(feed);
  JsCrash pay = crash(2, "pay");
  EXPECT_EQ(pay.outcome.culprit, "pay") << describe(pay);
  EXPECT_EQ(pay.outcome.exception_type, "PaymentError") << describe(pay);
}

TEST_F(JsEndToEnd, DifferentCrashSitesDiffer) {
  for (int number : {1, 2}) {
    SCOPED_TRACE(number);
    JsCrash feed = crash(number, "feed");
    JsCrash pay = crash(number, "pay");
    JsCrash quick = crash(number, "quick");  // the same helper as feed, reached from checkout
    EXPECT_NE(feed.outcome.fingerprint, pay.outcome.fingerprint) << describe(feed) << describe(pay);
    EXPECT_NE(feed.outcome.fingerprint, quick.outcome.fingerprint) << describe(feed) << describe(quick);
    EXPECT_NE(pay.outcome.fingerprint, quick.outcome.fingerprint) << describe(pay) << describe(quick);
  }
}

TEST_F(JsEndToEnd, DifferentCallPathsAboveTheAppFramesGroupTogether) {
  for (int number : {1, 2}) {
    SCOPED_TRACE(number);
    JsCrash feed = crash(number, "feed");
    JsCrash search = crash(number, "search");
    EXPECT_NE(feed.stack, search.stack);
    EXPECT_EQ(feed.outcome.fingerprint, search.outcome.fingerprint) << describe(feed) << describe(search);
  }
}

// A map without sourcesContent gives no function names: the restorer prints the minified ones,
// which grouping never hashes; such frames are keyed by their original source file and line.
TEST_F(JsEndToEnd, MinifiedNamesAreNeverHashed) {
  for (const char* scenario : {"feed", "pay", "quick"}) {
    SCOPED_TRACE(scenario);
    JsCrash crashed = crash(3, scenario);
    ASSERT_FALSE(crashed.outcome.frames.empty()) << describe(crashed);
    for (const std::string& frame : crashed.outcome.frames) {
      EXPECT_TRUE(frame.starts_with("<unnamed>@src/")) << frame << "\n" << describe(crashed);
    }
    EXPECT_EQ(crashed.outcome.quality, "complete") << describe(crashed);
  }
  EXPECT_NE(crash(3, "feed").outcome.fingerprint, crash(3, "pay").outcome.fingerprint);
  EXPECT_NE(crash(3, "feed").outcome.fingerprint, crash(3, "quick").outcome.fingerprint);
}

}  // namespace
}  // namespace restack::grouping_e2e
