// Exception lines of a stack's text (exception_text.h).
#include "grouping/exception_text.h"

#include <optional>

#include "grouping/text_util.h"

namespace restack::grouping {
namespace {

constexpr size_t kMaxLineBytes = 4096;

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

// Length of a (dotted) identifier at the start of `s`, and how many dots it holds.
size_t identifierLength(std::string_view s, size_t& dots) {
  dots = 0;
  size_t i = 0;
  for (;;) {
    if (i >= s.size() || !isIdentStart(s[i])) return 0;
    while (i < s.size() && text::isIdentChar(s[i])) ++i;
    if (i + 1 < s.size() && s[i] == '.' && isIdentStart(s[i + 1])) {
      ++dots;
      ++i;
      continue;
    }
    return i;
  }
}

bool namesAThrowable(std::string_view type) {
  size_t dot = type.rfind('.');
  std::string_view last = dot == std::string_view::npos ? type : type.substr(dot + 1);
  return last.find("Exception") != std::string_view::npos || last.find("Error") != std::string_view::npos ||
         last == "Throwable";
}

// "a.b.C: message", "a.b.C", "TypeError: message". With `strict`, a type alone or one without a
// package must name a throwable (so a stray first line is not read as an exception).
std::optional<GroupingException> parseHeader(std::string_view line, bool strict) {
  size_t dots = 0;
  const size_t length = identifierLength(line, dots);
  if (length == 0) return std::nullopt;
  std::string_view type = line.substr(0, length);
  std::string_view rest = line.substr(length);
  GroupingException out;
  out.type = std::string(type);
  if (rest.empty()) {
    if (strict && !namesAThrowable(type)) return std::nullopt;
    return out;
  }
  if (!rest.starts_with(":")) return std::nullopt;
  if (strict && dots == 0 && !namesAThrowable(type)) {
    // V8 prints a custom error's own name ("PaymentError"), which usually says Error; a bare
    // word before a colon is otherwise prose ("Note: …"), not an exception.
    return std::nullopt;
  }
  out.message = std::string(text::trim(rest.substr(1)));
  return out;
}

std::string_view afterPrefix(std::string_view line, std::string_view prefix) {
  return line.starts_with(prefix) ? text::trim(line.substr(prefix.size())) : std::string_view();
}

std::string unquote(std::string_view s) {
  s = text::trim(s);
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    s = s.substr(1, s.size() - 2);
  }
  return std::string(s);
}

bool isFrameLine(std::string_view line) {
  return line.starts_with("at ") || line.starts_with("...") || line.starts_with("#") ||
         (!line.empty() && text::isDigit(line.front()));
}

// Native reasons gathered over the whole text, turned into exceptions at the end.
struct NativeReasons {
  std::string mach_type, mach_subtype, mach_codes, termination;
  std::string signal_type, signal_detail, abort_message, cause;
  std::string objc_type, objc_reason;
};

// Report lines kept as they read, "<Name>: <value>": Apple's crash report header and Android's
// tombstone "Cause:". No name is a prefix of another, so a line matches at most one.
struct ReportField {
  std::string_view prefix;
  std::string NativeReasons::* field;
};
constexpr ReportField kReportFields[] = {
    {"Exception Type:", &NativeReasons::mach_type},
    {"Exception Subtype:", &NativeReasons::mach_subtype},
    {"Exception Codes:", &NativeReasons::mach_codes},
    {"Termination Reason:", &NativeReasons::termination},
    {"Cause:", &NativeReasons::cause},
};

// Stores a report field's value (a field with no value reads as no field); whether it did.
bool readReportField(std::string_view line, NativeReasons& reasons) {
  for (const ReportField& report : kReportFields) {
    if (auto rest = afterPrefix(line, report.prefix); !rest.empty()) {
      reasons.*report.field = std::string(rest);
      return true;
    }
  }
  return false;
}

// "*** Terminating app due to uncaught exception 'NSRangeException', reason: '*** index 3'"
bool readObjcTermination(std::string_view line, NativeReasons& reasons) {
  constexpr std::string_view kMarker = "uncaught exception '";
  size_t at = line.find(kMarker);
  if (at == std::string_view::npos) return false;
  std::string_view rest = line.substr(at + kMarker.size());
  size_t close = rest.find('\'');
  if (close == std::string_view::npos) return false;
  reasons.objc_type = std::string(rest.substr(0, close));
  size_t reason = rest.find("reason: ", close);
  if (reason != std::string_view::npos) reasons.objc_reason = unquote(rest.substr(reason + 8));
  return true;
}

// "signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0"
bool readAndroidSignal(std::string_view line, NativeReasons& reasons) {
  if (!line.starts_with("signal ")) return false;
  size_t open = line.find("(SIG");
  if (open == std::string_view::npos) return false;
  size_t close = line.find(')', open);
  if (close == std::string_view::npos) return false;
  reasons.signal_type = std::string(line.substr(open + 1, close - open - 1));
  std::string_view rest = line.substr(close + 1);
  while (!rest.empty() && (rest.front() == ',' || rest.front() == ' ')) rest.remove_prefix(1);
  reasons.signal_detail = std::string(rest);
  return true;
}

void appendNative(const NativeReasons& reasons, std::vector<GroupingException>& out) {
  if (!reasons.objc_type.empty()) out.push_back({reasons.objc_type, reasons.objc_reason, ""});
  const std::string relation = out.empty() ? "" : "signal";
  if (!reasons.mach_type.empty()) {
    const std::string& message = !reasons.mach_subtype.empty()  ? reasons.mach_subtype
                                 : !reasons.termination.empty() ? reasons.termination
                                                                : reasons.mach_codes;
    out.push_back({reasons.mach_type, message, relation});
  } else if (!reasons.signal_type.empty()) {
    const std::string& message = !reasons.abort_message.empty() ? reasons.abort_message
                                 : !reasons.cause.empty()       ? reasons.cause
                                                                : reasons.signal_detail;
    out.push_back({reasons.signal_type, message, relation});
  } else if (!reasons.abort_message.empty()) {
    out.push_back({"SIGABRT", reasons.abort_message, relation});
  }
}

}  // namespace

