// appendJsonString and writeJsonString find the bytes to escape 16 at a time; their output must be
// exactly what a byte-by-byte writer gives, whatever the length of a string and wherever the bytes
// fall in it, and jsonStringBytes its length.
#include "formats/common/json_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace restack {
namespace {

// Length of the valid UTF-8 sequence at text[i] (overlong forms, surrogates and code points above
// U+10FFFF are not valid), or 0.
size_t referenceSequence(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  size_t length = 0;
  uint32_t min_code = 0;
  if (byte(i) >= 0xC2 && byte(i) <= 0xDF) {
    length = 2;
    min_code = 0x80;
  } else if (byte(i) >= 0xE0 && byte(i) <= 0xEF) {
    length = 3;
    min_code = 0x800;
  } else if (byte(i) >= 0xF0 && byte(i) <= 0xF4) {
    length = 4;
    min_code = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  uint32_t code = byte(i) & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

std::string reference(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = referenceSequence(text, i);
      out += length == 0 ? std::string("\xEF\xBF\xBD") : text.substr(i, length);
      i += length == 0 ? 1 : length;
      continue;
    }
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\b') {
      out += "\\b";
    } else if (c == '\f') {
      out += "\\f";
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  return out + "\"";
}

// What appendJsonString appends, after checking that writeJsonString writes the same within the
// room it asks for, in either of its two measures.
std::string written(const std::string& text) {
  std::string out = "prefix";
  appendJsonString(out, text);
  out = out.substr(6);
  EXPECT_EQ(jsonStringBytes(text), out.size());
  for (const size_t room : {jsonStringRoom(text.size()), jsonStringBytes(text) + kJsonStringSlack}) {
    // A guard after the room: writing past it would change it.
    std::string buffer(room + 8, '#');
    const char* end = writeJsonString(buffer.data(), text);
    EXPECT_EQ(std::string(static_cast<const char*>(buffer.data()), end), out);
    EXPECT_EQ(buffer.substr(room), std::string(8, '#'));
  }
  return out;
}

TEST(JsonText, Examples) {
  EXPECT_EQ(written(""), "\"\"");
  EXPECT_EQ(written("a\"b\n\xff"), "\"a\\\"b\\n\xEF\xBF\xBD\"");
  EXPECT_EQ(written("com.example.demo.CheckoutActivity.loadCart"), "\"com.example.demo.CheckoutActivity.loadCart\"");
  EXPECT_EQ(written("\tat a.b(SourceFile:1)"), "\"\\tat a.b(SourceFile:1)\"");
  EXPECT_EQ(written(std::string("nul\0here", 8)), "\"nul\\u0000here\"");
  EXPECT_EQ(written("\x1f\x7f"), "\"\\u001f\x7f\"");
  EXPECT_EQ(written("caf\xC3\xA9 \xE4\xB8\xAD\xF0\x9F\x98\x80"), "\"caf\xC3\xA9 \xE4\xB8\xAD\xF0\x9F\x98\x80\"");
  // Overlong, surrogate, above U+10FFFF, truncated: each bad byte is one U+FFFD.
  EXPECT_EQ(written("\xC0\xAF"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(written("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(written("\xF4\x90\x80\x80"), reference("\xF4\x90\x80\x80"));
  EXPECT_EQ(written("ab\xE4\xB8"), "\"ab\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

// Every special byte at every position of strings of every length up to 40: the 16-byte steps,
// the window over a string's last 16 bytes and the padded copy of a shorter string.
TEST(JsonText, EveryPositionAndLength) {
  const std::string specials[] = {"\"",   "\\",   "\n",       std::string(1, '\0'), "\x1f",
                                  " ",    "\x7f", "\xC3\xA9", "\xE2\x82\xAC",       "\xF0\x9F\x98\x80",
                                  "\xff", "\xC3", "\x80"};
  for (size_t length = 0; length <= 40; ++length) {
    for (size_t at = 0; at <= length; ++at) {
      for (const std::string& special : specials) {
        std::string text(length, 'x');
        text.insert(at, special);
        ASSERT_EQ(written(text), reference(text)) << "length " << length << " at " << at;
        std::string spaced(length, ' ');
        spaced.insert(at, special);
        ASSERT_EQ(written(spaced), reference(spaced)) << "spaces, length " << length << " at " << at;
      }
    }
  }
}

TEST(JsonText, RandomStrings) {
  std::mt19937 rng(7);
  const std::string alphabet = std::string(
                                   "abcXYZ019 :/.()[]$_-\"\\\n\r\t\b\f\x01\x1f\x7f\x80\xbf\xc2\xc3\xdf\xe0\xe2"
                                   "\xed\xef\xf0\xf4\xf5\xff") +
                               std::string(1, '\0');
  for (int round = 0; round < 20000; ++round) {
    const size_t length = rng() % 80;
    std::string text;
    for (size_t i = 0; i < length; ++i) {
      // Mostly plain, as names and paths are, with runs of every length between the rest.
      text += rng() % 4 == 0 ? alphabet[rng() % alphabet.size()] : static_cast<char>('a' + rng() % 26);
    }
    ASSERT_EQ(written(text), reference(text)) << "round " << round;
  }
}

// A long string written in pieces cut by jsonStringCut reads as the whole string written at once,
// wherever the cuts fall among multi-byte and broken UTF-8 sequences.
TEST(JsonText, PiecesCutByJsonStringCut) {
  std::mt19937 rng(11);
  const std::string pieces[] = {"a",    "\n",   "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                "\x80", "\xC3", "\xF0\x9F", "\xff"};
  for (int round = 0; round < 5000; ++round) {
    std::string text;
    const size_t parts = rng() % 40;
    for (size_t i = 0; i < parts; ++i) text += pieces[rng() % std::size(pieces)];
    const size_t max_bytes = 4 + rng() % 12;
    std::string buffer(jsonStringRoom(text.size()), '#');
    char* out = buffer.data();
    *out++ = '"';
    for (std::string_view rest = text; !rest.empty();) {
      const size_t piece = jsonStringCut(rest, max_bytes);
      ASSERT_GT(piece, 0u);
      ASSERT_LE(piece, max_bytes);
      out = writeJsonStringBody(out, rest.substr(0, piece));
      rest.remove_prefix(piece);
    }
    *out++ = '"';
    ASSERT_EQ(std::string(buffer.data(), static_cast<size_t>(out - buffer.data())), reference(text))
        << "round " << round;
  }
}

}  // namespace
}  // namespace restack
