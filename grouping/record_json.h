// The compact record published to `restack.fingerprints` (docs/design.md §2, §6), keyed
// "<app>:<fingerprint>" (fingerprintKey) so one partition sees every event of an issue.
//
// One JSON object per event, fields in this order (optional ones only when set):
//   {"app":"shopee","fingerprint":"5c0e…(32 hex)","algorithm":"v2","kind":"crash",
//    "platform":"android","event_id":"0f8e…","build_id":"7.8.0(78007)","timestamp_ms":1700000000000,
//    "quality":"complete","source":"in_app","stack":"thread 0 (main)",
//    "exception_type":"java.lang.NullPointerException",
//    "title":"java.lang.NullPointerException: Attempt to invoke … (id <n>)",   (message masked)
//    "culprit":"com.a.Cart.load",
//    "exceptions":[{"type":"java.lang.RuntimeException","message":"load failed"},
//                  {"type":"java.lang.NullPointerException","message":"…","relation":"caused_by"}],
//    "frames":["com.a.Cart.load","com.a.CartActivity.onResume"],
//    "rules":["java:lambda-number"],
//    "lag_share":0.8,"lag_samples":10,          (lag events only)
//    "replaces":"9d1f…"}                         (final fingerprint of an event first published
//                                                 with this provisional one)
// Strings are escaped per RFC 8259; invalid UTF-8 bytes become U+FFFD so the record is always
// valid JSON. Record format version = the "algorithm" field ("v2": source "thrower", the
// "exceptions" chain, the exception type read from trace text, masked titles).
#pragma once

#include <string>
#include <string_view>

#include "formats/common/json_text.h"
#include "grouping/model.h"

namespace restack::grouping {

std::string fingerprintRecordJson(const GroupingInput& input, const Fingerprint& fingerprint);

// Appends `text` as a JSON string literal (with quotes) to `out` (formats/common/json_text.h).
using restack::appendJsonString;

}  // namespace restack::grouping
