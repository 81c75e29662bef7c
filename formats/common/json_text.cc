#include "formats/common/json_text.h"

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace restack {
namespace {

constexpr char kHex[] = "0123456789abcdef";

#if defined(__SSE2__)
// Bit k set when byte k of `v` ends a plain run. A signed compare with 0x20 flags
// control characters and bytes >= 0x80 at once.
uint32_t runEndMask(__m128i v) {
  const __m128i flagged =
      _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                   _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
  return static_cast<uint32_t>(_mm_movemask_epi8(flagged));
}

// The `size` (1-15) bytes at `p` followed by plain ones. Fixed-size copies, which compile to
// loads and stores where a memcpy of `size` bytes would be a call: two that overlap cover any
// size in their range.
__m128i loadShort(const char* p, size_t size) {
  alignas(16) char padded[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(padded), _mm_set1_epi8('a'));
  if (size >= 8) {
    std::memcpy(padded, p, 8);
    std::memcpy(padded + size - 8, p + size - 8, 8);
  } else if (size >= 4) {
    std::memcpy(padded, p, 4);
    std::memcpy(padded + size - 4, p + size - 4, 4);
  } else {
    padded[0] = p[0];
    padded[size / 2] = p[size / 2];
    padded[size - 1] = p[size - 1];
  }
  return _mm_load_si128(reinterpret_cast<const __m128i*>(padded));
}

uint32_t runEndMask16(const char* p) {
  return runEndMask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
#endif

// The index of the first byte at or after `i` that ends a plain run, or `size`.
size_t plainRunEnd(const char* data, size_t i, size_t size) {
#if defined(__SSE2__)
  for (; i + 16 <= size; i += 16) {
    if (const uint32_t mask = runEndMask16(data + i)) return i + std::countr_zero(mask);
  }
  if (i == size) return size;
  // The last 1-15 bytes without a loop over them: the string's last 16 bytes, shifted past those
  // before `i`, or for a shorter string its bytes padded with plain ones.
  uint32_t mask;
  if (size >= 16) {
    mask = runEndMask16(data + size - 16) >> (i - (size - 16));
  } else {
    mask = runEndMask(loadShort(data + i, size - i));
  }
  return mask != 0 ? i + std::countr_zero(mask) : size;
#else
  for (; i < size; ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) return i;
  }
  return size;
#endif
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

// The escape of `c` (a quote, backslash or control character) in `escape`; returns its length:
// two bytes, or six for \u00XX.
size_t encodeEscape(unsigned char c, char (&escape)[6]) {
  escape[0] = '\\';
  escape[1] = static_cast<char>(c);
  switch (c) {
    case '"':
    case '\\':
      return 2;
    case '\n':
      escape[1] = 'n';
      return 2;
    case '\r':
      escape[1] = 'r';
      return 2;
    case '\t':
      escape[1] = 't';
      return 2;
    case '\b':
      escape[1] = 'b';
      return 2;
    case '\f':
      escape[1] = 'f';
      return 2;
    default:
      escape[1] = 'u';
      escape[2] = '0';
      escape[3] = '0';
      escape[4] = kHex[c >> 4];
      escape[5] = kHex[c & 15];
      return 6;
  }
}

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD for a byte that is not part of valid UTF-8

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  // Written by the same code as the JSON writer's strings (one escaping loop for both) into room
  // for the worst case, or for a long string into its exact size plus the slack (a counting pass
  // costs less than zeroing six times its length).
  constexpr size_t kWorstCaseUpTo = 256;
  const size_t at = out.size();
  out.resize(at +
             (text.size() <= kWorstCaseUpTo ? jsonStringRoom(text.size()) : jsonStringBytes(text) + kJsonStringSlack));
  const char* end = writeJsonString(out.data() + at, text);
  out.resize(static_cast<size_t>(end - out.data()));
}

size_t jsonStringBytes(std::string_view text) {
  const char* data = text.data();
  const size_t size = text.size();
  size_t bytes = 2 + size;  // the quotes and every byte once, plus what escapes add below
  size_t i = 0;
  for (;;) {
    i = plainRunEnd(data, i, size);
    if (i == size) return bytes;
    const auto c = static_cast<unsigned char>(data[i]);
    if (c >= 0x80) {
      if (size_t length = utf8SequenceLength(text, i)) {
        i += length;
        continue;
      }
      bytes += 2;  // three bytes of U+FFFD for one
    } else {
      char escape[6];
      bytes += encodeEscape(c, escape) - 1;
    }
    ++i;
  }
}

size_t jsonStringCut(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  // A valid sequence ends before a byte that is not a continuation byte (10xxxxxx); one that
  // spanned the cut would start at most three bytes before it.
  const auto continuation = [&text](size_t k) { return (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80; };
  for (size_t back = 0; back < 4 && back < max_bytes; ++back) {
    if (!continuation(max_bytes - back)) return max_bytes - back;
  }
  return max_bytes;
}

char* writeJsonString(char* out, std::string_view text) {
  *out++ = '"';
  out = writeJsonStringBody(out, text);
  *out++ = '"';
  return out;
}

char* writeJsonStringBody(char* out, std::string_view text) {
  const char* data = text.data();
  const size_t size = text.size();
  size_t i = 0;
  for (;;) {
#if defined(__SSE2__)
    // 16 bytes are stored as they are read: the plain ones stay, those from the first byte that
    // ends the run on are overwritten by what follows (the slack covers the last store).
    for (;;) {
      __m128i chunk;
      size_t available = 16;
      if (i + 16 <= size) {
        chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
      } else {
        if (i == size) break;
        available = size - i;
        chunk = loadShort(data + i, available);
      }
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), chunk);
      const uint32_t mask = runEndMask(chunk);
      const size_t plain = mask != 0 ? static_cast<size_t>(std::countr_zero(mask)) : available;
      out += plain;
      i += plain;
      if (mask != 0) break;
    }
#else
    for (; i < size; ++i) {
      const auto c = static_cast<unsigned char>(data[i]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      *out++ = static_cast<char>(c);
    }
#endif
    if (i == size) break;
    const auto c = static_cast<unsigned char>(data[i]);
    if (c >= 0x80) {
      if (size_t length = utf8SequenceLength(text, i)) {
        for (size_t k = 0; k < length; ++k) *out++ = data[i + k];  // 2-4 bytes: no memcpy call
        i += length;
        continue;
      }
      std::memcpy(out, kReplacement, 3);
      out += 3;
    } else {
      char escape[6] = {};
      const size_t length = encodeEscape(c, escape);
      std::memcpy(out, escape, sizeof escape);  // all six, within the room: a fixed-size copy
      out += length;
    }
    ++i;
  }
  return out;
}

}  // namespace restack
