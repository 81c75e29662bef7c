// Grouping input and output model (docs/design.md §6).
//
// The grouping library knows nothing about Kafka, the worker or the symbol store: the worker
// copies what its restorers produced into a `GroupingInput` and gets a `Fingerprint` back.
// Worked example (an Android Java crash after retrace):
//
//   GroupingInput{app "shopee", platform "android", kind "crash",
//                 exception_type "java.lang.NullPointerException",
//                 threads[0] {name "main", crashed true, frames:
//                   {function "com.shopee.cart.CartPresenter.lambda$onLoad$0", kind &javaRules()},
//                   {function "com.shopee.cart.CartPresenter.access$000", kind &javaRules()},
//                   {function "android.os.Handler.handleCallback", kind &javaRules()}, …}}
//   -> Fingerprint{hash "5c0e…" (32 hex digits), algorithm "v2", quality "complete",
//                  title "java.lang.NullPointerException: …", culprit "com.shopee.cart.CartPresenter.lambda$onLoad",
//                  frames_used {"com.shopee.cart.CartPresenter.lambda$onLoad", …},
//                  rules_applied {"java:lambda-number", "java:synthetic-accessor", …}}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace restack::grouping {

// What grouping does with the frames of one kind (grouping/kinds.h): each kind defines its
// rules in grouping/kinds/<kind>_rules.cc and a frame points at them.
struct FrameKindRules;
// The rules of a frame no kind claims (kinds.cc).
const FrameKindRules& unknownRules();

// What the restorer could do for a frame. Only kMissingSymbols frames can still change (when
// the symbols arrive), so they decide between quality "complete" and "partial"/"provisional".
enum class FrameState {
  kRestored,        // symbolicated, or a name that never needed restoring (java.lang.String.length)
  kMissingSymbols,  // the symbol file it needs was not uploaded (yet)
  // An operating-system image's symbols, which no shared upload brought and the event does not
  // wait for: like kMissingSymbols for the frame, but it cannot change the fingerprint later.
  kSystemSymbolsMissing,
  kNotFound,  // symbols exist but do not cover it; a printed name, if any, is still usable
  kUnparsed,  // the raw line was not understood
};

const char* frameStateName(FrameState state);

struct GroupingFrame {
  // Restored name as the restorer prints it: demangled C++/Swift/ObjC/Rust, "pkg.Class.method"
  // for Java/Kotlin, the original JS function name. Empty when unknown.
  std::string function;
  std::string file;    // source file, or the script URL for unrestored JS frames
  std::string module;  // image / library path or name ("UIKitCore", "/system/lib64/libc.so")
  // Original source position (1-based, 0 = unknown). Never hashed: a lambda's or anonymous
  // function's key uses only its distance to the enclosing function's frame (normalize.h).
  uint32_t line = 0;
  // The function the frame's code is defined in, when `function` does not say it: a GCC lambda's
  // bare "operator()" with its enclosing function from DWARF ("shop::Cart::total(char const*)").
  // Names the lambda after that function (grouping/annotate.cc); "" when unknown.
  std::string scope;
  // The restorer knows the frame's original position but no name for it (a JS map with neither
  // sourcesContent nor a function map; the printed name is the minified one). Such a frame is
  // keyed by its original source file and line, which every bundler of that source agrees on.
  bool name_unknown = false;
  // The restorer's own in-app decision, if it has one: native module from the app's upload
  // (true) or the shared system store (false); a JS source on the map's ignore list (false).
  std::optional<bool> in_app;
  const FrameKindRules* kind = &unknownRules();  // never null
  FrameState state = FrameState::kRestored;
  // Other candidates of an ambiguous restoration (ProGuard overloads). The fingerprint uses the
  // smallest normalized name of {function} ∪ alternatives, so the candidate order cannot split.
  std::vector<std::string> alternatives;
};

struct GroupingThread {
  std::string name;
  bool crashed = false;
  bool main = false;                  // also assumed when the name is "main" (Android) or "com.apple.main-thread"
  std::vector<GroupingFrame> frames;  // innermost first, inlined frames expanded
};

// One sample of a lag event: the watched (usually main) thread's stack at one instant.
struct GroupingSample {
  uint64_t timestamp_ms = 0;
  std::vector<GroupingFrame> frames;  // innermost first
};

