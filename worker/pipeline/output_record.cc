#include "worker/pipeline/output_record.h"

#include <simdjson.h>

#include "worker/pipeline/json_writer.h"

namespace restack::pipeline {
namespace {

std::string header(std::string_view text) {
  return std::string(cutUtf8(text, kMaxHeaderValueBytes));
}

// One rewrite of a flat fingerprint record: strings cut to `max_string` bytes, lists to
// `max_items` entries, everything else as it was.
std::string rewriteRecord(simdjson::dom::object record, size_t max_string, size_t max_items) {
  JsonWriter json;
  json.beginObject();
  for (auto [key, value] : record) {
    if (key == "truncated") continue;
    json.key(key);
    std::string_view text;
    simdjson::dom::array list;
    if (!value.get_string().get(text)) {
      json.string(cutUtf8(text, max_string));
    } else if (!value.get_array().get(list)) {
      json.beginArray();
      size_t count = 0;
      for (simdjson::dom::element item : list) {
        if (count++ == max_items) break;
        if (!item.get_string().get(text)) {
          json.string(cutUtf8(text, max_string));
        } else {
          json.raw(simdjson::minify(item));
        }
      }
      json.endArray();
    } else {
      json.raw(simdjson::minify(value));
    }
  }
  json.key("truncated");
  json.boolean(true);
  json.endObject();
  return json.take();
}

}  // namespace

std::string_view cutUtf8(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) so the cut falls before a sequence's first byte.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

OutputRecord deadLetterRecord(std::string_view key, std::string_view value, const Error& error,
                              size_t max_output_bytes) {
  OutputRecord dlq;
  dlq.kind = OutputKind::kDeadLetter;
  dlq.key = std::string(cutUtf8(key, kMaxKeyBytes));
  dlq.value = std::string(value.substr(0, max_output_bytes));
  dlq.headers = {{"restack.error", header(error.message())}, {"restack.error.code", errorCodeName(error.code())}};
  if (value.size() > max_output_bytes) {
    dlq.headers.emplace_back("restack.truncated", "value cut to its first " + std::to_string(max_output_bytes) +
                                                      " of " + std::to_string(value.size()) +
                                                      " bytes (limits.max_output_bytes)");
  }
  if (dlq.key.size() < key.size()) {
    dlq.headers.emplace_back("restack.key.truncated", "key cut to its first " + std::to_string(dlq.key.size()) +
                                                          " of " + std::to_string(key.size()) + " bytes");
  }
  return dlq;
}

std::optional<std::string> fitFingerprintRecord(std::string_view record_json, size_t budget) {
  if (record_json.size() <= budget) return std::string(record_json);
  simdjson::dom::parser parser;
  simdjson::dom::object record;
  if (parser.parse(record_json.data(), record_json.size()).get_object().get(record)) return std::nullopt;
  // Generous first (a long C++ or minified JS name keeps a useful prefix), then tight.
  constexpr std::pair<size_t, size_t> kSteps[] = {{1024, 64}, {256, 16}, {64, 4}};
  for (const auto& [max_string, max_items] : kSteps) {
    std::string rewritten = rewriteRecord(record, max_string, max_items);
    if (rewritten.size() <= budget) return rewritten;
  }
  return std::nullopt;
}

OutputRecord refusedOutputDeadLetter(const OutputRecord& refused, std::string_view topic) {
  OutputRecord dlq;
  dlq.kind = OutputKind::kDeadLetter;
  dlq.key = std::string(cutUtf8(refused.key, kMaxKeyBytes));
  dlq.value = std::string(refused.value.substr(0, kRefusedOutputKeptBytes));
  dlq.headers = {
      {"restack.error", header("a record of " + std::to_string(refused.value.size()) + " bytes for " +
                               std::string(topic) + " is larger than the producer's message.max.bytes")},
      {"restack.error.code", errorCodeName(ErrorCode::kTooLarge)},
      {"restack.truncated", "value cut to its first " + std::to_string(dlq.value.size()) + " of " +
                                std::to_string(refused.value.size()) + " bytes"},
  };
  return dlq;
}

}  // namespace restack::pipeline