std::vector<GroupingException> readExceptionsFromText(std::string_view text, size_t max_exceptions) {
  std::vector<GroupingException> out;
  NativeReasons native;
  bool first_line = true;
  size_t start = 0;
  while (start < text.size() && out.size() < max_exceptions) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text::trim(text.substr(start, end - start));
    start = end + 1;
    if (line.empty()) continue;
    if (line.size() > kMaxLineBytes) line = line.substr(0, kMaxLineBytes);
    const bool was_first = first_line;
    first_line = false;

    // Every prefix read below starts with one of these letters; frame lines ("at …", "#00 …",
    // "3   MyApp …"), most of a stack's lines, skip the prefix checks.
    const char first = line.front();
    if (first == 'C' || first == 'S' || first == 'E' || first == 'T' || first == 'A' || first == 's') {
      if (auto rest = afterPrefix(line, "Caused by:"); !rest.empty()) {
        if (auto header = parseHeader(rest, false)) {
          header->relation = "caused_by";
          out.push_back(std::move(*header));
        }
        continue;
      }
      if (auto rest = afterPrefix(line, "Suppressed:"); !rest.empty()) {
        if (auto header = parseHeader(rest, false)) {
          header->relation = "suppressed";
          out.push_back(std::move(*header));
        }
        continue;
      }
      if (line.starts_with("Exception in thread \"")) {
        size_t close = line.find('"', 21);
        if (close != std::string_view::npos) {
          if (auto header = parseHeader(text::trim(line.substr(close + 1)), false)) out.push_back(std::move(*header));
        }
        continue;
      }
      if (readReportField(line, native)) continue;
      if (auto rest = afterPrefix(line, "Abort message:"); !rest.empty()) {
        native.abort_message = unquote(rest);
        continue;
      }
      if (readAndroidSignal(line, native)) continue;
    }
    if (readObjcTermination(line, native)) continue;
    if (was_first && !isFrameLine(line)) {
      // The first line of printStackTrace() output or of a V8 error.stack.
      std::string_view header = line;
      for (std::string_view prefix : {"Uncaught (in promise) ", "Uncaught "}) {
        if (header.starts_with(prefix)) header.remove_prefix(prefix.size());
      }
      if (auto parsed = parseHeader(header, true)) out.push_back(std::move(*parsed));
    }
  }
  if (out.size() < max_exceptions) appendNative(native, out);
  if (out.size() > max_exceptions) out.resize(max_exceptions);
  return out;
}

std::string_view nativeReasonKey(std::string_view type) {
  type = text::trim(type);
  if (type.starts_with("EXC_")) {
    size_t end = 0;
    while (end < type.size() && (text::isIdentChar(type[end]))) ++end;
    return type.substr(0, end);
  }
  if (type.starts_with("signal ")) {
    size_t open = type.find("(SIG");
    size_t close = open == std::string_view::npos ? open : type.find(')', open);
    if (close != std::string_view::npos) return type.substr(open + 1, close - open - 1);
  }
  return type;
}

}  // namespace restack::grouping
