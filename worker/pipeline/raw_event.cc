#include "worker/pipeline/raw_event.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

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

// The JSON text of a value the walk has read, byte for byte as in the input: from its first byte to
// the next token, trailing whitespace trimmed.
std::string_view trimmedText(const char* begin, const char* end) {
  while (end > begin && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\r' || end[-1] == '\t')) --end;
  return {begin, static_cast<size_t>(end - begin)};
}

// The text of an object or array the walk has read to its closing bracket, from `token` (its first
// byte): the cursor stands on the next token (a value is never last).
simdjson::simdjson_result<std::string_view> containerText(std::string_view token, od::value value) {
  const char* end = nullptr;
  if (auto error = value.current_location().get(end)) return error;
  return trimmedText(token.data(), end);
}

// The text of a scalar already read by a getter that checked it (get_string, get_int64, ...).
std::string_view scalarText(od::value value) {
  const std::string_view token = value.raw_json_token();
  return trimmedText(token.data(), token.data() + token.size());
}

// Checks every byte of a value the walk does not otherwise read (each number, atom, string and key in
// it, as a full parse would) and returns its JSON text. The on-demand cursor would skip such a value
// unread; checking it here is what lets the event be parsed once instead of validated by a second,
// full parse first.
simdjson::simdjson_result<std::string_view> checkedText(od::value value, size_t depth = 0) {
  const std::string_view token = value.raw_json_token();
  od::json_type type;
  if (auto error = value.type().get(type)) return error;
  switch (type) {
    case od::json_type::object:
    case od::json_type::array: {
      if (depth >= simdjson::DEFAULT_MAX_DEPTH) return simdjson::DEPTH_ERROR;
      std::string_view ignored;
      if (type == od::json_type::object) {
        od::object object;
        if (auto error = value.get_object().get(object)) return error;
        for (auto field : object) {
          od::value child;
          if (auto error = field.unescaped_key().get(ignored)) return error;
          if (auto error = field.value().get(child)) return error;
          if (auto error = checkedText(child, depth + 1).get(ignored)) return error;
        }
      } else {
        od::array array;
        if (auto error = value.get_array().get(array)) return error;
        for (auto entry : array) {
          od::value child;
          if (auto error = entry.get(child)) return error;
          if (auto error = checkedText(child, depth + 1).get(ignored)) return error;
        }
      }
      return containerText(token, value);
    }
    case od::json_type::string: {
      std::string_view text;
      if (auto error = value.get_string().get(text)) return error;
      break;
    }
    case od::json_type::number: {
      od::number number;
      if (auto error = value.get_number().get(number)) return error;
      break;
    }
    case od::json_type::boolean: {
      bool flag = false;
      if (auto error = value.get_bool().get(flag)) return error;
      break;
    }
    case od::json_type::null: {
      bool null = false;
      if (auto error = value.is_null().get(null)) return error;
      if (!null) return simdjson::N_ATOM_ERROR;
      break;
    }
  }
  return trimmedText(token.data(), token.data() + token.size());
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
    od::value child;
    if (auto error = field.value().get(child)) return malformed("bad value in a sample: " + describe(error));
    if (key == "stack") {
      auto stack = stringField(child, "samples[].stack");
      if (!stack) return stack.error();
      sample.stack = std::move(*stack);
      has_stack = true;
    } else if (key == "frames" || key == "restored" || key == "frames_dropped") {
      // Written by Restack, as on threads.
      std::string_view ignored;
      if (auto error = checkedText(child).get(ignored)) return malformed("bad value in a sample: " + describe(error));
    } else {
      std::string_view text;
      uint64_t timestamp = 0;
      if (key == "timestamp_ms" && !child.get_uint64().get(timestamp)) {
        sample.timestamp_ms = timestamp;
        text = scalarText(child);
      } else if (auto error = checkedText(child).get(text)) {
        return malformed("bad value in a sample: " + describe(error));
      }
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
    od::value child;
    if (auto error = field.value().get(child)) return malformed(where + ": bad value: " + describe(error));
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
      if (auto error = checkedText(child).get(ignored)) return malformed(where + ": " + describe(error));
      continue;
    }
    std::string_view text;
    std::string_view name;
    bool crashed = false;
    if (key == "name" && !child.get_string().get(name)) {
      thread.name = std::string(name);
      text = scalarText(child);
    } else if (key == "crashed" && !child.get_bool().get(crashed)) {
      thread.crashed = crashed;
      text = scalarText(child);
    } else if (auto error = checkedText(child).get(text)) {
      return malformed(where + ": bad value: " + describe(error));
    }
    thread.passthrough.push_back({std::string(key), std::string(text)});
  }
  if (!thread.has_stack && thread.samples.empty()) return malformed(where + " has neither 'stack' nor 'samples'");
  return Status::ok();
}

// "exception": its type and message are read, every other field checked; returns its JSON text.
Expected<std::string_view> parseException(od::value value, RawEvent& event) {
  const std::string_view token = value.raw_json_token();
  od::object object;
  if (value.get_object().get(object)) {
    return malformed("field 'exception' must be an object");
  }
  event.has_exception = true;
  for (auto field : object) {
    std::string_view key, text;
    od::value child;
    if (field.unescaped_key().get(key) || field.value().get(child)) return malformed("bad key in 'exception'");
    if (key == "type" && !child.get_string().get(text)) {
      event.exception_type = std::string(text);
    } else if (key == "message" && !child.get_string().get(text)) {
      event.exception_message = std::string(text);
    } else if (auto error = checkedText(child).get(text)) {
      return malformed("field 'exception': " + describe(error));
    }
  }
  std::string_view text;
  if (auto error = containerText(token, value).get(text)) return malformed("field 'exception': " + describe(error));
  return text;
}