// One exception as the event or its trace text states it (exception_text.h reads trace text).
struct GroupingException {
  std::string type;      // "java.lang.IllegalStateException", "TypeError", "SIGSEGV", "EXC_BAD_ACCESS (SIGSEGV)"
  std::string message;   // first line as printed (masked only in the title)
  std::string relation;  // "" for the thrown exception, "caused_by", "suppressed"
};

// A "Caused by:" section of a Java exception chain (outermost first after the top exception).
struct GroupingCause {
  std::string type;
  std::string message;
  std::vector<GroupingFrame> frames;  // innermost first; may be short ("... N more" elided)
};

struct GroupingInput {
  std::string app;
  std::string platform;  // ios | android | web | react_native
  std::string kind;      // crash | anr | lag | error
  std::string exception_type;
  std::string exception_message;
  std::vector<GroupingThread> threads;
  std::vector<GroupingSample> samples;  // lag events
  std::vector<GroupingCause> causes;    // Java chains; the innermost cause with app frames wins
  // The exception chain read from the event and its trace text, thrown exception first. When
  // exception_type is empty, the first entry stands in for it (a printStackTrace() event).
  std::vector<GroupingException> exceptions;
  // Copied to the record only (not hashed): lets consumers count per build and link events.
  std::string event_id;
  std::string build_id;
  uint64_t timestamp_ms = 0;
  // The fingerprint this event got earlier while symbols were missing. When the final
  // fingerprint differs, the record carries it as "replaces" so consumers can merge the two.
  std::string provisional_fingerprint;
};

// What grouping decided about one input frame; recorded on every frame of the output event.
struct FrameDecision {
  bool in_app = false;
  std::string in_app_reason;  // "rule rules/shopee.yaml:4", "restorer", "java package android."
  std::string normalized;     // normalized function, "" when the frame has no usable name
  bool ignored = false;       // dropped before hashing
  std::string ignore_reason;  // "noise: abort", "synthetic accessor", "recursion", "rule …"
  bool used = false;          // contributed to the fingerprint
};

enum class Quality {
  kComplete,     // every frame the fingerprint could depend on was restored
  kPartial,      // built from restored frames, but some frames of that stack miss symbols
  kProvisional,  // no restored frame to build on; expect a different final fingerprint
};
const char* qualityName(Quality quality);

// What the hash was built from, in fallback order.
// kThrowerFrames: the in-app frames were not distinctive (only lambdas, anonymous functions or
// entry points), so the frames below them down to the one that threw were added.
enum class FingerprintSource { kForced, kInAppFrames, kThrowerFrames, kAllFrames, kMessage, kTypeOnly };
const char* fingerprintSourceName(FingerprintSource source);

struct Fingerprint {
  std::string hash;  // 32 lowercase hex digits (first 128 bits of SHA-256 of the components)
  std::string algorithm = "v2";
  std::string title;    // "java.lang.NullPointerException: id <n> not found" (message masked)
  std::string culprit;  // the top frame used: "com.shopee.cart.CartPresenter.onLoad"
  Quality quality = Quality::kComplete;
  FingerprintSource source = FingerprintSource::kTypeOnly;
  std::vector<std::string> components;        // exactly what was hashed, in order
  std::vector<std::string> frames_used;       // normalized, innermost first
  std::vector<std::string> rules_applied;     // built-in steps and app rules that shaped it, sorted
  std::string stack;                          // which stack: "thread 0 (main)", "cause 1", "samples"
  double lag_share = 0;                       // lag: share of samples that showed the chosen stack (0..1)
  uint32_t lag_samples = 0;                   // lag: number of samples considered
  std::string replaces;                       // provisional fingerprint this one supersedes ("" if none)
  std::string exception_type;                 // the thrown exception's type (the event's, else the trace text's)
  std::vector<GroupingException> exceptions;  // the chain, thrown exception first (record only)
  // Per-frame decisions, same shape as the input: [thread][frame], [sample][frame], [cause][frame].
  std::vector<std::vector<FrameDecision>> thread_frames;
  std::vector<std::vector<FrameDecision>> sample_frames;
  std::vector<std::vector<FrameDecision>> cause_frames;
};

}  // namespace restack::grouping
