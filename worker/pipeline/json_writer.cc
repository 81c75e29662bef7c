#include "worker/pipeline/json_writer.h"

#include <simdjson.h>

namespace restack::pipeline {

namespace {

bool needsEscape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

}  // namespace

void JsonWriter::appendString(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out_.push_back('"');
  // Fast path, almost every string: valid UTF-8, copied in runs between the bytes to escape.
  const bool valid_utf8 = simdjson::validate_utf8(value.data(), value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    if (valid_utf8) {
      size_t run = i;
      while (run < value.size() && !needsEscape(static_cast<unsigned char>(value[run]))) ++run;
      out_.append(value.data() + i, run - i);
      if (run == value.size()) break;
      i = run;
    }
    const auto c = static_cast<unsigned char>(value[i]);
    switch (c) {
      case '"': out_.append("\\\""); break;
      case '\\': out_.append("\\\\"); break;
      case '\n': out_.append("\\n"); break;
      case '\r': out_.append("\\r"); break;
      case '\t': out_.append("\\t"); break;
      case '\b': out_.append("\\b"); break;
      case '\f': out_.append("\\f"); break;
      default:
        if (c < 0x20) {
          out_.append("\\u00");
          out_.push_back(kHex[c >> 4]);
          out_.push_back(kHex[c & 0xf]);
        } else if (c < 0x80) {
          out_.push_back(static_cast<char>(c));
        } else {
          // Copy valid UTF-8 sequences; replace invalid bytes so the output stays valid JSON.
          size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
          bool valid = length >= 2 && c <= 0xf4 && i + length <= value.size();
          for (size_t k = 1; valid && k < length; ++k) {
            valid = (static_cast<unsigned char>(value[i + k]) & 0xc0) == 0x80;
          }
          if (valid) {
            out_.append(value.substr(i, length));
            i += length - 1;
          } else {
            out_.append("\\ufffd");
          }
        }
    }
  }
  out_.push_back('"');
}

}  // namespace restack::pipeline
