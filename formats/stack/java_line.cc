// Java/Kotlin stack trace lines as Throwable.printStackTrace() and Android print them.
#include "formats/stack/java_line.h"
#include "formats/stack/text_scan.h"

namespace restack::stack {
namespace {

constexpr bool isJavaNameChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         c == '.' || c == '<' || c == '>' || c == '-' || c >= 0x80;
}

// The bytes a class name and a method name may hold, one table lookup per byte instead of the
// chain of comparisons above (every Java line of every stack goes through these loops).
struct NameBytes {
  bool in_class[256] = {};
  bool in_method[256] = {};
  constexpr NameBytes() {
    for (int c = 0; c < 256; ++c) {
      const auto byte = static_cast<unsigned char>(c);
      in_class[c] = isJavaNameChar(byte) && byte != '<' && byte != '>';
      in_method[c] = isJavaNameChar(byte) && byte != '.';
    }
  }
};
constexpr NameBytes kNameBytes;

// A (possibly obfuscated) fully qualified class name: "a.b", "com.x.Foo$Bar", or a bare "Foo".
bool looksLikeClassName(std::string_view name, bool require_package) {
  if (name.empty() || scan::isDigit(name.front()) || name.front() == '.' || name.back() == '.') return false;
  for (char c : name) {
    if (!kNameBytes.in_class[static_cast<unsigned char>(c)]) return false;
  }
  return !require_package || name.find('.') != std::string_view::npos;
}

}  // namespace

std::optional<JavaFrameLine> parseJavaFrameLine(std::string_view trimmed) {
  std::string_view text = trimmed;
  if (text.starts_with("at ")) text = scan::trimLeft(text.substr(3));
  if (text.empty() || text.back() != ')') return std::nullopt;
  size_t open = text.find('(');
  if (open == std::string_view::npos || open == 0) return std::nullopt;
  std::string_view qualified = text.substr(0, open);
  std::string_view location = text.substr(open + 1, text.size() - open - 2);
  JavaFrameLine frame;
  // Java 9+ prefixes the class loader and/or module: "app//a.b.c", "java.base@17/java.lang.X".
  if (size_t slash = qualified.rfind('/'); slash != std::string_view::npos) {
    frame.module_prefix = std::string(qualified.substr(0, slash + 1));
    qualified = qualified.substr(slash + 1);
  }
  size_t dot = qualified.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == qualified.size()) return std::nullopt;
  std::string_view class_name = qualified.substr(0, dot);
  std::string_view method = qualified.substr(dot + 1);
  if (!looksLikeClassName(class_name, false)) return std::nullopt;
  for (char c : method) {
    if (!kNameBytes.in_method[static_cast<unsigned char>(c)]) return std::nullopt;
  }
  frame.class_name = std::string(class_name);
  frame.method = std::string(method);
  // "File.java:12", "SourceFile:3", "Unknown Source", "Native Method", "File.kt".
  size_t colon = location.rfind(':');
  if (colon != std::string_view::npos) {
    auto line = scan::parseU32(location.substr(colon + 1));
    if (!line) return std::nullopt;
    frame.line = *line;
    location = location.substr(0, colon);
  }
  // A loop rather than find_first_of, which calls memchr over its set for every byte.
  for (char c : location) {
    if (c == '(' || c == ')') return std::nullopt;
  }
  frame.file = std::string(location);
  return frame;
}

std::optional<JavaExceptionLine> parseJavaExceptionLine(std::string_view trimmed) {
  JavaExceptionLine exception;
  std::string_view text = trimmed;
  static constexpr std::string_view kPrefixes[] = {"Caused by: ", "Suppressed: ", "Wrapped by: "};
  bool prefixed = false;
  for (std::string_view prefix : kPrefixes) {
    if (text.starts_with(prefix)) {
      exception.prefix = std::string(prefix);
      text.remove_prefix(prefix.size());
      prefixed = true;
      break;
    }
  }
  if (!prefixed && text.starts_with("Exception in thread \"")) {
    size_t close = text.find("\" ", 21);
    if (close == std::string_view::npos) return std::nullopt;
    exception.prefix = std::string(text.substr(0, close + 2));
    text.remove_prefix(close + 2);
    prefixed = true;
  }
  size_t colon = text.find(": ");
  std::string_view class_name = colon == std::string_view::npos ? text : text.substr(0, colon);
  if (colon == std::string_view::npos && !text.empty() && text.back() == ':') {
    class_name = text.substr(0, text.size() - 1);
  }
  // Without a prefix, require a package so that ordinary log text is not taken for an exception.
  if (!looksLikeClassName(class_name, !prefixed)) return std::nullopt;
  exception.class_name = std::string(class_name);
  if (colon != std::string_view::npos) {
    exception.has_message = true;
    exception.message = std::string(text.substr(colon + 2));
  }
  return exception;
}

std::optional<JavaMoreLine> parseJavaMoreLine(std::string_view trimmed) {
  if (!trimmed.starts_with("... ")) return std::nullopt;
  std::string_view rest = trimmed.substr(4);
  std::string_view number = scan::takeToken(rest);
  auto count = scan::parseU32(number);
  rest = scan::trim(rest);
  if (!count || (rest != "more" && rest != "common frames omitted")) return std::nullopt;
  return JavaMoreLine{*count};
}

// Every payload fits in the line (no allocation per line beyond its strings).
static_assert(sizeof(JavaFrameLine) <= LinePayload::kInlineBytes);

constinit const LineSyntaxOf<JavaFrameLine> kJavaFrameLine("java_frame", true, parseJavaFrameLine);
constinit const LineSyntaxOf<JavaExceptionLine> kJavaExceptionLine("java_exception", false, parseJavaExceptionLine);
constinit const LineSyntaxOf<JavaMoreLine> kJavaMoreLine("java_more", false, parseJavaMoreLine);

}  // namespace restack::stack
