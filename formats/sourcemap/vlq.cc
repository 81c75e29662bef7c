#include "formats/sourcemap/vlq.h"

#include <array>

namespace restack::sourcemap {
namespace {

constexpr std::array<int8_t, 256> makeDigitTable() {
  std::array<int8_t, 256> table{};
  for (auto& entry : table) entry = -1;
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}

constexpr std::array<int8_t, 256> kDigitTable = makeDigitTable();

}  // namespace

int base64DigitValue(char c) {
  return kDigitTable[static_cast<uint8_t>(c)];
}

VlqResult decodeVlq(std::string_view text, size_t* pos, int64_t* value) {
  size_t at = *pos;
  if (at >= text.size() || text[at] == ',' || text[at] == ';') return VlqResult::kEnd;
  uint64_t accumulated = 0;
  int shift = 0;
  while (true) {
    if (at >= text.size()) return VlqResult::kTruncated;
    const int digit = kDigitTable[static_cast<uint8_t>(text[at])];
    if (digit < 0) return (text[at] == ',' || text[at] == ';') ? VlqResult::kTruncated : VlqResult::kInvalidDigit;
    ++at;
    // 7 digits carry 35 bits: more than a signed 32-bit value plus its sign bit needs.
    if (shift > 30) return VlqResult::kOverflow;
    accumulated |= static_cast<uint64_t>(digit & 31) << shift;
    shift += 5;
    if ((digit & 32) == 0) break;
  }
  const uint64_t magnitude = accumulated >> 1;
  if (magnitude > 0x7fffffffull) return VlqResult::kOverflow;
  // "-0" (0x1) decodes as INT32_MIN in some encoders; treat it as 0 like browsers do.
  *value = (accumulated & 1) ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  *pos = at;
  return VlqResult::kOk;
}

const char* vlqResultText(VlqResult result) {
  switch (result) {
    case VlqResult::kOk:
      return "ok";
    case VlqResult::kEnd:
      return "missing value";
    case VlqResult::kInvalidDigit:
      return "invalid base64 digit";
    case VlqResult::kTruncated:
      return "VLQ value cut off (continuation bit set on the last digit)";
    case VlqResult::kOverflow:
      return "VLQ value does not fit in 32 bits";
  }
  return "unknown";
}

}  // namespace restack::sourcemap
