// EventGenerator (loadtest/worker/events.h) on a small corpus built in memory: the reader's
// expect() must describe exactly the event make() produced (the same random draws without the
// text), and checkRestored must accept the right restoration and catch every kind of wrong one.
#include "loadtest/worker/events.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "formats/common/json_text.h"

namespace restack::loadtest {
namespace {

Corpus smallCorpus() {
  Corpus corpus;
  corpus.app = "app";
  corpus.android_functions = {"f0", "f1"};
  corpus.ios_functions = {"g0", "g1"};
  corpus.android_pool = {{0, 4, {"inlined_a", "outer_a"}}, {1, 8, {"b"}}};
  corpus.ios_pool = {{0, 12, {"c"}}, {1, 0, {"d_inner", "d"}}};
  corpus.java_pool = {{"a.b", "c", 10, "SourceFile", {"com.app.Main.run"}},
                      {"java.lang.Thread", "run", 764, "Thread.java", {"java.lang.Thread.run"}}};
  for (int b = 0; b < 2; ++b) {
    CorpusBuild build;
    build.build_id = "1.0(" + std::to_string(b) + ")";
    build.android_build_id = "0123456789abcdef0123456789abcdef0123456" + std::to_string(b);
    build.android_starts = {0x1000, 0x2000};
    build.ios_uuid = "00000000-0000-0000-0000-00000000000" + std::to_string(b);
    build.ios_starts = {0x3000, 0x4000};
    build.java_suffix = std::to_string(b);
    build.web_url = "https://cdn.example.com/main." + std::to_string(b) + ".js";
    build.web_frames = {{1, 100, "a", "render"}, {1, 200, "b", "click \"quoted\""}};
    build.rn_name = "index.android.bundle";
    build.rn_frames = {{1, 300, "c", "onPress"}};
    corpus.builds.push_back(build);
  }
  return corpus;
}

EventOptions options() {
  EventOptions o;
  o.min_frames = 1;
  o.max_frames = 8;
  o.missing_share = 0.3;
  o.malformed_share = 0.05;
  return o;
}

// The restored event a correct worker writes for `event`, in the shape checkRestored reads: each
// thread (or lag sample) gets "frames", one per expected function, missing frames one each.
std::string restoredFor(const GeneratedEvent& event) {
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(event.json).value();
  const ExpectedFrame* frame = event.frames.data();
  size_t stack = 0;
  auto frames = [&] {
    std::string out = "\"frames\":[";
    for (uint32_t raw = 0; raw < event.stack_sizes[stack]; ++raw, ++frame) {
      if (frame->empty()) {
        out += R"({"raw":"x","status":"missing_symbols","kind":"native"},)";
        continue;
      }
      for (const std::string& name : *frame) {
        out += R"({"raw":"x","status":"symbolicated","function":)";
        appendJsonString(out, name);
        out += R"(,"line":7,"inlined":false},)";
      }
    }
    if (out.back() == ',') out.pop_back();
    ++stack;
    return out + "]";
  };
  std::string out = R"({"event_id":"lt0-r","threads":[)";
  for (simdjson::dom::element thread : root["threads"].get_array()) {
    simdjson::dom::array samples;
    if (!thread["samples"].get_array().get(samples)) {
      out += R"({"name":"main","samples":[)";
      for (size_t s = 0; s < samples.size(); ++s) out += (s ? ",{" : "{") + frames() + "}";
      out += "]},";
    } else {
      out += R"({"name":"t","crashed":true,)" + frames() + "},";
    }
  }
  out.pop_back();
  return out + R"(],"fingerprint":{"hash":"h","frames":3}})";
}

TEST(LoadtestEvents, ExpectDrawsTheEventMakeWrote) {
  const Corpus corpus = smallCorpus();
  EventGenerator generator(corpus, options());
  size_t malformed = 0, missing = 0;
  for (size_t i = 0; i < 3000; ++i) {
    const GeneratedEvent made = generator.make(i);
    const GeneratedEvent expected = generator.expect(i);
    ASSERT_EQ(made.malformed, expected.malformed) << i;
    ASSERT_EQ(made.stack_sizes, expected.stack_sizes) << i;
    ASSERT_EQ(made.raw_frames, expected.raw_frames) << i;
    ASSERT_EQ(made.frames.size(), expected.frames.size()) << i;
    for (size_t f = 0; f < made.frames.size(); ++f) {
      ASSERT_EQ(made.frames[f].data(), expected.frames[f].data()) << i;
      ASSERT_EQ(made.frames[f].size(), expected.frames[f].size()) << i;
      missing += made.frames[f].empty();
    }
    EXPECT_TRUE(expected.json.empty() && expected.key.empty());
    malformed += made.malformed;
  }
  EXPECT_GT(malformed, 50u);  // the shares asked for, roughly: both paths were taken
  EXPECT_GT(missing, 500u);
}

TEST(LoadtestEvents, TextAndExpectationDescribeTheSameStacks) {
  const Corpus corpus = smallCorpus();
  EventGenerator generator(corpus, options());
  simdjson::dom::parser parser;
  for (size_t i = 0; i < 3000; ++i) {
    const GeneratedEvent event = generator.make(i);
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(event.json).get(root), simdjson::SUCCESS) << event.json;
    EXPECT_EQ(std::string(root["event_id"].get_string().value()), "lt" + std::to_string(i) + "-r");
    if (event.malformed) {
      EXPECT_TRUE(root["threads"].is_object());
      continue;
    }
    // One line of stack text per expected raw frame (a Java crash's header line aside).
    std::vector<size_t> lines;
    for (simdjson::dom::element thread : root["threads"].get_array()) {
      simdjson::dom::array samples;
      std::vector<std::string_view> stacks;
      if (!thread["samples"].get_array().get(samples)) {
        for (simdjson::dom::element sample : samples) stacks.push_back(sample["stack"].get_string().value());
      } else {
        stacks.push_back(thread["stack"].get_string().value());
      }
      for (std::string_view stack : stacks) {
        size_t count = 1;
        for (char c : stack) count += c == '\n';
        if (stack.starts_with("java.lang.IllegalStateException")) --count;
        lines.push_back(count);
      }
    }
    ASSERT_EQ(lines.size(), event.stack_sizes.size()) << event.json;
    for (size_t s = 0; s < lines.size(); ++s) EXPECT_EQ(lines[s], event.stack_sizes[s]) << event.json;
  }
}

TEST(LoadtestEvents, CheckRestoredAcceptsTheRightOutputAndCatchesWrongOnes) {
  const Corpus corpus = smallCorpus();
  EventGenerator generator(corpus, options());
  size_t checked = 0;
  for (size_t i = 0; i < 500; ++i) {
    const GeneratedEvent event = generator.expect(i);
    if (event.malformed) continue;
    const std::string right = restoredFor(generator.make(i));
    ASSERT_EQ(checkRestored(right, event), "") << right;
    ++checked;

    // A function renamed.
    std::string wrong = right;
    const size_t function = wrong.find(R"("function":")");
    if (function != std::string::npos) {
      wrong.insert(function + 12, "X");
      EXPECT_NE(checkRestored(wrong, event), "") << wrong;
    }
    // A missing frame reported as restored, or the other way round.
    wrong = right;
    if (size_t at = wrong.find("missing_symbols"); at != std::string::npos) {
      wrong.replace(at, 15, "symbolicated");
      EXPECT_NE(checkRestored(wrong, event), "") << wrong;
    }
    // The last frame of the first stack dropped, or repeated.
    const size_t end = right.find("}]");
    const size_t last = right.rfind(",{", end);
    const size_t first = right.find("[{", right.find("\"frames\""));
    if (last != std::string::npos && last > first) {
      wrong = right.substr(0, last) + right.substr(end + 1);
      EXPECT_NE(checkRestored(wrong, event), "") << wrong;
    }
    wrong = right.substr(0, end + 1) + right.substr(right.rfind('{', end), end + 1 - right.rfind('{', end)) +
            right.substr(end + 1);
    wrong.insert(end + 1, ",");
    EXPECT_NE(checkRestored(wrong, event), "") << wrong;
    // Not JSON: cut short, or a number no parser accepts in a field the check does not compare.
    EXPECT_NE(checkRestored(right.substr(0, right.size() / 2), event), "");
    if (const size_t line = right.find(R"("line":7)"); line != std::string::npos) {
      wrong = right;
      wrong.replace(line, 8, R"("line":07)");
      EXPECT_EQ(checkRestored(wrong, event).rfind("output is not JSON", 0), 0u) << wrong;
    }
  }
  EXPECT_GT(checked, 400u);
}

}  // namespace
}  // namespace restack::loadtest
