#include "worker/pipeline/raw_event.h"

#include <simdjson.h>

#include <array>

#include "formats/common/platforms.h"
#include "worker/pipeline/stack_kinds.h"

namespace restack::pipeline {
namespace {

namespace od = simdjson::ondemand;

constexpr std::array<std::string_view, 4> kKinds = {"crash", "anr", "lag", "error"};

// The stack kind whose symbol-file id the event field `key` names ("pg_map_id"), if any.
const StackKind* kindNamedBy(std::string_view key) {
  for (const StackKind* kind : stackKinds()) {
    if (!kind->eventIdField().empty() && kind->eventIdField() == key) return kind;
  }
  return nullptr;
}

std::string describe(simdjson::error_code code) {
  return simdjson::error_message(code);
}

// The JSON text of any value, byte for byte as in the input (trailing whitespace trimmed).
simdjson::simdjson_result<std::string_view> rawText(od::value value) {
  od::json_type type;
  if (auto error = value.type().get(type)) return error;
  std::string_view text;
  if (type == od::json_type::object) {
    od::object object;
    if (auto error = value.get_object().get(object)) return error;
    if (auto error = object.raw_json().get(text)) return error;
  } else if (type == od::json_type::array) {
    od::array array;
    if (auto error = value.get_array().get(array)) return error;
    if (auto error = array.raw_json().get(text)) return error;
  } else {
    text = value.raw_json_token();
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

Expected<std::string> stringField(od::value value, std::string_view name) {
  std::string_view text;
  if (value.get_string().get(text)) return malformed("field '" + std::string(name) + "' must be a string");
  return std::string(text);
}

Status parseSample(od::value value, RawSample& sample) {
  od::object object;
  if (value.get_object().get(object)) return malformed("every entry of 'samples' must be an object");
  bool has_stack = false;
  for (auto field : object) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return malformed("bad key in a sample: " + describe(error));
    od::value child = field.value();
    if (key == "stack") {
      auto stack = stringField(child, "samples[].stack");
      if (!stack) return stack.error();
      sample.stack = std::move(*stack);
      has_stack = true;
    } else if (key == "frames" || key == "restored" || key == "frames_dropped") {
      // Written by Restack, as on threads.
      std::string_view ignored;
      if (auto error = rawText(child).get(ignored)) return malformed("bad value in a sample: " + describe(error));
    } else {
      if (key == "timestamp_ms") {
        uint64_t timestamp = 0;
        if (!child.get_uint64().get(timestamp)) sample.timestamp_ms = timestamp;
      }
      std::string_view text;
      if (auto error = rawText(child).get(text)) return malformed("bad value in a sample: " + describe(error));
      sample.passthrough.push_back({std::string(key), std::string(text)});
    }
  }
  if (!has_stack) return malformed("a sample has no 'stack'");
  return Status::ok();
}

Status parseThread(od::value value, RawThread& thread, size_t index) {
  const std::string where = "threads[" + std::to_string(index) + "]";
  od::object object;
  if (value.get_object().get(object)) return malformed(where + " must be an object");
  for (auto field : object) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return malformed(where + ": bad key: " + describe(error));
    od::value child = field.value();
    if (key == "stack") {
      auto stack = stringField(child, where + ".stack");
      if (!stack) return stack.error();
      thread.stack = std::move(*stack);
      thread.has_stack = true;
      continue;
    }
    if (key == "samples") {
      od::array samples;
      if (child.get_array().get(samples)) return malformed(where + ".samples must be an array");
      for (auto entry : samples) {
        od::value sample_value;
        if (auto error = entry.get(sample_value)) return malformed(where + ".samples: " + describe(error));
        RawSample sample;
        RESTACK_RETURN_IF_ERROR(parseSample(sample_value, sample));
        thread.samples.push_back(std::move(sample));
      }
      continue;
    }
    if (key == "frames" || key == "restored" || key == "frames_dropped") {
      // Written by Restack; an event restored twice must not carry two copies.
      std::string_view ignored;
      if (auto error = rawText(child).get(ignored)) return malformed(where + ": " + describe(error));
      continue;
    }
    if (key == "name") {
      std::string_view name;
      if (!child.get_string().get(name)) thread.name = std::string(name);
    } else if (key == "crashed") {
      bool crashed = false;
      if (!child.get_bool().get(crashed)) thread.crashed = crashed;
    }
    std::string_view text;
    if (auto error = rawText(child).get(text)) return malformed(where + ": bad value: " + describe(error));
    thread.passthrough.push_back({std::string(key), std::string(text)});
  }
  if (!thread.has_stack && thread.samples.empty()) return malformed(where + " has neither 'stack' nor 'samples'");
  return Status::ok();
}

Status parseException(od::value value, RawEvent& event) {
  od::object object;
  if (value.get_object().get(object)) return malformed("field 'exception' must be an object");
  event.has_exception = true;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return malformed("bad key in 'exception'");
    std::string_view text;
    if (key == "type" && !field.value().get_string().get(text))
      event.exception_type = std::string(text);
    else if (key == "message" && !field.value().get_string().get(text))
      event.exception_message = std::string(text);
  }
  return Status::ok();
}

Status parseAttributes(od::value value, RawEvent& event) {
  od::object object;
  if (value.get_object().get(object)) return Status::ok();  // passed through whatever it is
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return malformed("bad key in 'attributes'");
    std::string_view text;
    if (const StackKind* kind = kindNamedBy(key); kind && !field.value().get_string().get(text)) {
      event.symbol_ids.set(kind->name(), std::string(text));
    }
  }
  return Status::ok();
}

