// JSON string literals for every JSON Restack writes (restored events, fingerprint records).
//
// appendJsonString(out, "a\"b\n\xff") appends "a\"b\n\uFFFD" with quotes: the RFC 8259 escapes,
// control characters as \u00XX, and every byte that is not part of valid UTF-8 (overlong forms
// and surrogates included) replaced by U+FFFD, so the output is always valid JSON whatever a
// symbol file or a raw stack contained.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace restack {

void appendJsonString(std::string& out, std::string_view text);

// The same text written at `out`, for a writer that keeps its own buffer: returns the end of what
// it wrote. The room it needs past `out` is jsonStringRoom(text.size()), or when that is too much
// to reserve for a long string, jsonStringBytes(text) + kJsonStringSlack: it copies 16 bytes at a
// time and may store up to kJsonStringSlack bytes past the end it returns.
char* writeJsonString(char* out, std::string_view text);

// writeJsonString without the quotes, for a long string written in pieces: the pieces' bodies
// together are the whole string's when each piece ends where jsonStringCut says.
char* writeJsonStringBody(char* out, std::string_view text);
// The length of a first piece of `text` of at most `max_bytes` (at least 4) after which no UTF-8
// sequence continues: `text`'s size when it fits.
size_t jsonStringCut(std::string_view text, size_t max_bytes);

inline constexpr size_t kJsonStringSlack = 16;
// Every byte written as \u00XX, the quotes and the slack.
constexpr size_t jsonStringRoom(size_t text_bytes) {
  return 6 * text_bytes + 2 + kJsonStringSlack;
}
// Exactly what appendJsonString appends for `text`, quotes included.
size_t jsonStringBytes(std::string_view text);

}  // namespace restack
