#include "loadtest/worker/events.h"

#include <simdjson.h>

#include <charconv>
#include <cinttypes>
#include <cstdio>

#include "formats/common/json_text.h"

namespace restack::loadtest {
namespace {

std::string hexId(std::mt19937_64& rng, size_t bytes) {
  std::string out;
  char buffer[3];
  for (size_t i = 0; i < bytes; ++i) {
    std::snprintf(buffer, sizeof buffer, "%02x", static_cast<unsigned>(rng() & 0xff));
    out += buffer;
  }
  return out;
}

std::string uuidOf(std::mt19937_64& rng) {
  std::string hex = hexId(rng, 16);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" +
         hex.substr(20);
}

enum Shape { kIos, kNative, kJava, kAnr, kLag, kWeb, kRn, kShapes };
const char* const kShapeNames[kShapes] = {"ios", "native", "java", "anr", "lag", "web", "rn"};

struct StackText {
  std::string text;
  ExpectedStack expected;
};

}  // namespace

bool parseMix(const std::string& text, Mix& mix, std::string& error) {
  double* fields[kShapes] = {&mix.ios, &mix.native, &mix.java, &mix.anr, &mix.lag, &mix.web, &mix.rn};
  for (double* field : fields) *field = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string_view entry(text.data() + start, end - start);
    size_t eq = entry.find('=');
    bool known = false;
    for (int s = 0; s < kShapes && eq != std::string_view::npos; ++s) {
      if (entry.substr(0, eq) != kShapeNames[s]) continue;
      std::string value(entry.substr(eq + 1));
      char* parsed_end = nullptr;
      *fields[s] = std::strtod(value.c_str(), &parsed_end);
      known = parsed_end != value.c_str() && *parsed_end == '\0' && *fields[s] >= 0;
    }
    if (!known) {
      error = "--mix: \"" + std::string(entry) +
              "\" is not <shape>=<weight> with a shape of ios, native, java, anr, lag, web, rn";
      return false;
    }
    start = end + 1;
  }
  return true;
}

EventGenerator::EventGenerator(const Corpus& corpus, EventOptions options)
    : corpus_(corpus), options_(std::move(options)) {
  const Mix& m = options_.mix;
  double total = 0;
  for (double weight : {m.ios, m.native, m.java, m.anr, m.lag, m.web, m.rn}) cumulative_.push_back(total += weight);
}