Status parseNested(std::string_view text, Status (*parse)(od::value, RawEvent&), RawEvent& event) {
  simdjson::padded_string padded(text);
  od::parser parser;
  od::document document;
  if (auto error = parser.iterate(padded).get(document)) return malformed(describe(error));
  od::value value;
  if (document.get_value().get(value)) {
    // A scalar document (e.g. "attributes": 3) is not an object; parse() reports that.
    return parse == parseAttributes ? Status::ok() : malformed("field 'exception' must be an object");
  }
  return parse(value, event);
}

// The hash of an earlier, not yet final fingerprint record ({"fingerprint":"…","quality":…}).
std::string provisionalFingerprint(std::string_view record) {
  simdjson::padded_string padded(record);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  std::string_view hash, quality;
  if (parser.parse(padded).get(root) || root["fingerprint"].get_string().get(hash) ||
      root["quality"].get_string().get(quality) || quality == "complete") {
    return {};
  }
  return std::string(hash);
}

}  // namespace

Expected<RawEvent> parseRawEvent(std::string_view json, const EventLimits& limits) {
  if (json.size() > limits.max_event_bytes) {
    return tooLarge("event is " + std::to_string(json.size()) + " bytes, over limits.max_event_bytes (" +
                    std::to_string(limits.max_event_bytes) + ")");
  }
  simdjson::padded_string padded(json);
  // Validate the whole document first: the on-demand pass below skips over passthrough values and
  // would not notice a malformed number inside them.
  {
    thread_local simdjson::dom::parser validator;
    simdjson::dom::element root;
    if (auto error = validator.parse(padded).get(root)) return malformed("event is not valid JSON: " + describe(error));
    if (!root.is_object()) return malformed("event must be a JSON object");
  }
  thread_local od::parser parser;
  od::document document;
  if (auto error = parser.iterate(padded).get(document))
    return malformed("event is not valid JSON: " + describe(error));
  od::object root;
  if (document.get_object().get(root)) return malformed("event must be a JSON object");

  RawEvent event;
  bool has_threads = false;
  for (auto field : root) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return malformed("bad key: " + describe(error));
    od::value value = field.value();
    if (key == "threads") {
      od::array threads;
      if (value.get_array().get(threads)) return malformed("field 'threads' must be an array");
      has_threads = true;
      size_t index = 0;
      for (auto entry : threads) {
        if (event.threads.size() >= limits.max_threads) {
          return tooLarge("event has more than limits.max_threads (" + std::to_string(limits.max_threads) +
                          ") threads");
        }
        od::value thread_value;
        if (auto error = entry.get(thread_value)) return malformed("threads: " + describe(error));
        RawThread thread;
        RESTACK_RETURN_IF_ERROR(parseThread(thread_value, thread, index++));
        event.threads.push_back(std::move(thread));
      }
      continue;
    }
    if (key == "symbolication" || key == "fingerprint") {
      std::string_view text;
      if (auto error = rawText(value).get(text)) return malformed(describe(error));
      if (key == "fingerprint") event.previous_fingerprint = provisionalFingerprint(text);
      continue;
    }
    auto required_string = [&](std::string& target) -> Status {
      auto text = stringField(value, key);
      if (!text) return text.error();
      target = std::move(*text);
      return Status::ok();
    };
    if (key == "event_id")
      RESTACK_RETURN_IF_ERROR(required_string(event.event_id));
    else if (key == "kind")
      RESTACK_RETURN_IF_ERROR(required_string(event.kind));
    else if (key == "platform")
      RESTACK_RETURN_IF_ERROR(required_string(event.platform));
    else if (key == "app")
      RESTACK_RETURN_IF_ERROR(required_string(event.app));
    else if (key == "build_id")
      RESTACK_RETURN_IF_ERROR(required_string(event.build_id));
    else if (const StackKind* kind = kindNamedBy(key)) {
      std::string id;
      RESTACK_RETURN_IF_ERROR(required_string(id));
      event.symbol_ids.set(kind->name(), std::move(id));
    } else if (key == "timestamp_ms") {
      int64_t timestamp = 0;
      if (value.get_int64().get(timestamp)) return malformed("field 'timestamp_ms' must be an integer");
      event.timestamp_ms = timestamp;
    }
    std::string_view text;
    if (auto error = rawText(value).get(text)) return malformed("field '" + std::string(key) + "': " + describe(error));
    // The on-demand cursor cannot read a value twice, so the two objects Restack looks inside are
    // re-read from their raw text.
    if (key == "exception") RESTACK_RETURN_IF_ERROR(parseNested(text, parseException, event));
    if (key == "attributes") RESTACK_RETURN_IF_ERROR(parseNested(text, parseAttributes, event));
    event.passthrough.push_back({std::string(key), std::string(text)});
  }
  if (event.app.empty()) return malformed("missing field 'app'");
  if (event.build_id.empty()) return malformed("missing field 'build_id'");
  if (event.platform.empty()) return malformed("missing field 'platform'");
  if (!isRegisteredPlatform(event.platform)) {
    return malformed("unknown platform '" + event.platform + "' (expected " + platformList() + ")");
  }
  if (!event.kind.empty()) {
    bool known_kind = false;
    for (auto k : kKinds) known_kind |= event.kind == k;
    if (!known_kind) return malformed("unknown kind '" + event.kind + "' (expected crash, anr, lag or error)");
  }
  if (!has_threads) return malformed("missing field 'threads'");
  return event;
}

}  // namespace restack::pipeline
