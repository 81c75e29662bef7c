// JSON writer for the fingerprint record (record_json.h).
#include "grouping/record_json.h"

#include <cstdio>

namespace restack::grouping {
namespace {

// Length of the valid UTF-8 sequence at `s[i]`, or 0 when it is not valid UTF-8.
size_t utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&s](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char lead = byte(i);
  size_t length;
  uint32_t min_code;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    min_code = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    min_code = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    min_code = 0x10000;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  uint32_t code = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  ~ObjectWriter() { out_ += '}'; }
  void key(std::string_view name) {
    if (!first_) out_ += ',';
    first_ = false;
    appendJsonString(out_, name);
    out_ += ':';
  }
  void string(std::string_view name, std::string_view value) {
    key(name);
    appendJsonString(out_, value);
  }
  void optionalString(std::string_view name, std::string_view value) {
    if (!value.empty()) string(name, value);
  }
  void number(std::string_view name, uint64_t value) {
    key(name);
    out_ += std::to_string(value);
  }
  void fraction(std::string_view name, double value) {
    key(name);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
    out_ += buffer;
  }
  void list(std::string_view name, const std::vector<std::string>& values) {
    key(name);
    out_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out_ += ',';
      appendJsonString(out_, values[i]);
    }
    out_ += ']';
  }

 private:
  std::string& out_;
  bool first_ = true;
};

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t length = utf8SequenceLength(text, i);
      if (length == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not UTF-8
        ++i;
      } else {
        out.append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

std::string fingerprintRecordJson(const GroupingInput& input, const Fingerprint& fingerprint) {
  std::string out;
  out.reserve(512);
  {
    ObjectWriter record(out);
    record.string("app", input.app);
    record.string("fingerprint", fingerprint.hash);
    record.string("algorithm", fingerprint.algorithm);
    record.string("kind", input.kind);
    record.string("platform", input.platform);
    record.optionalString("event_id", input.event_id);
    record.optionalString("build_id", input.build_id);
    if (input.timestamp_ms != 0) record.number("timestamp_ms", input.timestamp_ms);
    record.string("quality", qualityName(fingerprint.quality));
    record.string("source", fingerprintSourceName(fingerprint.source));
    record.optionalString("stack", fingerprint.stack);
    record.optionalString("exception_type", input.exception_type);
    record.string("title", fingerprint.title);
    record.optionalString("culprit", fingerprint.culprit);
    record.list("frames", fingerprint.frames_used);
    record.list("rules", fingerprint.rules_applied);
    if (input.kind == "lag") {
      record.fraction("lag_share", fingerprint.lag_share);
      record.number("lag_samples", fingerprint.lag_samples);
    }
    record.optionalString("replaces", fingerprint.replaces);
  }
  return out;
}

}  // namespace restack::grouping
