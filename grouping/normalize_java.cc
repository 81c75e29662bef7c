// Java / Kotlin names as retrace prints them: "pkg.Outer$Inner.method" (normalize.h).
#include "grouping/normalize.h"
#include "grouping/text_util.h"

namespace restack::grouping {
namespace {

constexpr size_t kMaxNameBytes = 2048;

// Classes the compiler generates to implement a lambda: calls through them say nothing about
// the problem, and their names change with the toolchain (javac, D8 desugaring, R8).
bool isLambdaTrampoline(std::string_view class_name) {
  return class_name.find("$$Lambda") != std::string_view::npos ||
         class_name.find("-$$Lambda$") != std::string_view::npos ||
         class_name.find("ExternalSyntheticLambda") != std::string_view::npos ||
         class_name.find("$$InternalSyntheticLambda") != std::string_view::npos;
}

// R8 outlines: shared code fragments whose content is arbitrary per build.
bool isSyntheticOutline(std::string_view class_name) {
  return class_name.find("$$ExternalSynthetic") != std::string_view::npos &&
         class_name.find("Outline") != std::string_view::npos;
}

// "Outer$1$2" -> "Outer$_$_": anonymous classes are numbered in source order.
bool maskAnonymousClassNumbers(std::string& class_name) {
  if (class_name.find('$') == std::string::npos) return false;  // most classes: nothing to mask
  std::string out;
  out.reserve(class_name.size());
  bool changed = false;
  for (size_t i = 0; i < class_name.size(); ++i) {
    out += class_name[i];
    if (class_name[i] != '$') continue;
    size_t end = i + 1;
    while (end < class_name.size() && text::isDigit(class_name[end])) ++end;
    if (end > i + 1 && (end == class_name.size() || class_name[end] == '$')) {
      out += '_';
      changed = true;
      i = end - 1;
    }
  }
  class_name = std::move(out);
  return changed;
}

}  // namespace

NormalizedName normalizeJavaName(std::string_view function) {
  NormalizedName result;
  std::string_view trimmed = text::trim(function);
  if (trimmed.size() > kMaxNameBytes) trimmed = trimmed.substr(0, kMaxNameBytes);
  size_t paren = trimmed.find('(');  // "a.B.c(File.java:1)": the location is not part of a name
  if (paren != std::string_view::npos) trimmed = text::trim(trimmed.substr(0, paren));
  if (trimmed.empty()) return result;

  size_t dot = trimmed.rfind('.');
  std::string class_name(dot == std::string_view::npos ? std::string_view() : trimmed.substr(0, dot));
  std::string method(dot == std::string_view::npos ? trimmed : trimmed.substr(dot + 1));
  auto note = [&result](bool changed, const char* tag) {
    if (changed) result.steps.push_back(tag);
  };

  // JDK hidden classes print "Foo$$Lambda$14/0x0000000800066840".
  size_t slash = class_name.find('/');
  if (slash != std::string::npos) class_name.resize(slash);

  if (isSyntheticOutline(class_name)) {
    result.drop_reason = "synthetic outline";
  } else if (isLambdaTrampoline(class_name)) {
    result.drop_reason = "lambda trampoline";
  } else if (method.starts_with("access$")) {
    result.drop_reason = "synthetic accessor";
  }

  note(maskAnonymousClassNumbers(class_name), "java:anonymous-class-number");
  if (method.starts_with("$r8$lambda$")) {  // R8: "$r8$lambda$<hash of the lambda>"
    method = "$r8$lambda";
    note(true, "java:lambda-number");
  }
  if (method.ends_with("$default")) {  // Kotlin default-argument bridge
    method.resize(method.size() - 8);
    note(true, "kotlin:default-bridge");
  }
  // javac "lambda$onClick$0", Kotlin "onClick$lambda$0" / "onClick$lambda-1", "$values$1".
  note(text::stripTrailingNumbers(method, "$-"), "java:lambda-number");

  if (class_name.empty()) {
    result.name = std::move(method);
  } else {
    // One allocation for "class.method" (operator+ made a new string and grew it).
    class_name.reserve(class_name.size() + 1 + method.size());
    class_name += '.';
    class_name += method;
    result.name = std::move(class_name);
  }
  return result;
}

}  // namespace restack::grouping
