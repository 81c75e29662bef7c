// Normalization of restored frame names before hashing (issue 6, step 2).
//
// The fingerprint must survive a rebuild: no addresses, offsets, lines or columns, and none of
// the compiler's build-dependent decorations. Worked examples (input -> normalized):
//
//   native  "void foo::Bar<int>::run(std::__1::vector<int> const&) const [clone .cold]"
//             -> "foo::Bar<T>::run"
//           "__29-[ViewController viewDidLoad]_block_invoke_2"  -> "-[ViewController viewDidLoad]_block_invoke"
//           "core::result::unwrap_failed::h6a3c0f2b8d1e4f70"  -> "core::result::unwrap_failed"
//           "closure #2 in MyApp.Feed.load(id: Swift.Int) -> ()" -> "closure in MyApp.Feed.load"
//           "_OUTLINED_FUNCTION_12"  -> dropped ("outlined function")
//   java    "com.a.Cart$1.lambda$onLoad$0"  -> "com.a.Cart$_.lambda$onLoad"
//           "com.a.Cart.access$000"         -> dropped ("synthetic accessor")
//           "com.a.-$$Lambda$Cart$xYz12.run" -> dropped ("lambda trampoline")
//   js      "async Object.loadFeed [as load]" -> "loadFeed"
//           "" at "https://h/static/js/207.e017fea1.chunk.js" -> "<anonymous>@static/js/207.chunk.js"
//
// Every step that changed a name is reported by a short tag ("native:arguments"), which ends
// up in the fingerprint's rules_applied.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "grouping/model.h"

namespace restack::grouping {

struct NormalizedName {
  std::string name;                   // "" when the frame has no usable name
  const char* drop_reason = nullptr;  // set when the frame must never be hashed
  std::vector<const char*> steps;     // tags of the steps that changed the name
};

// Per-kind normalizers. Each is total: any input (even binary garbage) gives some output.
NormalizedName normalizeNativeName(std::string_view function);
NormalizedName normalizeJavaName(std::string_view function);
NormalizedName normalizeJsName(std::string_view function, std::string_view file);

// Dispatches on frame.kind and picks the smallest result over frame.alternatives.
NormalizedName normalizeFrame(const GroupingFrame& frame);

// "https://h/static/js/207.e017fea1.chunk.js?v=3" -> "static/js/207.chunk.js"; also strips
// webpack:// and app:/// roots. Used for anonymous JS frames and in-app decisions.
std::string normalizeJsFile(std::string_view url);

// First line of a message with variable parts masked: numbers -> "<n>", hex and addresses ->
// "<hex>", UUIDs -> "<uuid>"; cut to `max_chars` (on a UTF-8 boundary).
std::string maskMessage(std::string_view message, size_t max_chars);

// Exception type as hashed: trimmed, addresses masked ("SIGSEGV at 0x10" -> "SIGSEGV at <hex>").
std::string normalizeExceptionType(std::string_view type);

// Whether a normalized in-app name tells problems apart. Not distinctive: lambdas and
// anonymous functions (Java "lambda$x", "x$lambda", "$r8$lambda", anonymous-class "run"/"call"/…;
// native "{lambda}", "'lambda'", "$_", blocks, Swift closures; JS "<anonymous>@…"), and entry
// points ("main", "<clinit>", a JS module's "<global>"). The fingerprint then takes in the
// frames below them down to the thrower (fingerprint.h).
bool isDistinctiveName(std::string_view normalized, const FrameKindRules& kind);

// The enclosing named function of a lambda / anonymous function, from its normalized name, or
// "" when it names none: "a.B.lambda$load" -> "a.B.load", "a.B.lambda$static" -> "a.B.<clinit>",
// "a.B.load$lambda" -> "a.B.load", "A::f::{lambda}::operator()" -> "A::f",
// "closure in X.y" -> "X.y". Used to give a lambda a stable key by its position relative to
// the enclosing function's frame (fingerprint.h).
std::string enclosingFunction(std::string_view normalized, const FrameKindRules& kind);

// Why a normalized frame is shared by every crash and must not be hashed (throw/abort helpers,
// crash handlers, thread entry points); nullptr when it is a regular frame.
const char* noiseReason(std::string_view normalized, const FrameKindRules& kind);

}  // namespace restack::grouping
