// Integers appended to a string in decimal, without a temporary string (std::to_string) or the
// locale (printf): the JSON writer and the restored stack texts write numbers per frame.
#pragma once

#include <charconv>
#include <string>

namespace restack {

template <typename Integer>
void appendDecimal(std::string& out, Integer value) {
  char digits[24];  // enough for any 64-bit integer and its sign
  const char* end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, static_cast<size_t>(end - digits));
}

}  // namespace restack
