// Fuzz entry point (fuzz_entry.h).
#include "grouping/fuzz/fuzz_entry.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "grouping/exception_text.h"
#include "grouping/fingerprint.h"
#include "grouping/kinds/java_rules.h"
#include "grouping/kinds/js_rules.h"
#include "grouping/kinds/native_rules.h"
#include "grouping/normalize.h"
#include "grouping/record_json.h"
#include "grouping/rules.h"

namespace restack::grouping {
namespace {

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "grouping fuzz invariant violated: %s\n", what);
  std::abort();
}

// Checks that every bracket outside strings closes and the text ends at depth 0.
bool balancedJson(std::string_view json) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        return false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth < 0) return false;
    }
  }
  return depth == 0 && !in_string;
}

}  // namespace

void groupingFuzzOne(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  for (size_t start = 0; start <= input.size() && parts.size() < 200;) {
    size_t end = input.find('\0', start);
    if (end == std::string_view::npos) end = input.size();
    parts.push_back(input.substr(start, end - start));
    start = end + 1;
  }

  GroupingConfig config;
  config.options.in_app_frames = 3;
  auto rules = parseAppRules(parts[0], "fuzz.yaml");
  if (rules) config.apps.emplace("app", std::move(rules).value());

  static constexpr const char* kKinds[] = {"crash", "anr", "lag", "error"};
  static const FrameKindRules* const kFrameKinds[] = {&unknownRules(), &nativeRules(), &javaRules(), &jsRules()};
  static constexpr const char* kPlatforms[] = {"ios", "android", "web", "react_native"};
  GroupingInput event;
  event.app = "app";
  uint8_t selector = parts.size() > 1 && !parts[1].empty() ? static_cast<uint8_t>(parts[1][0]) : 0;
  event.kind = kKinds[selector & 3];
  event.platform = kPlatforms[(selector >> 2) & 3];
  if (parts.size() > 1 && parts[1].size() > 1) {
    std::string_view rest = parts[1].substr(1);
    size_t bar = rest.find('|');
    event.exception_type = std::string(rest.substr(0, bar));
    if (bar != std::string_view::npos) event.exception_message = std::string(rest.substr(bar + 1));
  }
  event.threads.resize(2);
  event.threads[0].crashed = (selector & 0x10) != 0;
  event.threads[1].name = "main";
  for (size_t p = 2; p < parts.size(); ++p) {
    std::string_view part = parts[p];
    uint8_t bits = part.empty() ? 0 : static_cast<uint8_t>(part[0]);
    std::string_view body = part.empty() ? part : part.substr(1);
    GroupingFrame frame;
    frame.kind = kFrameKinds[bits & 3];
    // Every state; an operating-system image's missing symbols when a missing frame's text has
    // an odd length (the bits are all taken).
    constexpr FrameState kStates[] = {FrameState::kRestored, FrameState::kMissingSymbols, FrameState::kNotFound,
                                      FrameState::kUnparsed};
    frame.state = kStates[(bits >> 2) & 3];
    if (frame.state == FrameState::kMissingSymbols && body.size() % 2 == 1) {
      frame.state = FrameState::kSystemSymbolsMissing;
    }
    size_t bar = body.find('|');
    frame.function = std::string(body.substr(0, bar));
    if (bar != std::string_view::npos) {
      frame.file = std::string(body.substr(bar + 1));
      frame.module = frame.file;
    }
    if (bits & 0x40) frame.in_app = (bits & 0x80) != 0;
    switch ((bits >> 4) & 3) {
      case 0:
        event.threads[0].frames.push_back(std::move(frame));
        break;
      case 1:
        event.threads[1].frames.push_back(std::move(frame));
        break;
      case 2:
        if (event.samples.empty() || (bits & 0x80)) event.samples.emplace_back();
        event.samples.back().frames.push_back(std::move(frame));
        break;
      default:
        if (event.causes.empty()) event.causes.push_back({"a.Cause", "boom", {}});
        event.causes.back().frames.push_back(std::move(frame));
    }
  }

  // The whole input read as trace text gives the chain (exception_text.h).
  event.exceptions = readExceptionsFromText(input);
  if (event.exceptions.size() > 16) violated("more exceptions than the bound");
  Fingerprint first = computeFingerprint(event, config);
  Fingerprint second = computeFingerprint(event, config);
  if (first.hash.size() != 32) violated("hash is not 32 hex digits");
  if (first.hash != second.hash) violated("fingerprint is not deterministic");
  if (first.thread_frames.size() != event.threads.size()) violated("decisions per thread");
  const std::string json = fingerprintRecordJson(event, first);
  if (!balancedJson(json)) violated("record is not balanced JSON");
  (void)maskMessage(input, 64);
  (void)normalizeJsFile(input);
}

}  // namespace restack::grouping
