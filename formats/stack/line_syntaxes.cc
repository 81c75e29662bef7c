// The registry of line syntaxes: one line per syntax, tried in this order by parseStackLine
// (stack_line.cc); the first that reads a line claims it. Adding a syntax is its own file(s)
// under formats/stack plus one line here (docs/design.md §10, "Adding a stack kind").
#include "formats/stack/java_line.h"
#include "formats/stack/js_line.h"
#include "formats/stack/native_line.h"
#include "formats/stack/stack_line.h"
#include "formats/stack/thread_note_line.h"

namespace restack::stack {

std::span<const LineSyntax* const> lineSyntaxes() {
  // Order matters where syntaxes overlap. Java and JS frames do not: a Java frame ends in ')'
  // with no byte but name bytes between "at " and its one '(' (java_line.cc), while a JS frame
  // that ends in ')' is V8's "at fn (url:l:c)", whose " (" a Java frame cannot hold, and
  // Firefox and Hermes frames end in a number, "[native code]" or '}'. Java goes first because
  // most lines of the stacks Restack sees are Java's and the V8 reader takes longer to turn one
  // down than the Java reader a JS line. Thread notes go before exception headers, which would
  // read jstack's "java.lang.Thread.State: WAITING" as one. "... N more" and exception headers
  // are the loosest shapes and go last.
  static constexpr const LineSyntax* kSyntaxes[] = {
      &kJavaFrameLine,      // "at pkg.Class.method(File.java:12)"
      &kJsFrameLine,        // V8, Firefox/Safari/JSC, Hermes
      &kNativeLine,         // iOS images, Android native frames and tombstones
      &kThreadNoteLine,     // thread dumps: "- waiting on <0x…> (a X)", "\"main\" prio=5 tid=1 Native"
      &kJavaMoreLine,       // "... N more"
      &kJavaExceptionLine,  // "Caused by: a.b.C: message"
  };
  return kSyntaxes;
}

}  // namespace restack::stack
