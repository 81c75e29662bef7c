#include "loadtest/worker/events.h"

#include <simdjson.h>

#include <cinttypes>
#include <cstdio>

#include "formats/common/decimal.h"
#include "formats/common/json_text.h"

namespace restack::loadtest {
namespace {

// std::uniform_real_distribution<double>(0, 1) over std::mt19937_64, computed as libstdc++'s
// generate_canonical does (one draw times 2^-64, kept below 1) and so drawing the same events as
// before, without the logarithm it takes on every call.
double unitOf(std::mt19937_64& rng) {
  const double x = static_cast<double>(rng()) * 0x1p-64;
  return x >= 1.0 ? std::nextafter(1.0, 0.0) : x;
}

void appendHex(std::string& out, uint64_t value, int min_digits) {
  char digits[16];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[value & 0xf];
    value >>= 4;
  } while (value != 0);
  for (int i = n; i < min_digits; ++i) out += '0';
  while (n > 0) out += digits[--n];
}

// `bytes` random bytes in lower-case hex ("%02x" each), appended to `out` when it is not null.
void drawHex(std::mt19937_64& rng, size_t bytes, std::string* out) {
  for (size_t i = 0; i < bytes; ++i) {
    const uint64_t byte = rng() & 0xff;
    if (out) appendHex(*out, byte, 2);
  }
}

// A random UUID's 16 bytes as 8-4-4-4-12 hex digits, appended to `out` when it is not null.
void drawUuid(std::mt19937_64& rng, std::string* out) {
  static constexpr size_t kGroups[] = {4, 2, 2, 2, 6};
  for (size_t group : kGroups) {
    if (out && group != 4) *out += '-';
    drawHex(rng, group, out);
  }
}

// `text` as inside a JSON string: escaped, without the quotes.
std::string jsonBody(std::string_view text) {
  std::string body(jsonStringRoom(text.size()), '\0');
  body.resize(static_cast<size_t>(writeJsonStringBody(body.data(), text) - body.data()));
  return body;
}

enum Shape { kIos, kNative, kJava, kAnr, kLag, kWeb, kRn, kShapes };
const char* const kShapeNames[kShapes] = {"ios", "native", "java", "anr", "lag", "web", "rn"};

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
  for (const CorpusBuild& build : corpus_.builds) {
    BuildText& text = text_.emplace_back();
    text.ios_image = jsonBody(" [" + build.ios_uuid + "]");
    text.android_image = jsonBody(" libcodec.so [arm64-v8a::" + build.android_build_id + "]");
    for (const JavaFrame& frame : corpus_.java_pool) {
      text.java.push_back(jsonBody("\tat " + renamedJavaClass(frame.cls, build.java_suffix) + "." +
                                   renamedJava(frame.method, build.java_suffix) + "(" + frame.file + ":" +
                                   std::to_string(frame.line) + ")"));
    }
    for (const JsFrame& frame : build.web_frames) {
      text.web.push_back(jsonBody("    at " + frame.minified + " (" + build.web_url + ":" + std::to_string(frame.line) +
                                  ":" + std::to_string(frame.column) + ")"));
    }
    for (const JsFrame& frame : build.rn_frames) {
      text.rn.push_back(jsonBody(frame.minified + "@" + build.rn_name + ":" + std::to_string(frame.line) + ":" +
                                 std::to_string(frame.column)));
    }
  }
}

GeneratedEvent EventGenerator::make(size_t index) const {
  return generate(index, true);
}

GeneratedEvent EventGenerator::expect(size_t index) const {
  return generate(index, false);
}

