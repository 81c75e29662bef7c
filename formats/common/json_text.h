// JSON string literals for every JSON Restack writes (restored events, fingerprint records).
//
// appendJsonString(out, "a\"b\n\xff") appends "a\"b\n\uFFFD" with quotes: the RFC 8259 escapes,
// control characters as \u00XX, and every byte that is not part of valid UTF-8 (overlong forms
// and surrogates included) replaced by U+FFFD, so the output is always valid JSON whatever a
// symbol file or a raw stack contained.
#pragma once

#include <string>
#include <string_view>

namespace restack {

void appendJsonString(std::string& out, std::string_view text);

}  // namespace restack
