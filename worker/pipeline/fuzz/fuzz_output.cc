// Fuzz entry point (fuzz_output.h).
#include "worker/pipeline/fuzz/fuzz_output.h"

#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "worker/pipeline/event_writer.h"
#include "worker/pipeline/json_writer.h"
#include "worker/pipeline/output_record.h"
#include "worker/pipeline/stack_kinds.h"

namespace restack::pipeline {
namespace {

[[noreturn]] void violated(const char* what, std::string_view output) {
  std::fprintf(stderr, "output fuzz invariant violated: %s\noutput (%zu bytes): %.2000s\n", what, output.size(),
               std::string(output).c_str());
  std::abort();
}

void mustParse(std::string_view json, const char* what) {
  static thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json.data(), json.size()).get(root) || !root.is_object()) violated(what, json);
}

std::string jsonString(std::string_view text) {
  JsonWriter json;
  json.string(text);
  return json.take();
}

// Digits that every JSON parser reads as a 64-bit integer.
bool isSmallNumber(std::string_view text) {
  return !text.empty() && text.size() <= 18 && text[0] != '0' &&
         text.find_first_not_of("0123456789") == std::string_view::npos;
}

RestoredStack* lastStack(RawEvent& raw, RestoredEvent& restored) {
  if (raw.threads.empty()) return nullptr;
  RawThread& thread = raw.threads.back();
  RestoredThread& out = restored.threads.back();
  if (!thread.samples.empty()) return &out.samples.back();
  return thread.has_stack ? &out.stack : nullptr;
}

void addFrame(std::string_view part, RestoredStack& stack, uint8_t selector) {
  OutputFrame frame;
  std::vector<std::string_view> fields;
  for (size_t start = 0; fields.size() < 4;) {
    size_t bar = part.find('|', start);
    fields.push_back(part.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  frame.raw = fields[0];  // a view of the fuzz input, which outlives the written output
  frame.status = static_cast<FrameStatus>((selector >> 3) % 4);
  const size_t kind = (selector >> 5) % (stackKinds().size() + 1);
  frame.kind = kind < stackKinds().size() ? stackKinds()[kind] : nullptr;
  if (fields.size() > 1) frame.frame.function = std::string(fields[1]);
  if (fields.size() > 2) frame.frame.file = std::string(fields[2]);
  if (fields.size() > 3) frame.frame.module = std::string(fields[3]);
  frame.frame.line = static_cast<uint32_t>(part.size());
  if (selector & 0x80) frame.frame.in_app = (part.size() % 2) == 0;
  if (selector & 0x40) frame.frame.context_lines = ContextLines({std::string(part), std::string(fields[0])});
  if ((selector & 0x60) == 0x60) frame.alternatives = {{frame.frame}, {}};
  stack.frames.push_back(std::move(frame));
}

}  // namespace

FuzzOutcome outputFuzzOne(const uint8_t* data, size_t size) {
  if (size < 3) return FuzzOutcome::kTooShort;
  const size_t limit = 64 + 4 * ((size_t{data[0]} << 8) | data[1]);
  const size_t max_frames = 1 + data[2] % 64;
  std::string_view input(reinterpret_cast<const char*>(data) + 3, size - 3);

  RawEvent raw;
  RestoredEvent restored;
  JsonWriter record;  // a flat fingerprint record made of the same parts
  record.beginObject();
  record.key("app");
  record.string("fuzz");
  record.key("frames");
  record.beginArray();
  size_t parts = 0;
  for (size_t start = 0; start <= input.size() && parts < 20000; ++parts) {
    size_t end = input.find('\0', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view part = input.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    const uint8_t selector = static_cast<uint8_t>(part[0]);
    part.remove_prefix(1);
    record.string(part);
    switch (selector % 6) {
      case 0:  // a top-level field passed through: a string, or the text itself when it is a number
        raw.passthrough.push_back({std::string(part), isSmallNumber(part) ? std::string(part) : jsonString(part)});
        break;
      case 1: {  // a thread with a stack
        RawThread thread;
        thread.has_stack = true;
        thread.stack = std::string(part);
        if (selector & 0x40) thread.passthrough.push_back({"name", jsonString(part)});
        raw.threads.push_back(std::move(thread));
        restored.threads.emplace_back();
        break;
      }
      case 2: {  // a lag sample (on a new thread when there is none)
        if (raw.threads.empty() || (raw.threads.back().has_stack && (selector & 0x40))) {
          raw.threads.emplace_back();
          restored.threads.emplace_back();
        }
        RawSample sample;
        sample.stack = std::string(part);
        sample.passthrough.push_back({"timestamp_ms", std::to_string(part.size())});
        raw.threads.back().samples.push_back(std::move(sample));
        restored.threads.back().samples.emplace_back();
        break;
      }
      case 3:
      case 4:
        if (RestoredStack* stack = lastStack(raw, restored)) {
          addFrame(part, *stack, selector);
          ++restored.frames_total;
        }
        break;
      default:
        if (RestoredStack* stack = lastStack(raw, restored)) {
          if (!stack->restored_text.empty()) stack->restored_text.push_back('\n');
          stack->restored_text.append(part);
        }
        break;
    }
  }
  record.endArray();
  record.key("title");
  record.string(input);
  record.endObject();

  // The fingerprint record, cut to its budget.
  const size_t budget = std::min<size_t>(64 * 1024, limit / 4);
  auto fitted = fitFingerprintRecord(record.text(), budget);
  if (fitted) {
    if (fitted->size() > budget) violated("fingerprint record over its budget", *fitted);
    mustParse(*fitted, "fingerprint record is not a JSON object");
  }
  const std::string fingerprint = fitted ? *fitted : std::string(R"({"app":"fuzz"})");

  // The whole event, then the event within the limit.
  const std::string whole = *writeRestoredEvent(raw, restored, fingerprint, OutputShape{});
  mustParse(whole, "whole event is not a JSON object");
  auto within = writeRestoredEventWithin(raw, restored, fingerprint, limit, max_frames);
  FuzzOutcome outcome = !within            ? FuzzOutcome::kRefused
                        : *within == whole ? FuzzOutcome::kWhole
                                           : FuzzOutcome::kCutDown;
  if (within) {
    if (within->size() > limit) violated("event over limits.max_output_bytes", *within);
    if (whole.size() <= limit && *within != whole) violated("an event that fits was cut", *within);
    mustParse(*within, "event within the limit is not a JSON object");
  } else {
    OutputShape smallest;
    smallest.restored_text = false;
    smallest.frames_per_stack = 1;
    smallest.max_output_bytes = limit;  // named in the marker: its digits count
    const std::string minimal = *writeRestoredEvent(raw, restored, fingerprint, smallest);
    if (minimal.size() <= limit) violated("event refused although its smallest shape fits", minimal);
  }

  // The DLQ copy of the input.
  OutputRecord dlq = deadLetterRecord(input.substr(0, input.find('\0')), input, tooLarge(std::string(input)), limit);
  if (dlq.value.size() > limit || input.substr(0, dlq.value.size()) != dlq.value) {
    violated("DLQ copy is not a prefix within the limit", dlq.value);
  }
  if (dlq.key.size() > kMaxKeyBytes) violated("DLQ key too long", dlq.key);
  for (const auto& [name, value] : dlq.headers) {
    if (value.size() > kMaxHeaderValueBytes) violated("DLQ header too long", value);
  }
  return outcome;
}

}  // namespace restack::pipeline