GeneratedEvent EventGenerator::make(size_t index) const {
  std::mt19937_64 rng(options_.seed * 0x9E3779B97F4A7C15ULL ^ (index + 1) * 0xBF58476D1CE4E5B9ULL);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto frameCount = [&] {
    double u = unit(rng);
    return options_.min_frames + static_cast<int>((options_.max_frames - options_.min_frames) * u * u + 0.5);
  };
  const CorpusBuild& build = corpus_.builds[pick(corpus_.builds.size())];
  GeneratedEvent event;
  event.key = corpus_.app + ":" + build.build_id;
  const std::string event_id = "lt" + std::to_string(index) + "-" + options_.run_id;

  double roll = unit(rng) * cumulative_.back();
  int shape = 0;
  while (shape + 1 < kShapes && roll >= cumulative_[shape]) ++shape;
  event.malformed = unit(rng) < options_.malformed_share;

  auto nativeStack = [&](bool ios) {
    StackText stack;
    const auto& pool = ios ? corpus_.ios_pool : corpus_.android_pool;
    const auto& starts = ios ? build.ios_starts : build.android_starts;
    const uint64_t load = uint64_t{0x104a14000} + (pick(64) << 14);
    char line[256];
    int frames = frameCount();
    for (int i = 0; i < frames; ++i) {
      // Every frame but the first holds a return address: the instruction after the call, so the
      // lookup (address - 1) lands in the instruction whose restoration the corpus knows.
      const uint64_t after = i == 0 ? 0 : 4;
      if (unit(rng) < options_.missing_share) {
        const uint64_t offset = 0x1000 + pick(1 << 20) * 4;
        if (ios) {
          std::snprintf(line, sizeof line, "UIKitCore  0x%016" PRIx64 " 0x1a8d2c000 + %" PRIu64 " [%s]",
                        uint64_t{0x1a8d2c000} + offset, offset, uuidOf(rng).c_str());
        } else {
          std::snprintf(line, sizeof line, "pc 0x%016" PRIx64 " libvendor.so [arm64-v8a::%s]", offset,
                        hexId(rng, 20).c_str());
        }
        stack.expected.emplace_back();
      } else {
        const NativeFrame& frame = pool[pick(pool.size())];
        const uint64_t address = starts[frame.function] + frame.offset + after;
        if (ios) {
          std::snprintf(line, sizeof line, "CodecKit  0x%016" PRIx64 " 0x%" PRIx64 " + %" PRIu64 " [%s]",
                        load + address, load, address, build.ios_uuid.c_str());
        } else {
          std::snprintf(line, sizeof line, "pc 0x%016" PRIx64 " libcodec.so [arm64-v8a::%s]", address,
                        build.android_build_id.c_str());
        }
        stack.expected.push_back(frame.names);
      }
      if (i) stack.text += '\n';
      stack.text += line;
    }
    return stack;
  };
  auto javaStack = [&](std::string header) {
    StackText stack;
    stack.text = std::move(header);
    int frames = frameCount();
    for (int i = 0; i < frames; ++i) {
      const JavaFrame& frame = corpus_.java_pool[pick(corpus_.java_pool.size())];
      if (!stack.text.empty()) stack.text += '\n';
      stack.text += "\tat " + renamedJavaClass(frame.cls, build.java_suffix) + "." +
                    renamedJava(frame.method, build.java_suffix) + "(" + frame.file + ":" + std::to_string(frame.line) +
                    ")";
      stack.expected.push_back(frame.names);
    }
    return stack;
  };
  auto jsStack = [&](bool rn) {
    StackText stack;
    const auto& pool = rn ? build.rn_frames : build.web_frames;
    int frames = frameCount();
    for (int i = 0; i < frames; ++i) {
      const JsFrame& frame = pool[pick(pool.size())];
      if (i) stack.text += '\n';
      const std::string position = ":" + std::to_string(frame.line) + ":" + std::to_string(frame.column);
      stack.text += rn ? frame.minified + "@" + build.rn_name + position
                       : "    at " + frame.minified + " (" + build.web_url + position + ")";
      stack.expected.push_back({frame.expected});
    }
    return stack;
  };

  static const char* const kKinds[kShapes] = {"crash", "crash", "crash", "anr", "lag", "error", "crash"};
  static const char* const kPlatforms[kShapes] = {"ios",     "android", "android",     "android",
                                                  "android", "web",     "react_native"};
  static const char* const kTypes[kShapes] = {
      "EXC_BAD_ACCESS", "SIGSEGV", "java.lang.IllegalStateException", "ANR", "Lag", "TypeError", "TypeError"};
  std::string& out = event.json;
  out.reserve(4096);
  out += "{\"event_id\":";
  appendJsonString(out, event_id);
  out += ",\"kind\":\"";
  out += kKinds[shape];
  out += "\",\"platform\":\"";
  out += kPlatforms[shape];
  out += "\",\"app\":";
  appendJsonString(out, corpus_.app);
  out += ",\"build_id\":";
  appendJsonString(out, build.build_id);
  out += ",\"timestamp_ms\":" + std::to_string(1700000000000ULL + index);
  out += ",\"exception\":{\"type\":\"";
  out += kTypes[shape];
  out += "\",\"message\":\"load test event " + std::to_string(index) + "\"}";
  if (event.malformed) {
    // Unreadable on purpose (threads is not an array): it must reach the DLQ.
    out += ",\"threads\":{\"name\":\"main\"}}";
    return event;
  }
  out += ",\"threads\":[";
  auto addThread = [&](const std::string& name, bool crashed, const StackText& stack) {
    if (out.back() == '}') out += ',';
    out += "{\"name\":";
    appendJsonString(out, name);
    out += crashed ? ",\"crashed\":true" : ",\"crashed\":false";
    out += ",\"stack\":";
    appendJsonString(out, stack.text);
    out += '}';
    event.raw_frames += stack.expected.size();
    event.stacks.push_back(stack.expected);
  };
  switch (shape) {
    case kIos:
      addThread("main", true, nativeStack(true));
      break;
    case kNative:
      addThread("RenderThread", true, nativeStack(false));
      break;
    case kJava:
      addThread("main", true, javaStack("java.lang.IllegalStateException: load test event"));
      break;
    case kAnr:
      for (int t = 0; t < options_.anr_threads; ++t) {
        addThread(t == 0 ? "main" : "worker-" + std::to_string(t), t == 0, javaStack(""));
      }
      break;
    case kLag: {
      out += "{\"name\":\"main\",\"samples\":[";
      for (int s = 0; s < options_.lag_samples; ++s) {
        StackText stack = javaStack("");
        if (s) out += ',';
        out += "{\"timestamp_ms\":" + std::to_string(1700000000000ULL + index + 100 * s) + ",\"stack\":";
        appendJsonString(out, stack.text);
        out += '}';
        event.raw_frames += stack.expected.size();
        event.stacks.push_back(std::move(stack.expected));
      }
      out += "]}";
      break;
    }
    case kWeb:
      addThread("main", true, jsStack(false));
      break;
    default:
      addThread("main", true, jsStack(true));
      break;
  }
  out += "],\"attributes\":{\"source\":\"restack_loadtest\"}}";
  return event;
}