// "attributes": the symbol-file ids in it are read, everything else checked; returns its JSON text,
// whatever it is.
Expected<std::string_view> parseAttributes(od::value value, RawEvent& event) {
  const std::string_view token = value.raw_json_token();
  od::json_type type;
  od::object object;
  if (value.type().get(type) || type != od::json_type::object || value.get_object().get(object)) {
    std::string_view text;
    if (auto error = checkedText(value).get(text)) return malformed("field 'attributes': " + describe(error));
    return text;
  }
  for (auto field : object) {
    std::string_view key, text;
    od::value child;
    if (field.unescaped_key().get(key) || field.value().get(child)) return malformed("bad key in 'attributes'");
    if (const StackKind* kind = kindNamedBy(key); kind && !child.get_string().get(text)) {
      event.symbol_ids.set(kind->name(), std::string(text));
    } else if (auto error = checkedText(child).get(text)) {
      return malformed("field 'attributes': " + describe(error));
    }
  }
  std::string_view text;
  if (auto error = containerText(token, value).get(text)) return malformed("field 'attributes': " + describe(error));
  return text;
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

// Copies of the events this thread reads, with the padding simdjson reads past the end: one buffer
// per thread, grown to the largest event (at most limits.max_event_bytes), instead of an allocation
// per event.
class PaddedCopy {
 public:
  const char* fill(std::string_view json) {
    const size_t needed = json.size() + simdjson::SIMDJSON_PADDING;
    if (needed > capacity_) {
      capacity_ = std::max(needed, capacity_ + capacity_ / 2);
      data_ = std::make_unique<char[]>(capacity_);
    }
    std::memcpy(data_.get(), json.data(), json.size());
    std::memset(data_.get() + json.size(), 0, simdjson::SIMDJSON_PADDING);
    return data_.get();
  }
  size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
};

// The event in one on-demand pass. Every value is either read by a getter that checks it or checked
// by checkedText, so an event this accepts is valid JSON; the reason it gives for one it refuses may
// be a consequence of the text not being JSON at all, which parseRawEvent sorts out.
Expected<RawEvent> walkEvent(const char* data, size_t size, size_t capacity, const EventLimits& limits) {
  thread_local od::parser parser;
  od::document document;
  if (auto error = parser.iterate(data, size, capacity).get(document)) {
    return malformed("event is not valid JSON: " + describe(error));
  }
  od::object root;
  if (document.get_object().get(root)) return malformed("event must be a JSON object");

  RawEvent event;
  bool has_threads = false;
  for (auto field : root) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return malformed("bad key: " + describe(error));
    od::value value;
    if (auto error = field.value().get(value)) return malformed("bad value: " + describe(error));
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
      if (auto error = checkedText(value).get(text)) return malformed(describe(error));
      if (key == "fingerprint") event.previous_fingerprint = provisionalFingerprint(text);
      continue;
    }
    auto required_string = [&](std::string& target) -> Status {
      auto text = stringField(value, key);
      if (!text) return text.error();
      target = std::move(*text);
      return Status::ok();
    };
    std::string_view text;
    if (key == "event_id" || key == "kind" || key == "platform" || key == "app" || key == "build_id") {
      std::string& target = key == "event_id"   ? event.event_id
                            : key == "kind"     ? event.kind
                            : key == "platform" ? event.platform
                            : key == "app"      ? event.app
                                                : event.build_id;
      RESTACK_RETURN_IF_ERROR(required_string(target));
      text = scalarText(value);
    } else if (const StackKind* kind = kindNamedBy(key)) {
      std::string id;
      RESTACK_RETURN_IF_ERROR(required_string(id));
      event.symbol_ids.set(kind->name(), std::move(id));
      text = scalarText(value);
    } else if (key == "timestamp_ms") {
      int64_t timestamp = 0;
      if (value.get_int64().get(timestamp)) return malformed("field 'timestamp_ms' must be an integer");
      event.timestamp_ms = timestamp;
      text = scalarText(value);
    } else if (key == "exception") {
      auto exception = parseException(value, event);
      if (!exception) return exception.error();
      text = *exception;
    } else if (key == "attributes") {
      auto attributes = parseAttributes(value, event);
      if (!attributes) return attributes.error();
      text = *attributes;
    } else if (auto error = checkedText(value).get(text)) {
      return malformed("field '" + std::string(key) + "': " + describe(error));
    }
    event.passthrough.push_back({std::string(key), std::string(text)});
  }
  // Anything after the event's closing brace (at the end, there is no location).
  const char* rest = nullptr;
  if (document.current_location().get(rest) != simdjson::OUT_OF_BOUNDS)
    return malformed("event is not valid JSON: content after the event");
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

}  // namespace

Expected<RawEvent> parseRawEvent(std::string_view json, const EventLimits& limits) {
  if (json.size() > limits.max_event_bytes) {
    return tooLarge("event is " + std::to_string(json.size()) + " bytes, over limits.max_event_bytes (" +
                    std::to_string(limits.max_event_bytes) + ")");
  }
  thread_local PaddedCopy copy;
  const char* data = copy.fill(json);
  auto event = walkEvent(data, json.size(), copy.capacity(), limits);
  if (event) return event;
  // A refused event is parsed in full once more: when the text is not valid JSON (anywhere, also
  // after the point where the walk stopped), that is the reason given, as it always was.
  thread_local simdjson::dom::parser validator;
  simdjson::dom::element root;
  if (auto error = validator.parse(reinterpret_cast<const uint8_t*>(data), json.size(), false).get(root)) {
    return malformed("event is not valid JSON: " + describe(error));
  }
  if (!root.is_object()) return malformed("event must be a JSON object");
  return event.error();
}

}  // namespace restack::pipeline
