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
// Bit k set when byte k of the 16 at `p` ends a plain run. A signed compare with 0x20 flags
// control characters and bytes >= 0x80 at once.
uint32_t runEndMask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i flagged =
      _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                   _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
  return static_cast<uint32_t>(_mm_movemask_epi8(flagged));
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
    char padded[16];
    std::memset(padded, 'a', sizeof padded);
    std::memcpy(padded, data + i, size - i);
    mask = runEndMask16(padded);
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

void appendEscape(std::string& out, unsigned char c) {
  // Written with one append: two bytes, or six for \u00XX.
  char escape[6] = {'\\', static_cast<char>(c), '0', '0', 0, 0};
  switch (c) {
    case '"':
    case '\\':
      break;
    case '\n':
      escape[1] = 'n';
      break;
    case '\r':
      escape[1] = 'r';
      break;
    case '\t':
      escape[1] = 't';
      break;
    case '\b':
      escape[1] = 'b';
      break;
    case '\f':
      escape[1] = 'f';
      break;
    default:
      escape[1] = 'u';
      escape[4] = kHex[c >> 4];
      escape[5] = kHex[c & 15];
      out.append(escape, 6);
      return;
  }
  out.append(escape, 2);
}

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  out += '"';
  // Runs of bytes that need nothing (almost every name, file and path is one run) are found 16
  // bytes at a time and copied whole; a valid multi-byte UTF-8 sequence stays inside its run.
  const char* data = text.data();
  const size_t size = text.size();
  size_t start = 0;  // first byte not yet copied
  size_t i = 0;
  for (;;) {
    i = plainRunEnd(data, i, size);
    if (i == size) break;
    const auto c = static_cast<unsigned char>(data[i]);
    if (c >= 0x80) {
      if (size_t length = utf8SequenceLength(text, i)) {
        i += length;
        continue;
      }
      out.append(data + start, i - start);
      out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not part of valid UTF-8
    } else {
      out.append(data + start, i - start);
      appendEscape(out, c);
    }
    start = ++i;
  }
  out.append(data + start, size - start);
  out += '"';
}

}  // namespace restack
