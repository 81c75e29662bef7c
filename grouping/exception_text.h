// Exceptions stated in a stack's text, for events that carry them nowhere else.
//
// `printStackTrace()` output, a V8 `error.stack` and a crash report all name what was thrown
// before (or between) their frames. This reads those lines, thrown exception first:
//
//   Java     "Exception in thread \"main\" java.lang.IllegalStateException: closed"  -> {type, message, ""}
//            "java.lang.IllegalStateException: closed" (first line)                  -> {type, message, ""}
//            "Caused by: java.io.IOException: reset"                                 -> {…, "caused_by"}
//            "\tSuppressed: java.io.IOException: close failed"                        -> {…, "suppressed"}
//   JS       "TypeError: Cannot read properties of undefined (reading 'amount')"     -> {"TypeError", …}
//            "Uncaught PaymentError: no coupon"                                      -> {"PaymentError", …}
//   Apple    "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)" and
//            "Exception Subtype: KERN_INVALID_ADDRESS at 0x10" (or "Exception Codes:",
//            "Termination Reason:")                          -> {"EXC_BAD_ACCESS (SIGSEGV)", "KERN_INVALID_ADDRESS at
//            0x10"}
//            "*** Terminating app due to uncaught exception 'NSRangeException', reason: 'index 3'"
//                                                            -> {"NSRangeException", "index 3"}
//   Android  "signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0" with "Abort message: 'x'"
//            or "Cause: null pointer dereference"           -> {"SIGSEGV", "code 1 (SEGV_MAPERR), fault addr 0x0"}
//            (the abort message or cause, when present, is the message instead)
// Frame lines are never read as exceptions. Total: any text gives some (possibly empty) answer.
#pragma once

#include <string_view>
#include <vector>

#include "grouping/model.h"

namespace restack::grouping {

// At most `max_exceptions` entries (hostile input: one header per line).
std::vector<GroupingException> readExceptionsFromText(std::string_view text, size_t max_exceptions = 16);

// The type as hashed for native reasons: an Apple "EXC_BAD_ACCESS (SIGSEGV)" is hashed as its
// Mach exception "EXC_BAD_ACCESS" (what the event's own exception field states), an Android
// "signal 11 (SIGSEGV)" as "SIGSEGV"; any other type unchanged.
std::string_view nativeReasonKey(std::string_view type);

}  // namespace restack::grouping
