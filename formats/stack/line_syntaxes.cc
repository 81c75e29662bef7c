// The registry of line syntaxes: one line per syntax, tried in this order by parseStackLine
// (stack_line.cc); the first that reads a line claims it. Adding a syntax is its own file(s)
// under formats/stack plus one line here (docs/design.md §10, "Adding a stack kind").
#include "formats/stack/java_line.h"
#include "formats/stack/js_line.h"
#include "formats/stack/native_line.h"
#include "formats/stack/stack_line.h"

namespace restack::stack {

std::span<const LineSyntax* const> lineSyntaxes() {
  // Order matters where syntaxes overlap: Java frames start with "at ", like V8 frames; a V8
  // frame has a URL with ':' line and column, which a Java frame never has inside its
  // parentheses, so JS goes first. "... N more" and exception headers are the loosest shapes
  // and go last.
  static constexpr const LineSyntax* kSyntaxes[] = {
      &kJsFrameLine,        // V8, Firefox/Safari/JSC, Hermes
      &kJavaFrameLine,      // "at pkg.Class.method(File.java:12)"
      &kNativeLine,         // iOS images, Android native frames and tombstones
      &kJavaMoreLine,       // "... N more"
      &kJavaExceptionLine,  // "Caused by: a.b.C: message"
  };
  return kSyntaxes;
}

}  // namespace restack::stack
