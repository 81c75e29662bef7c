#include "formats/common/json_text.h"

#include <simdjson.h>

#include <cstdint>

namespace restack {
namespace {

constexpr char kHex[] = "0123456789abcdef";

bool needsEscape(unsigned char c) {
  return c < 0x20 || c == '"' || c == '\\';
}

// Length of the valid UTF-8 sequence at `s[i]`, or 0 when it is not valid UTF-8.
size_t utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&s](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
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

void appendEscape(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
  }
}

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  out += '"';
  // ASCII needs no UTF-8 check, and most strings (names, files, paths) need no escape either: one
  // branch-free pass over the bytes tells both (it vectorizes), and such a string is copied whole.
  // validate_utf8's dispatch costs more than this on the short strings most outputs are made of.
  unsigned char high = 0;
  bool escape = false;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    high |= byte;
    escape |= (byte < 0x20) | (byte == '"') | (byte == '\\');
  }
  if (high < 0x80 && !escape) {
    out.append(text);
  } else if (high < 0x80 || simdjson::validate_utf8(text.data(), text.size())) {
    // Almost every string: copied in runs between the bytes that need an escape.
    size_t i = 0;
    while (i < text.size()) {
      size_t run = i;
      while (run < text.size() && !needsEscape(static_cast<unsigned char>(text[run]))) ++run;
      out.append(text.data() + i, run - i);
      if (run == text.size()) break;
      appendEscape(out, static_cast<unsigned char>(text[run]));
      i = run + 1;
    }
  } else {
    for (size_t i = 0; i < text.size();) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x80) {
        size_t length = utf8SequenceLength(text, i);
        if (length == 0) {
          out += "\xEF\xBF\xBD";  // U+FFFD
          ++i;
        } else {
          out.append(text.substr(i, length));
          i += length;
        }
        continue;
      }
      if (needsEscape(c))
        appendEscape(out, c);
      else
        out += static_cast<char>(c);
      ++i;
    }
  }
  out += '"';
}

}  // namespace restack
