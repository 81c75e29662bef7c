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

// A location as the JVM prints it, for the spaced form (Play Console), which V8's "at fn (loc)"
// also has: a file name and at most one ":line", or the JVM's words. V8 prints a line and a
// column, "<anonymous>", "native" or "index N", and URLs; none of those passes.
bool isPlainJavaLocation(std::string_view location) {
  if (location == "Native method" || location == "Native Method" || location == "Unknown Source") return true;
  const size_t colon = location.find(':');
  const std::string_view file = location.substr(0, colon);
  if (colon != std::string_view::npos &&
      (location.find(':', colon + 1) != std::string_view::npos || !scan::parseU32(location.substr(colon + 1)))) {
    return false;
  }
  if (file == "Unknown Source") return true;
  if (file.empty() || file.find_first_of("/<> ") != std::string_view::npos) return false;
  return file == "SourceFile" || file.ends_with(".java") || file.ends_with(".kt");
}

// What a JVM hidden class prints after the '/' of its name: its address in hex ("0x7f3c1c00a000")
// or, on Java 8, a decimal number.
bool isHiddenClassSuffix(std::string_view suffix) {
  if (suffix.starts_with("0x")) return scan::parseHex(suffix).has_value();
  return scan::parseDecimal(suffix).has_value();
}

// Reads "[at ]<module prefix/>class.method(location)" into `frame`, a default JavaFrameLine (left
// partly written when the line is not a Java frame). The class and method are found by one
// backward pass over "prefix/class.method": the method is the bytes a method name may hold
// before the last '.', the class those a class name may hold before the last '/' (neither kind
// holds a '/', and a method name holds no '.'), so any other byte in either makes the line no
// Java frame. That is the same answer as cutting at the last '/' and then the last '.' and
// checking both names, with each byte read once (this runs on every Java line of every stack).
bool readJavaFrameLine(std::string_view trimmed, JavaFrameLine& frame) {
  std::string_view text = trimmed;
  if (text.starts_with("at ")) text = scan::trimLeft(text.substr(3));
  if (text.empty() || text.back() != ')') return false;
  const size_t open = text.find('(');
  if (open == std::string_view::npos || open == 0) return false;
  // Play Console prints a space before the location: "at a.b.c (SourceFile:12)".
  const bool spaced = text[open - 1] == ' ';
  const size_t name_end = spaced ? open - 1 : open;
  const char* const qualified = text.data();
  size_t i = name_end;  // qualified = text[0, name_end)
  while (i > 0 && kNameBytes.in_method[static_cast<unsigned char>(qualified[i - 1])]) --i;
  if (i == 0 || i == name_end || qualified[i - 1] != '.') return false;
  const size_t dot = i - 1;
  while (i > 0 && kNameBytes.in_class[static_cast<unsigned char>(qualified[i - 1])]) --i;
  if (i > 0 && qualified[i - 1] != '/') return false;
  size_t class_begin = i;  // after the module prefix, if any
  if (i > 1 && isHiddenClassSuffix(text.substr(i, dot - i))) {
    // A JVM hidden class (a lambda's proxy) prints its address after a '/', which is part of
    // its name, not a module: "Main$$Lambda$14/0x0000000800c03000.run", Java 8's
    // "Main$$Lambda$1/1831932724.run".
    size_t k = i - 1;
    while (k > 0 && kNameBytes.in_class[static_cast<unsigned char>(qualified[k - 1])]) --k;
    if (k == i - 1 || (k > 0 && qualified[k - 1] != '/')) return false;
    class_begin = k;
  }
  if (class_begin == dot || scan::isDigit(qualified[class_begin]) || qualified[class_begin] == '.' ||
      qualified[dot - 1] == '.') {
    return false;
  }
  // "File.java:12", "SourceFile:3", "Unknown Source", "Native Method", "File.kt".
  std::string_view location = text.substr(open + 1, text.size() - open - 2);
  if (spaced && !isPlainJavaLocation(location)) return false;
  size_t colon = std::string_view::npos;
  // A loop rather than find_first_of, which calls memchr over its set for every byte.
  for (size_t k = 0; k < location.size(); ++k) {
    const char c = location[k];
    if (c == '(' || c == ')') return false;
    if (c == ':') colon = k;
  }
  if (colon != std::string_view::npos) {
    auto line = scan::parseU32(location.substr(colon + 1));
    if (!line) return false;
    frame.line = *line;
    location = location.substr(0, colon);
  }
  // Java 9+ prefixes the class loader and/or module: "app//a.b.c", "java.base@17/java.lang.X".
  // `frame` is fresh (its strings empty): append skips assign's handling of overlapping text.
  if (class_begin > 0) frame.module_prefix.append(qualified, class_begin);
  frame.class_name.append(qualified + class_begin, dot - class_begin);
  frame.method.append(qualified + dot + 1, name_end - dot - 1);
  frame.file.append(location);
  return true;
}

}  // namespace

std::optional<JavaFrameLine> parseJavaFrameLine(std::string_view trimmed) {
  JavaFrameLine frame;
  if (!readJavaFrameLine(trimmed, frame)) return std::nullopt;
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

constinit const LineSyntaxOf<JavaFrameLine> kJavaFrameLine("java_frame", true, readJavaFrameLine);
constinit const LineSyntaxOf<JavaExceptionLine> kJavaExceptionLine("java_exception", false, parseJavaExceptionLine);
constinit const LineSyntaxOf<JavaMoreLine> kJavaMoreLine("java_more", false, parseJavaMoreLine);

}  // namespace restack::stack
