// Base64 VLQ, the number encoding of source map v3 "mappings" (and of Metro function maps).
//
// Each value is a run of base64 digits (A-Z a-z 0-9 + /, values 0..63). The low 5 bits of a
// digit are payload, bit 5 (value 32) says "another digit follows". Digits are little endian
// (first digit = lowest 5 bits). In the assembled number, bit 0 is the sign and the rest is the
// magnitude. Worked example: "gB" -> 'g' = 32 (continuation, payload 0), 'B' = 1 (payload 1)
// -> 0 | 1 << 5 = 32 -> sign bit 0, magnitude 16 -> +16. "D" = 3 -> sign 1, magnitude 1 -> -1.
//
// Values are limited to 32-bit signed range, as every consumer (browsers, source-map) assumes;
// longer digit runs are reported as malformed instead of silently wrapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace restack::sourcemap {

// Value of one base64 digit, or -1 when `c` is not a base64 digit.
int base64DigitValue(char c);

enum class VlqResult { kOk, kEnd, kInvalidDigit, kTruncated, kOverflow };

// Decodes one VLQ value from `text` starting at `*pos`. Stops at ',' ';' or the end of `text`
// without consuming them (returns kEnd when no digit is at `*pos`).
VlqResult decodeVlq(std::string_view text, size_t* pos, int64_t* value);

// Human readable reason for a VlqResult ("invalid base64 digit", …).
const char* vlqResultText(VlqResult result);

}  // namespace restack::sourcemap