// Every random draw happens whether or not `text` is asked for, in the same order, so that make
// and expect describe the same event.
GeneratedEvent EventGenerator::generate(size_t index, bool text) const {
  std::mt19937_64 rng(options_.seed * 0x9E3779B97F4A7C15ULL ^ (index + 1) * 0xBF58476D1CE4E5B9ULL);
  auto unit = [&] { return unitOf(rng); };
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto frameCount = [&] {
    double u = unit();
    return options_.min_frames + static_cast<int>((options_.max_frames - options_.min_frames) * u * u + 0.5);
  };
  const size_t build_index = pick(corpus_.builds.size());
  const CorpusBuild& build = corpus_.builds[build_index];
  const BuildText& lines = text_[build_index];
  GeneratedEvent event;

  double roll = unit() * cumulative_.back();
  int shape = 0;
  while (shape + 1 < kShapes && roll >= cumulative_[shape]) ++shape;
  event.malformed = unit() < options_.malformed_share;

  // The stacks write their text (escaped, between the quotes of "stack") straight into the event.
  std::string& out = event.json;
  std::string* const text_out = text ? &out : nullptr;
  auto beginStack = [&] { event.stack_sizes.push_back(0); };
  auto expectFrame = [&](ExpectedFrame names) {
    event.frames.push_back(names);
    ++event.stack_sizes.back();
    ++event.raw_frames;
  };
  auto nativeStack = [&](bool ios) {
    beginStack();
    const auto& pool = ios ? corpus_.ios_pool : corpus_.android_pool;
    const auto& starts = ios ? build.ios_starts : build.android_starts;
    const uint64_t load = uint64_t{0x104a14000} + (pick(64) << 14);
    int frames = frameCount();
    for (int i = 0; i < frames; ++i) {
      // Every frame but the first holds a return address: the instruction after the call, so the
      // lookup (address - 1) lands in the instruction whose restoration the corpus knows.
      const uint64_t after = i == 0 ? 0 : 4;
      if (text && i) out += "\\n";
      if (unit() < options_.missing_share) {
        const uint64_t offset = 0x1000 + pick(1 << 20) * 4;
        if (ios) {
          // "UIKitCore  0x%016x 0x1a8d2c000 + %u [<uuid>]"
          if (text) {
            out += "UIKitCore  0x";
            appendHex(out, uint64_t{0x1a8d2c000} + offset, 16);
            out += " 0x1a8d2c000 + ";
            appendDecimal(out, offset);
            out += " [";
          }
          drawUuid(rng, text_out);
          if (text) out += ']';
        } else {
          // "pc 0x%016x libvendor.so [arm64-v8a::<20 bytes hex>]"
          if (text) {
            out += "pc 0x";
            appendHex(out, offset, 16);
            out += " libvendor.so [arm64-v8a::";
          }
          drawHex(rng, 20, text_out);
          if (text) out += ']';
        }
        expectFrame({});
      } else {
        const NativeFrame& frame = pool[pick(pool.size())];
        const uint64_t address = starts[frame.function] + frame.offset + after;
        if (text && ios) {
          // "CodecKit  0x%016x 0x%x + %u [<uuid>]"
          out += "CodecKit  0x";
          appendHex(out, load + address, 16);
          out += " 0x";
          appendHex(out, load, 1);
          out += " + ";
          appendDecimal(out, address);
          out += lines.ios_image;
        } else if (text) {
          // "pc 0x%016x libcodec.so [arm64-v8a::<build id>]"
          out += "pc 0x";
          appendHex(out, address, 16);
          out += lines.android_image;
        }
        expectFrame(frame.names);
      }
    }
  };
  auto javaStack = [&](std::string_view header) {
    beginStack();
    bool empty = header.empty();
    if (text) out += jsonBody(header);
    int frames = frameCount();
    for (int i = 0; i < frames; ++i) {
      const size_t at = pick(corpus_.java_pool.size());
      if (text) {
        if (!empty) out += "\\n";
        out += lines.java[at];
      }
      empty = false;
      expectFrame(corpus_.java_pool[at].names);
    }
  };
  auto jsStack = [&](bool rn) {
    beginStack();
    const auto& pool = rn ? build.rn_frames : build.web_frames;
    const auto& pool_lines = rn ? lines.rn : lines.web;
    int frames = frameCount();
    for (int i = 0; i < frames; ++i) {
      const size_t at = pick(pool.size());
      if (text) {
        if (i) out += "\\n";
        out += pool_lines[at];
      }
      expectFrame(ExpectedFrame(&pool[at].expected, 1));
    }
  };

  static const char* const kKinds[kShapes] = {"crash", "crash", "crash", "anr", "lag", "error", "crash"};
  static const char* const kPlatforms[kShapes] = {"ios",     "android", "android",     "android",
                                                  "android", "web",     "react_native"};
  static const char* const kTypes[kShapes] = {
      "EXC_BAD_ACCESS", "SIGSEGV", "java.lang.IllegalStateException", "ANR", "Lag", "TypeError", "TypeError"};
  if (text) {
    event.key = corpus_.app + ":" + build.build_id;
    out.reserve(8192);
    out += "{\"event_id\":\"lt";
    appendDecimal(out, index);
    out += '-';
    out += jsonBody(options_.run_id);
    out += "\",\"kind\":\"";
    out += kKinds[shape];
    out += "\",\"platform\":\"";
    out += kPlatforms[shape];
    out += "\",\"app\":";
    appendJsonString(out, corpus_.app);
    out += ",\"build_id\":";
    appendJsonString(out, build.build_id);
    out += ",\"timestamp_ms\":";
    appendDecimal(out, 1700000000000ULL + index);
    out += ",\"exception\":{\"type\":\"";
    out += kTypes[shape];
    out += "\",\"message\":\"load test event ";
    appendDecimal(out, index);
    out += "\"}";
  }
  if (event.malformed) {
    // Unreadable on purpose (threads is not an array): it must reach the DLQ.
    if (text) out += ",\"threads\":{\"name\":\"main\"}}";
    return event;
  }
  if (text) out += ",\"threads\":[";
  // A thread's object around its stack; `first` says whether a comma comes before it.
  auto thread = [&](bool first, std::string_view name, bool crashed, auto&& stack) {
    if (text) {
      if (!first) out += ',';
      out += "{\"name\":";
      appendJsonString(out, name);
      out += crashed ? ",\"crashed\":true" : ",\"crashed\":false";
      out += ",\"stack\":\"";
    }
    stack();
    if (text) out += "\"}";
  };
  switch (shape) {
    case kIos:
      thread(true, "main", true, [&] { nativeStack(true); });
      break;
    case kNative:
      thread(true, "RenderThread", true, [&] { nativeStack(false); });
      break;
    case kJava:
      thread(true, "main", true, [&] { javaStack("java.lang.IllegalStateException: load test event"); });
      break;
    case kAnr:
      for (int t = 0; t < options_.anr_threads; ++t) {
        thread(t == 0, t == 0 ? "main" : "worker-" + std::to_string(t), t == 0, [&] { javaStack(""); });
      }
      break;
    case kLag: {
      if (text) out += "{\"name\":\"main\",\"samples\":[";
      for (int s = 0; s < options_.lag_samples; ++s) {
        if (text) {
          if (s) out += ',';
          out += "{\"timestamp_ms\":";
          appendDecimal(out, 1700000000000ULL + index + 100 * s);
          out += ",\"stack\":\"";
        }
        javaStack("");
        if (text) out += "\"}";
      }
      if (text) out += "]}";
      break;
    }
    case kWeb:
      thread(true, "main", true, [&] { jsStack(false); });
      break;
    default:
      thread(true, "main", true, [&] { jsStack(true); });
      break;
  }
  if (text) out += "],\"attributes\":{\"source\":\"restack_loadtest\"}}";
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
  thread_local std::vector<simdjson::dom::array> stacks;
  stacks.clear();
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
  if (stacks.size() != expected.stack_sizes.size()) {
    return std::to_string(stacks.size()) + " stacks out, " + std::to_string(expected.stack_sizes.size()) + " expected";
  }
  const ExpectedFrame* raw_frame = expected.frames.data();
  for (size_t s = 0; s < stacks.size(); ++s) {
    auto frame = stacks[s].begin();
    const auto frames_end = stacks[s].end();
    size_t at = 0;  // frames out so far
    // Built only for a difference, for a person to read.
    auto where = [&](size_t raw) { return "stack " + std::to_string(s) + " raw frame " + std::to_string(raw) + ": "; };
    for (size_t raw = 0; raw < expected.stack_sizes[s]; ++raw, ++raw_frame) {
      const ExpectedFrame names = *raw_frame;
      if (names.empty()) {
        std::string_view status;
        if (frame == frames_end || (*frame)["status"].get_string().get(status) || status != "missing_symbols") {
          return where(raw) + "expected missing_symbols, got " +
                 (frame != frames_end ? std::string(status) : "no frame");
        }
        ++frame, ++at;
        continue;
      }
      for (const std::string& name : names) {
        std::string_view function, status;
        if (frame == frames_end) return where(raw) + "expected " + name + ", the frames ended";
        simdjson::dom::object object;
        if ((*frame).get_object().get(object))
          return where(raw) + "expected " + name + ", got a frame that is no object";
        (void)object["status"].get_string().get(status);
        (void)object["function"].get_string().get(function);
        if (status != "symbolicated" || function != name) {
          std::string_view raw_text;
          (void)object["raw"].get_string().get(raw_text);
          return where(raw) + "expected " + name + ", got " + std::string(function) + " (" + std::string(status) +
                 ") for " + std::string(raw_text);
        }
        ++frame, ++at;
      }
    }
    if (frame != frames_end) {
      size_t out = at;
      for (; frame != frames_end; ++frame) ++out;
      return "stack " + std::to_string(s) + ": " + std::to_string(out) + " frames out, " + std::to_string(at) +
             " expected";
    }
  }
  return "";
}

}  // namespace restack::loadtest
