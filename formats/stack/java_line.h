// Java/Kotlin stack trace lines as Throwable.printStackTrace() and Android print them: three
// syntaxes, "java_frame", "java_exception" and "java_more". Examples in stack_line.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "formats/stack/stack_line.h"

namespace restack::stack {

struct JavaFrameLine {
  std::string class_name;  // "tg.a" (possibly obfuscated)
  std::string method;      // "e"
  std::string file;        // "MethodRecorder.kt", "SourceFile", "Unknown Source", "Native Method"
  std::optional<uint32_t> line;
  std::string module_prefix;  // Java 9+ module/loader prefix before the class ("app//", "java.base@17/")
};

struct JavaExceptionLine {
  std::string prefix;      // "", "Caused by: ", "Suppressed: ", "Exception in thread \"main\" "
  std::string class_name;  // "a.b.c"
  std::string message;     // text after ": " (may be empty); `has_message` tells ": " was present
  bool has_message = false;
};

struct JavaMoreLine {
  uint32_t count = 0;
};

// Each returns std::nullopt when the (trimmed) line is not of its syntax. Exposed for tests and
// fuzzing.
std::optional<JavaFrameLine> parseJavaFrameLine(std::string_view trimmed);
std::optional<JavaExceptionLine> parseJavaExceptionLine(std::string_view trimmed);
std::optional<JavaMoreLine> parseJavaMoreLine(std::string_view trimmed);

extern const LineSyntaxOf<JavaFrameLine> kJavaFrameLine;          // "at pkg.Class.method(File.java:12)"
extern const LineSyntaxOf<JavaExceptionLine> kJavaExceptionLine;  // "Exception in thread …", "Caused by: …"
extern const LineSyntaxOf<JavaMoreLine> kJavaMoreLine;            // "... N more"

inline const JavaFrameLine* asJavaFrame(const StackLine& line) {
  return kJavaFrameLine.payloadOf(line);
}
inline const JavaExceptionLine* asJavaException(const StackLine& line) {
  return kJavaExceptionLine.payloadOf(line);
}
inline const JavaMoreLine* asJavaMore(const StackLine& line) {
  return kJavaMoreLine.payloadOf(line);
}

}  // namespace restack::stack