size_t eventIndex(std::string_view value) {
  const std::string_view marker = "\"event_id\":\"lt";
  size_t at = value.find(marker);
  if (at == std::string_view::npos) return std::string_view::npos;
  const char* begin = value.data() + at + marker.size();
  size_t index = 0;
  auto [end, ec] = std::from_chars(begin, value.data() + value.size(), index);
  return ec == std::errc() && end != begin ? index : std::string_view::npos;
}

std::string checkRestored(std::string_view output, const GeneratedEvent& expected) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(output.data(), output.size()).get(root)) {
    return std::string("output is not JSON: ") + simdjson::error_message(error);
  }
  simdjson::dom::array threads;
  if (root["threads"].get_array().get(threads)) return "output has no threads array";
  std::vector<simdjson::dom::array> stacks;
  for (auto thread : threads) {
    simdjson::dom::array samples, frames;
    if (!thread["samples"].get_array().get(samples)) {
      for (auto sample : samples) {
        if (sample["frames"].get_array().get(frames)) return "a lag sample has no frames";
        stacks.push_back(frames);
      }
    } else if (!thread["frames"].get_array().get(frames)) {
      stacks.push_back(frames);
    } else {
      return "a thread has no frames";
    }
  }
  if (stacks.size() != expected.stacks.size()) {
    return std::to_string(stacks.size()) + " stacks out, " + std::to_string(expected.stacks.size()) + " expected";
  }
  for (size_t s = 0; s < stacks.size(); ++s) {
    std::vector<simdjson::dom::element> frames(stacks[s].begin(), stacks[s].end());
    size_t at = 0;
    for (size_t raw = 0; raw < expected.stacks[s].size(); ++raw) {
      const auto& names = expected.stacks[s][raw];
      const std::string where = "stack " + std::to_string(s) + " raw frame " + std::to_string(raw) + ": ";
      if (names.empty()) {
        std::string_view status;
        if (at >= frames.size() || frames[at]["status"].get_string().get(status) || status != "missing_symbols") {
          return where + "expected missing_symbols, got " + (at < frames.size() ? std::string(status) : "no frame");
        }
        ++at;
        continue;
      }
      for (const std::string& name : names) {
        std::string_view function, status;
        if (at >= frames.size()) return where + "expected " + name + ", the frames ended";
        (void)frames[at]["status"].get_string().get(status);
        (void)frames[at]["function"].get_string().get(function);
        if (status != "symbolicated" || function != name) {
          std::string_view raw_text;
          (void)frames[at]["raw"].get_string().get(raw_text);
          return where + "expected " + name + ", got " + std::string(function) + " (" + std::string(status) + ") for " +
                 std::string(raw_text);
        }
        ++at;
      }
    }
    if (at != frames.size()) {
      return "stack " + std::to_string(s) + ": " + std::to_string(frames.size()) + " frames out, " +
             std::to_string(at) + " expected";
    }
  }
  return "";
}

}  // namespace restack::loadtest
