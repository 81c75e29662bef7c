// Frame dispatch, message masking and the noise-frame lists (normalize.h).
#include <algorithm>
#include <array>
#include <vector>

#include "grouping/kinds.h"
#include "grouping/normalize.h"
#include "grouping/string_memo.h"
#include "grouping/text_util.h"

namespace restack::grouping {
namespace {

// Frames every crash of a kind shares: the throw/abort machinery on top of the stack and the
// thread entry points at the bottom. Exact normalized names.
constexpr std::string_view kNativeNoise[] = {
    // abort / signal delivery
    "abort", "raise", "__pthread_kill", "pthread_kill", "tgkill", "__abort_message", "abort_message", "__assert_rtn",
    "__assert_fail", "__assert2", "__libc_fatal", "__fortify_fatal", "__stack_chk_fail", "__kernel_rt_sigreturn",
    "__restore_rt", "_sigtramp", "__sigtramp", "art::Runtime::Abort", "android::base::LogMessage::~LogMessage",
    "android_set_abort_message",
    // C++ / Objective-C / Swift throw and terminate
    "__cxa_throw", "__cxa_rethrow", "__cxa_bad_cast", "__cxa_bad_typeid", "std::terminate", "std::__terminate",
    "__cxxabiv1::__terminate", "objc_exception_throw", "objc_exception_rethrow", "_objc_terminate", "objc_terminate",
    "-[NSException raise]", "+[NSException raise:format:]", "+[NSException raise:format:arguments:]",
    "__exceptionPreprocess", "___forwarding___", "_CF_forwarding_prep_0",
    "-[NSObject(NSObject) doesNotRecognizeSelector:]", "Swift._assertionFailure", "Swift._fatalErrorMessage",
    "swift_unexpectedError", "objc_msgSend", "core::panicking::panic", "core::panicking::panic_fmt",
    "std::panicking::begin_panic", "rust_panic",
    // thread entry
    "_pthread_start", "_pthread_body", "thread_start", "start_wqthread", "_pthread_wqthread", "__pthread_start",
    "__start_thread", "start", "main", "_start", "__start", "__libc_start_main", "__libc_start_call_main", "clone",
    "__clone", "art_quick_invoke_stub", "art_quick_invoke_static_stub"};

// Throw helpers first (they throw for whoever called them: the caller is the thrower), then
// thread entries.
constexpr std::string_view kJavaNoise[] = {"java.util.Objects.requireNonNull",
                                           "kotlin.jvm.internal.Intrinsics.checkNotNull",
                                           "kotlin.jvm.internal.Intrinsics.checkNotNullParameter",
                                           "kotlin.jvm.internal.Intrinsics.checkNotNullExpressionValue",
                                           "kotlin.jvm.internal.Intrinsics.throwUninitializedPropertyAccessException",
                                           "java.lang.Thread.run",
                                           "java.util.concurrent.ThreadPoolExecutor.runWorker",
                                           "java.util.concurrent.ThreadPoolExecutor$Worker.run",
                                           "java.util.concurrent.FutureTask.run",
                                           "android.os.Looper.loop",
                                           "android.os.Looper.loopOnce",
                                           "android.os.Handler.dispatchMessage",
                                           "android.os.Handler.handleCallback",
                                           "android.app.ActivityThread.main",
                                           "com.android.internal.os.ZygoteInit.main",
                                           "com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run",
                                           "com.android.internal.os.ExecInit.main",
                                           "java.lang.reflect.Method.invoke",
                                           "jdk.internal.reflect.DirectMethodHandleAccessor.invoke",
                                           "java.lang.Daemons$Daemon.run",
                                           "kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith"};

constexpr std::string_view kJsNoise[] = {"MessageQueue.__callFunction",
                                         "MessageQueue.__guard",
                                         "MessageQueue.callFunctionReturnFlushedQueue",
                                         "MessageQueue.__invokeCallback",
                                         "MessageQueue.invokeCallbackAndReturnFlushedQueue",
                                         "__callFunction",
                                         "__guard",
                                         "callFunctionReturnFlushedQueue",
                                         "__webpack_require__"};

// Crash reporters' own signal / exception handlers, matched case-insensitively by substring:
// those that contain "crash" (looked for only in names that do), then the others.
constexpr std::string_view kCrashHandlerMarkers[] = {"crashhandler", "kscrash", "plcrash", "sentrycrash", "crashpad::"};
constexpr std::string_view kOtherHandlerMarkers[] = {"google_breakpad", "sentrywrapped", "uncaughtexceptionhandler"};

template <size_t N>
bool contains(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

bool isUuidAt(std::string_view s, size_t i) {
  static constexpr std::array<size_t, 5> kGroups = {8, 4, 4, 4, 12};
  for (size_t g = 0; g < kGroups.size(); ++g) {
    for (size_t k = 0; k < kGroups[g]; ++k, ++i) {
      if (i >= s.size() || !text::isHexDigit(s[i])) return false;
    }
    if (g + 1 < kGroups.size()) {
      if (i >= s.size() || s[i] != '-') return false;
      ++i;
    }
  }
  return i == s.size() || !text::isIdentChar(s[i]);
}

bool isHexHash(std::string_view word) {
  if (word.size() < 8) return false;
  bool digit = false;
  for (char c : word) {
    if (!text::isHexDigit(c)) return false;
    digit = digit || text::isDigit(c);
  }
  return digit;
}

}  // namespace

NormalizedName normalizeFrame(const GroupingFrame& frame) {
  const FrameKindRules& rules = *frame.kind;
  if (frame.name_unknown && rules.normalize_unnamed != nullptr) return rules.normalize_unnamed(frame);
  auto one = [&](std::string_view function) { return rules.normalize_name(function, frame); };
  NormalizedName best = one(frame.function);
  for (const auto& alternative : frame.alternatives) {
    NormalizedName candidate = one(alternative);
    if (!candidate.name.empty() && (best.name.empty() || candidate.name < best.name)) {
      best = std::move(candidate);
      best.steps.push_back("ambiguous:smallest-candidate");
    }
  }
  return best;
}

std::string maskMessage(std::string_view message, size_t max_chars) {
  size_t newline = message.find_first_of("\r\n");
  std::string_view line = text::trim(message.substr(0, newline));
  std::string out;
  out.reserve(std::min(line.size(), max_chars) + 8);
  size_t i = 0;
  while (i < line.size() && out.size() < max_chars) {
    char c = line[i];
    if (text::isHexDigit(c) && (i == 0 || !text::isIdentChar(line[i - 1])) && isUuidAt(line, i)) {
      out += "<uuid>";
      i += 36;
      continue;
    }
    if (c == '0' && i + 2 < line.size() && (line[i + 1] == 'x' || line[i + 1] == 'X') &&
        text::isHexDigit(line[i + 2])) {
      i += 2;
      while (i < line.size() && text::isHexDigit(line[i])) ++i;
      out += "<hex>";
      continue;
    }
    if (text::isIdentChar(c) && c != '$') {
      size_t end = i;
      while (end < line.size() && text::isIdentChar(line[end]) && line[end] != '$') ++end;
      std::string_view word = line.substr(i, end - i);
      if (isHexHash(word)) {
        out += "<hex>";
      } else {
        for (size_t k = 0; k < word.size();) {  // "user42" -> "user<n>"
          if (text::isDigit(word[k])) {
            while (k < word.size() && text::isDigit(word[k])) ++k;
            out += "<n>";
          } else {
            out += word[k++];
          }
        }
      }
      i = end;
      continue;
    }
    out += c;
    ++i;
  }
  if (out.size() > max_chars) out.resize(max_chars);
  // Never end inside a UTF-8 sequence: drop trailing continuation bytes and their lead byte.
  size_t end = out.size();
  size_t lead = end;
  while (lead > 0 && (static_cast<unsigned char>(out[lead - 1]) & 0xC0) == 0x80) --lead;
  if (lead > 0 && static_cast<unsigned char>(out[lead - 1]) >= 0xC0) {
    unsigned char first = static_cast<unsigned char>(out[lead - 1]);
    size_t need = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : 2;
    if (end - (lead - 1) < need) out.resize(lead - 1);
  }
  return out;
}

std::string normalizeExceptionType(std::string_view type) {
  std::string_view trimmed = text::trim(type);
  if (trimmed.size() > 512) trimmed = trimmed.substr(0, 512);
  std::string out;
  for (size_t i = 0; i < trimmed.size(); ++i) {
    if (trimmed[i] == '0' && i + 2 < trimmed.size() && (trimmed[i + 1] == 'x' || trimmed[i + 1] == 'X') &&
        text::isHexDigit(trimmed[i + 2])) {
      i += 2;
      while (i + 1 < trimmed.size() && text::isHexDigit(trimmed[i + 1])) ++i;
      out += "<hex>";
    } else {
      out += trimmed[i];
    }
  }
  return out;
}

bool isDistinctiveName(std::string_view normalized, const FrameKindRules& kind) {
  if (normalized.empty()) return false;
  // A position suffix ("@+2", normalize.h enclosingFunction) is not a name.
  size_t at = normalized.rfind("@+");
  if (at == std::string_view::npos) at = normalized.rfind("@-");
  if (at != std::string_view::npos) normalized = normalized.substr(0, at);
  return kind.is_distinctive(normalized);
}

std::string enclosingFunction(std::string_view normalized, const FrameKindRules& kind) {
  return kind.enclosing_function(normalized);
}

namespace {

const char* computeNoiseReason(std::string_view normalized, const FrameKindRules& kind) {
  if (const char* reason = kind.noise(normalized)) return reason;
  // Lowered on the stack: this runs for every frame, and most names are longer than a string's
  // small buffer.
  char buffer[512];
  const size_t size = std::min(normalized.size(), sizeof buffer);
  for (size_t i = 0; i < size; ++i) {
    const char c = normalized[i];
    buffer[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const std::string_view lowered(buffer, size);
  auto any = [lowered](const auto& markers) {
    return std::any_of(std::begin(markers), std::end(markers),
                       [lowered](std::string_view marker) { return lowered.find(marker) != std::string_view::npos; });
  };
  if (lowered.find("crash") != std::string_view::npos && any(kCrashHandlerMarkers)) return "noise: crash handler";
  return any(kOtherHandlerMarkers) ? "noise: crash handler" : nullptr;
}

}  // namespace

const char* noiseReason(std::string_view normalized, const FrameKindRules& kind) {
  if (normalized.empty()) return nullptr;
  // The answer depends on the name and the kind's noise function only (a function lives as long
  // as the program): a memo per noise function, a handful per thread.
  struct NoiseMemo {
    const char* (*noise)(std::string_view);
    StringMemo<const char*> names;
  };
  thread_local std::vector<NoiseMemo> memos;
  auto memo = std::find_if(memos.begin(), memos.end(), [&kind](const NoiseMemo& m) { return m.noise == kind.noise; });
  if (memo == memos.end()) memo = memos.insert(memos.end(), NoiseMemo{kind.noise, {}});
  return memo->names.get(normalized, [&kind](std::string_view name) { return computeNoiseReason(name, kind); });
}

namespace kinds {

NormalizedName nativeName(std::string_view function, const GroupingFrame&) {
  thread_local StringMemo<NormalizedName> memo;
  return memo.get(function, normalizeNativeName);
}
NormalizedName javaName(std::string_view function, const GroupingFrame&) {
  thread_local StringMemo<NormalizedName> memo;
  return memo.get(function, normalizeJavaName);
}
NormalizedName jsName(std::string_view function, const GroupingFrame& frame) {
  return normalizeJsName(function, frame.file);
}

NormalizedName jsUnnamed(const GroupingFrame& frame) {
  NormalizedName unnamed;
  const std::string file = normalizeJsFile(frame.file);
  if (file.empty()) return unnamed;
  unnamed.name = "<unnamed>@" + file + (frame.line > 0 ? ":" + std::to_string(frame.line) : "");
  unnamed.steps.push_back("js:unnamed-by-position");
  return unnamed;
}

bool javaDistinctive(std::string_view normalized) {
  size_t dot = normalized.rfind('.');
  std::string_view method = dot == std::string_view::npos ? normalized : normalized.substr(dot + 1);
  std::string_view owner = dot == std::string_view::npos ? std::string_view() : normalized.substr(0, dot);
  if (method.starts_with("lambda$") || method.starts_with("$r8$lambda") ||
      method.find("$lambda") != std::string_view::npos || method == "main" || method == "<clinit>") {
    return false;
  }
  // An anonymous class implementing a one-method interface is a lambda written longhand.
  static constexpr std::string_view kSamMethods[] = {"run", "call", "invoke", "accept", "apply", "get"};
  if (owner.ends_with("$_") && contains(kSamMethods, method)) return false;
  return true;
}

bool jsDistinctive(std::string_view normalized) {
  return !normalized.starts_with("<anonymous>") && normalized != "<global>" && normalized != "main";
}

bool nativeDistinctive(std::string_view normalized) {
  // A bare "operator()" is the call operator of a type without linkage (annotate.cc).
  return normalized != "operator()" && normalized.find("{lambda}") == std::string_view::npos &&
         normalized.find("'lambda'") == std::string_view::npos && normalized.find("$_") == std::string_view::npos &&
         !normalized.ends_with("_block_invoke") && !normalized.starts_with("closure in ") && normalized != "main";
}

std::string javaEnclosing(std::string_view normalized) {
  size_t dot = normalized.rfind('.');
  if (dot == std::string_view::npos) return {};
  std::string_view owner = normalized.substr(0, dot);
  std::string_view method = normalized.substr(dot + 1);
  std::string_view enclosing;
  if (method.starts_with("lambda$")) {
    enclosing = method.substr(7);  // javac: lambda$<enclosing>$N (the number is already gone)
  } else if (size_t lambda = method.find("$lambda"); lambda != std::string_view::npos && lambda > 0) {
    enclosing = method.substr(0, lambda);  // Kotlin: <enclosing>$lambda-N
  }
  if (enclosing.empty()) return {};
  if (enclosing == "static") return std::string(owner) + ".<clinit>";
  if (enclosing == "new") return std::string(owner) + ".<init>";
  return std::string(owner) + "." + std::string(enclosing);
}

std::string jsEnclosing(std::string_view) {
  return {};
}

std::string nativeEnclosing(std::string_view normalized) {
  if (normalized.starts_with("closure in ")) {
    std::string_view rest = normalized;
    while (rest.starts_with("closure in ")) rest.remove_prefix(11);
    return std::string(rest);
  }
  for (std::string_view marker : {std::string_view("::{lambda}"), std::string_view("::'lambda'")}) {
    size_t at = normalized.find(marker);
    if (at != std::string_view::npos && at > 0) return std::string(normalized.substr(0, at));
  }
  return {};
}

const char* javaNoise(std::string_view normalized) {
  return contains(kJavaNoise, normalized) ? "noise: throw helper or thread entry" : nullptr;
}
const char* jsNoise(std::string_view normalized) {
  return contains(kJsNoise, normalized) ? "noise: bridge entry" : nullptr;
}
const char* nativeNoise(std::string_view normalized) {
  return contains(kNativeNoise, normalized) ? "noise: throw, abort or thread entry" : nullptr;
}

}  // namespace kinds

}  // namespace restack::grouping
